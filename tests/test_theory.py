"""Theorem 1 diagnostics (rbrepro.theory): gaps, kernel errors, kappa, slopes, and the end-to-end run."""

import numpy as np
import pandas as pd
import pytest

from rbrepro.features import RandomBinningFeatures
from rbrepro.features.laplacian import laplacian_kernel
from rbrepro.theory import diagnostics as dg
from rbrepro.theory.rates import bootstrap_slope, classify, fit_rates, verdicts


def _points(n, d, seed):
    return np.random.default_rng(seed).random((n, d))


@pytest.mark.parametrize("method", ["rb", "rf", "nystrom"])
def test_kernel_errors_match_brute_force(method):
    X, sigma = _points(100, 3, 0), 1.3  # 100 > 64 rows: the Lanczos path of spectral_norm
    K = laplacian_kernel(X, X, sigma, kernel="l1")
    np.testing.assert_allclose(K, np.exp(-sigma * np.abs(X[:, None] - X[None]).sum(-1)), rtol=1e-12)
    Z, _ = dg.feature_matrix(method, X, sigma, 8, seed=3)
    Zd = Z.toarray() if hasattr(Z, "toarray") else Z
    G = dg.gram(Z)
    np.testing.assert_allclose(G, Zd @ Zd.T, atol=1e-12)
    E = K - Zd @ Zd.T
    got = dg.kernel_errors(K, G, np.linalg.norm(K), dg.spectral_norm(K))
    assert got["fro_rel"] == pytest.approx(np.sqrt((E ** 2).sum() / (K ** 2).sum()), rel=1e-10)
    assert got["spec_rel"] == pytest.approx(np.linalg.norm(E, 2) / np.linalg.norm(K, 2), rel=1e-6)
    assert got["max_abs"] == pytest.approx(max(abs(v) for v in E.ravel()), rel=1e-12)


def test_gap_is_the_difference_of_the_two_minimized_objectives():
    """The closed forms (lam/2) y^T (G + N lam I)^-1 y and the cancellation-free gap agree with the
    primal objectives of eq. 1 minimized directly (function space for K, w space for Z)."""
    X, sigma, lam = _points(80, 3, 1), 2.0, 1e-3
    y = np.where(X[:, 0] + X[:, 1] > 1, 1.0, -1.0)
    n = len(y)
    K = laplacian_kernel(X, X, sigma, kernel="l1")
    alpha = np.linalg.solve(K + n * lam * np.eye(n), y)
    F_K = 0.5 * lam * alpha @ K @ alpha + 0.5 / n * np.sum((K @ alpha - y) ** 2)
    for method in ("rb", "rf", "nystrom"):
        Z, _ = dg.feature_matrix(method, X, sigma, 16, seed=0)
        Zd = Z.toarray() if hasattr(Z, "toarray") else Z
        w = np.linalg.solve(Zd.T @ Zd + n * lam * np.eye(Zd.shape[1]), Zd.T @ y)
        F_Z = 0.5 * lam * w @ w + 0.5 / n * np.sum((Zd @ w - y) ** 2)
        G = dg.gram(Z)
        a = dg.dual_solution(G, y, n * lam, Z)
        np.testing.assert_allclose(a, dg.dual_solution(G, y, n * lam), rtol=1e-9, atol=1e-12)  # primal = dual
        assert dg.optimal_objective(y, a, lam) == pytest.approx(F_Z, rel=1e-9)
        assert dg.objective_gap(K, G, alpha, a, lam) == pytest.approx(F_Z - F_K, rel=1e-7, abs=1e-14)
        if method == "nystrom":  # Z Z^T <= K: the gap cannot be negative
            assert F_Z - F_K > 0


def test_gap_vanishes_when_rb_puts_every_point_in_its_own_bin():
    """Very large sigma: one bin per point in every grid, so Z Z^T = I, and K = I as well."""
    X, sigma = _points(60, 3, 2), 1e5
    K = laplacian_kernel(X, X, sigma, kernel="l1")
    assert np.abs(K - np.eye(len(X))).max() < 1e-12
    y = np.where(X[:, 2] > 0.5, 1.0, -1.0)
    frame = dg.diagnostics(X, y, dataset="toy", sigmas=(sigma,), Rs=(1, 4), seeds=(0, 1), methods=("rb",))
    assert (frame["D"] == len(X) * frame["R"]).all()
    assert frame["rel_gap"].abs().max() < 1e-8
    assert frame["fro_rel"].max() < 1e-8 and frame["max_abs"].max() < 1e-8
    assert np.allclose(frame["kappa"], len(X)) and np.allclose(frame["D_over_kappa_R"], 1.0)


def test_kappa_is_eq10_and_lower_bounds_the_bins_per_grid():
    X, n = _points(150, 3, 3), 150
    fm = RandomBinningFeatures(n_grids=12, sigma=2.5, random_state=4)
    Z = fm.fit_transform(X).toarray() * np.sqrt(12)
    kappas, bins = [], []
    for lo, hi in zip(fm.column_offsets_[:-1], fm.column_offsets_[1:]):
        counts = Z[:, lo:hi].sum(axis=0)
        kappas.append(1.0 / (counts.max() / n))  # kappa_delta = 1 / max_b nu_b (eq. 9-10)
        bins.append(hi - lo)
    assert fm.kappa_ == pytest.approx(np.mean(kappas))
    assert all(b >= k for b, k in zip(bins, kappas))
    assert fm.n_bins_ / (fm.kappa_ * 12) >= 1


