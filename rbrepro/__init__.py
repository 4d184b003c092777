"""rbrepro: reproduce 'Revisiting Random Binning Features' (Wu, Yen, Chen, Yan; KDD 2016)."""

import os as _os

__version__ = "0.1.0"

#: OpenBLAS's idle worker threads spin for 2^OPENBLAS_THREAD_TIMEOUT cycles (default 2^28, about 0.1 s)
#: before they sleep. Spinning on the cores numba's kernels run on, they halved the speed of the kernels
#: that followed any BLAS call, even a norm (a cadata fit at R = 64 took 0.05-0.12 s instead of 0.05 s,
#: varying run to run). 2^4 cycles: they sleep at once. OpenBLAS reads it when it loads, so it is set
#: here, before rbrepro imports numpy; a value already in the environment is kept.
BLAS_THREAD_TIMEOUT = "4"
_os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", BLAS_THREAD_TIMEOUT)
