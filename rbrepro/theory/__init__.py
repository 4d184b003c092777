"""Theorem 1 of the paper (§3, eq. 13), measured: objective gaps, kernel errors, kappa and D against R.

diagnostics: the rows; rates: fitted slopes and verdicts; figure: the plot; run: `rbrepro diagnose`.
"""
