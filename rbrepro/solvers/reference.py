"""Plain-numpy reference of one sequential RCD epoch on a dense Z (for tests)."""

import numpy as np

CURV = {"square": 1.0, "squared_hinge": 1.0, "logistic": 0.25}


def dloss(loss, yhat, y):
    if loss == "square":
        return yhat - y
    if loss == "squared_hinge":
        return -y * np.maximum(0.0, 1.0 - y * yhat)
    return -y / (1.0 + np.exp(y * yhat))


def rcd_epoch(Z, y, w, lam, loss, order):
    """Alg. 2 steps (eq. 24-26) over `order`, in Python; returns the new w."""
    Z = np.asarray(Z, dtype=np.float64)
    w = np.array(w, dtype=np.float64)
    yhat = Z @ w
    n = len(y)
    for j in order:
        col = Z[:, j]
        M = CURV[loss] * (col @ col) / n
        if M == 0:
            continue
        g = dloss(loss, yhat, y) @ col / n
        v = w[j] - g / M
        new = np.sign(v) * max(abs(v) - lam / M, 0.0)
        yhat += (new - w[j]) * col
        w[j] = new
    return w
