"""The kernels exp(-sigma d(x, y)), each declared once: a KernelSpec says its distance, its kernel
matrix (features.laplacian computes K(A, B) with it in row blocks: the exact kernel, independent
blocks, Nystrom) and the frequencies of its Fourier transform (Random Fourier features).

The built-in ones are named in vocabulary.KERNELS (what the command line and configs offer); a
kernel is its functions and one `register_kernel(KernelSpec(...))`, after which the feature maps and
the kernel estimators take it by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rbrepro.errors import InvalidParameter
from rbrepro.features._laplacian_kernels import euclidean_laplacian_matrix, laplacian_matrix
from rbrepro.vocabulary import KERNELS


@dataclass(frozen=True, kw_only=True)
class KernelSpec:
    name: str
    distance: str                    # d(x, y) in symbols, for messages and docs
    #: (A, B, sigma, out): out[i, j] = exp(-sigma d(A_i, B_j)) for dense float64 rows A and B
    matrix: Callable
    #: (rng, d, R, sigma): d x R frequencies whose characteristic function is exp(-sigma d)
    frequencies: Callable


def cauchy_frequencies(rng, d: int, R: int, sigma: float) -> np.ndarray:
    """The L1 kernel's: independent Cauchy(0, sigma) coordinates (a product kernel)."""
    return sigma * rng.standard_cauchy((d, R))


def multivariate_cauchy_frequencies(rng, d: int, R: int, sigma: float) -> np.ndarray:
    """The Euclidean kernel's: sigma g / |s|, g ~ N(0, I), s ~ N(0, 1) (as the authors' library draws)."""
    g = rng.standard_normal((d, R))
    s = np.abs(rng.standard_normal(R))
    return sigma * g / np.maximum(s, np.finfo(float).tiny)


BUILT_IN = (
    KernelSpec(name="l1", distance="||x - y||_1", matrix=laplacian_matrix, frequencies=cauchy_frequencies),
    KernelSpec(name="euclidean", distance="||x - y||_2", matrix=euclidean_laplacian_matrix,
               frequencies=multivariate_cauchy_frequencies),
)
#: name -> KernelSpec: the built-in kernels (in vocabulary.KERNELS' order) and those registered
KERNEL_SPECS: dict[str, KernelSpec] = {spec.name: spec for spec in BUILT_IN}


def register_kernel(spec: KernelSpec) -> KernelSpec:
    """Add a kernel (refused where its name is taken or a function is missing)."""
    if spec.name in KERNEL_SPECS:
        raise InvalidParameter(f"kernel {spec.name!r} is registered already")
    if not (callable(spec.matrix) and callable(spec.frequencies)):
        raise InvalidParameter(f"kernel {spec.name!r} needs a matrix and a frequencies function")
    KERNEL_SPECS[spec.name] = spec
    return spec


def unregister_kernel(name: str) -> None:
    """Remove a registered kernel (the built-in ones stay)."""
    if name in KERNELS:
        raise InvalidParameter(f"kernel {name!r} is built in")
    KERNEL_SPECS.pop(name, None)


def kernel_spec(kernel) -> KernelSpec:
    """The KernelSpec of `kernel`, or InvalidParameter naming the kernels there are."""
    if not isinstance(kernel, str) or kernel not in KERNEL_SPECS:
        raise InvalidParameter(f"kernel must be one of {tuple(KERNEL_SPECS)}, got {kernel!r}")
    return KERNEL_SPECS[kernel]