def test_rf_frobenius_error_halves_when_R_quadruples():
    """E ||K - Z Z^T||_F^2 = V / R for iid features: 4x the features, about half the error."""
    X, sigma = _points(50, 3, 5), 1.0
    K = laplacian_kernel(X, X, sigma, kernel="l1")
    K_fro, K_spec = np.linalg.norm(K), dg.spectral_norm(K)

    def mean_error(R):
        return np.mean([dg.kernel_errors(K, dg.gram(dg.feature_matrix("rf", X, sigma, R, seed)[0]), K_fro,
                                         K_spec)["fro_rel"] for seed in range(60)])

    assert 1.6 < mean_error(32) / mean_error(128) < 2.5


def _synthetic(slope, noise, seed, n_seeds=10):
    rng = np.random.default_rng(seed)
    rows = [{"dataset": "syn", "sigma": 1.0, "method": "rf", "R": R, "seed": s, "kappa": np.nan,
             "gap": 3.0 * R ** slope * np.exp(noise * rng.standard_normal())}
            for R in 2 ** np.arange(11) for s in range(n_seeds)]
    frame = pd.DataFrame(rows)
    for err in ("fro_rel", "spec_rel", "max_abs"):
        frame[err] = frame["R"] ** -0.5
    return frame


def test_slope_fit_recovers_a_known_rate():
    frame = _synthetic(-1.0, 0.2, seed=0)
    rates = fit_rates(frame, n_boot=400, seed=1)
    gap = rates[(rates["quantity"] == "gap")].iloc[0]
    assert gap["lo"] <= -1.0 <= gap["hi"] and abs(gap["slope"] + 1) < 0.05
    assert gap["hi"] - gap["lo"] < 0.2
    fro = rates[(rates["quantity"] == "fro_rel")].iloc[0]
    assert fro["slope"] == pytest.approx(-0.5)
    assert classify(gap["lo"], gap["hi"], -1.0) == "as claimed"
    assert classify(-0.6, -0.5, -1.0) == "slower" and classify(-2.0, -1.8, -1.0) == "faster"
    assert classify(-1.5, -0.2, -1.0) == "inconclusive" and classify(np.nan, -0.2, -1.0) == "no fit"
    again = fit_rates(frame, n_boot=400, seed=1)
    pd.testing.assert_frame_equal(rates, again)  # the bootstrap is seeded


def test_nonpositive_gaps_are_counted_and_left_out():
    frame = _synthetic(-1.0, 0.1, seed=2, n_seeds=4)
    frame.loc[frame["R"] == 1024, "gap"] = -1e-6  # every seed: the per-R mean is negative
    frame.loc[(frame["R"] == 512) & (frame["seed"] == 0), "gap"] = 0.0
    fit = fit_rates(frame, n_boot=200, seed=0)
    gap = fit[fit["quantity"] == "gap"].iloc[0]
    assert gap["n_dropped"] == 1 and gap["n_nonpositive"] == 5 and gap["n_points"] == 5
    assert np.isfinite(gap["slope"]) and abs(gap["slope"] + 1) < 0.1
    Y = np.array([[1.0, 2.0], [-1.0, -2.0]])
    assert np.isnan(bootstrap_slope(Y, np.array([[1.0, 1.0], [2.0, 2.0]]), n_boot=10)["slope"])  # 1 point left


def test_diagnose_end_to_end_on_digits(tmp_path):
    from rbrepro.theory.figure import plot_theory
    from rbrepro.theory.run import diagnose, summary_lines

    seen = []
    frame = diagnose("digits", n=200, sigmas=(0.1,), Rs=(1, 4, 16), seeds=(0, 1),
                     progress=lambda done, total: seen.append((done, total)))
    assert len(frame) == 3 * 3 * 2 and seen[-1] == (18, 18)
    for column in dg.COLUMNS + ("git_commit", "numpy"):
        assert column in frame
    assert set(frame["method"]) == {"rb", "rf", "nystrom"} and (frame["n"] == 200).all()
    assert np.isfinite(frame[["gap", "fro_rel", "spec_rel", "max_abs"]].to_numpy()).all()
    rb = frame[frame["method"] == "rb"]
    assert (rb["kappa"] >= 1).all() and (rb["D_over_kappa_R"] >= 1).all()
    assert (frame.loc[frame["method"] == "nystrom", "gap"] > -1e-12).all()
    assert frame["lam"].iloc[0] == pytest.approx(dg.RIDGE / 200)
    checks = verdicts(frame)
    assert len(checks) == 1 and checks["rb_gap"].iloc[0] in {"as claimed", "faster", "slower", "inconclusive", "no fit"}
    lines = summary_lines(frame)
    assert any("sigma=0.1" in line for line in lines) and any("RB vs RF" in line for line in lines)
    paths = plot_theory(frame, tmp_path / "theory")
    assert [p.suffix for p in paths] == [".png", ".pdf"] and all(p.stat().st_size > 0 for p in paths)
    assert not list(tmp_path.glob(".*.part"))


def test_the_diagnose_command_writes_its_rows_and_figure_and_prints_the_slopes(tmp_path):
    from typer.testing import CliRunner

    from rbrepro.cli import app

    out = tmp_path / "diag"
    result = CliRunner().invoke(app, ["diagnose", "digits", "--n", "120", "--max-R", "8", "--seeds", "2",
                                      "--sigma", "0.3", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "RB gap vs kappa R:" in result.output and "fro_rel vs R:" in result.output
    frame = pd.read_csv(out / "diagnostics.csv")
    assert sorted(frame["R"].unique()) == [1, 2, 4, 8] and set(frame["seed"]) == {0, 1}
    assert (out / "theory.png").stat().st_size > 0 and (out / "theory.pdf").exists()
    bad = CliRunner().invoke(app, ["diagnose", "digits", "--sigma", "-1", "--out", str(out)])
    assert bad.exit_code == 2 and "Traceback" not in bad.output
