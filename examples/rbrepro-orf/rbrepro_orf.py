"""Orthogonal random features (Yu et al., NeurIPS 2016) for the Euclidean Laplacian kernel, as an
rbrepro method from outside the package.

The Euclidean Laplacian kernel exp(-sigma ||x - y||_2) is the characteristic function of a
multivariate Cauchy: omega = sigma g / |s| with g ~ N(0, I_d) and s ~ N(0, 1). Random Fourier
features draw the Gaussian directions g independently; orthogonal random features draw them in
blocks of d orthogonal directions (the Q of a Gaussian matrix's QR, each row given the norm of an
independent Gaussian vector, so each g is still N(0, I_d)), which lowers the variance of the kernel
estimate. Everything else (phases, cosines, the ridge solve) is rbrepro's Random Fourier code.

Installed (`pip install examples/rbrepro-orf`), the method is `orf`:
    rbrepro train digits --method orf --kernel euclidean --R 256 --sigma 0.1
"""

from __future__ import annotations

import numpy as np

from rbrepro.features.random_fourier import RandomFourierFeatures
from rbrepro.models.registry import MethodSpec


class OrthogonalRandomFeatures(RandomFourierFeatures):
    """Random Fourier features whose Gaussian directions come in orthogonal blocks of d."""

    def __init__(self, *, n_components: int = 256, sigma: float = 1.0, kernel: str = "euclidean", random_state=None,
                 memory_limit_gb=None):
        super().__init__(n_components=n_components, sigma=sigma, kernel=kernel, random_state=random_state,
                         memory_limit_gb=memory_limit_gb)

    def _frequencies(self, rng, d: int) -> np.ndarray:
        if self.kernel != "euclidean":
            raise ValueError("orthogonal random features approximate the euclidean Laplacian kernel; kernel "
                             f"{self.kernel!r} needs method rf")
        R = self.n_components
        blocks = []
        for _ in range(-(-R // d)):
            q, _ = np.linalg.qr(rng.standard_normal((d, d)))
            norms = np.linalg.norm(rng.standard_normal((d, d)), axis=1)
            blocks.append(q.T * norms[:, None])  # rows: orthogonal, each with a Gaussian vector's norm
        g = np.vstack(blocks)[:R].T  # d x R
        s = np.abs(rng.standard_normal(R))
        return self.sigma * g / np.maximum(s, np.finfo(float).tiny)


METHOD = MethodSpec(
    name="orf",
    title="orthogonal random features",
    role="baseline",
    r_meaning="features",
    r_parameter="n_components",
    default_solver="direct",
    solvers=("default", "cg", "pcg", "direct"),
    kernels=("euclidean",),
    memory="features",
    features=OrthogonalRandomFeatures,
    center=True,
    style=("ORF", "tab:cyan", "v"),
)
