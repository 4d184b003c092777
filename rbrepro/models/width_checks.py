"""What the estimators say, once per fit, when the kernel width cannot work for the inputs given.

Two causes, both named with their remedy (a `WidthWarning`, which the command line prints too):
- columns on widely different scales (the largest absolute value of one column more than
  SPREAD_RATIO times another's): the L1 distance, and so the kernel, sees only the widest columns;
- Random Binning's grids too fine for the rows: D, the bins the training rows fill, above
  TOO_FINE_SHARE of R x N, so most rows sit alone in their bins in most grids and the model cannot
  generalize (unscaled inputs, or sigma too large for them).
"""

from __future__ import annotations

import warnings

import numpy as np

#: D above this share of R x N: most rows share no bin with any other row in most grids
TOO_FINE_SHARE = 0.5
#: columns whose largest absolute values differ by more than this factor are on different scales
SPREAD_RATIO = 100.0
REMEDY = ("scale each column to [-1, 1] (sklearn's MaxAbsScaler in a Pipeline; it keeps sparse input "
          "sparse), or give a smaller sigma (sigma='scale' takes one from the data)")


class WidthWarning(UserWarning):
    """The kernel width and the inputs do not fit together: the model is likely useless."""


def spread_message(X) -> str | None:
    """The warning for columns on widely different scales, or None."""
    top = np.asarray(abs(X).max(axis=0).todense() if hasattr(X, "todense") else abs(X).max(axis=0)).ravel()
    top = top[top > 0]
    if top.size < 2 or top.max() <= SPREAD_RATIO * top.min():
        return None
    return (f"the input columns are on widely different scales (largest absolute values {top.min():.3g} to "
            f"{top.max():.3g}): the L1 kernel sees only the widest columns; {REMEDY}")


def too_fine_message(D: int, R: int, n: int, sigma: float) -> str | None:
    """The warning for Random Binning grids too fine for the rows (D near R x N), or None."""
    if n < 2 or D <= TOO_FINE_SHARE * R * n:
        return None
    return (f"Random Binning at sigma={sigma:g} filled D = {D:,} bins, {D / (R * n):.0%} of R x N = {R * n:,}: "
            f"most rows share no bin with another row in most grids, so the model cannot generalize; the "
            f"inputs are unscaled or sigma is too large for them: {REMEDY}")


def warn(message: str | None) -> None:
    if message:
        warnings.warn(message, WidthWarning, stacklevel=3)
