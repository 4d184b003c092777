"""How the synthetic shapes bin, beside the authors' real sets.

The cost of RB on a set follows from how its rows fall into bins: D, the bins per grid, at each
sigma. The authors' figure data records that for their own training rows: every Fig. 3 point
(TrainPerf, each R they ran) has the D their grids made on covtype, SUSY, acoustic and cod_rna.
This replays their very grids (`draws="authors"`, bit for bit: the only difference left is the
data) on the training rows of each registered shape and writes, per sigma, our D beside theirs:

    python -m bench.shape_binning [--out results/shape-binning]      (make shape-binning)

`rbrepro report` sets the table beside the paper's-scale runs. The generator's three binning knobs
per shape (rbrepro.data.synthetic.BINNING) were fitted to these same counts, so agreement here
shows how close the fit came, not an independent check; only D, a property of the data, was used,
never an accuracy or a time. `--search SHAPE` reruns that fit over the candidates below and
prints each one's ratios; `--learnability` prints RB against a linear model on each shape's label
(neither writes anything).

Sigmas whose published D would need more than MAX_D bins are left out (their hash tables would not
fit in 24 GB), and so are those where it is under 3 bins a grid or over 30 % of the rows a grid
(no signal: one bin, or nearly every row its own): `informative` is false there.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import os
import time
from pathlib import Path

import numpy as np

from rbrepro.data.load import load_dataset
from rbrepro.data.registry import REGISTRY, shape_dataset
from rbrepro.data.scaling import MinMaxScaler
from rbrepro.data.synthetic import BINNING, SHAPES, Shape, generate, shape_digest
from rbrepro.features import RandomBinningFeatures
from rbrepro.provenance import provenance
from rbrepro.published import published_table

OUT = Path("results") / "shape-binning"
CSV_NAME = "bins.csv"
#: the grids replayed: the authors' Fig. 3 R (SUSY at 64, whose 4 M rows make R = 128 slow to search)
GRIDS = {"covtype": 128, "susy": 64, "acoustic": 128, "cod_rna": 128}
MAX_D = 40_000_000
INFORMATIVE = (3.0, 0.3)  # bins a grid at least, share of the rows a grid at most
FIELDS = ["shape", "dataset", "paper_set", "generator_version", "shape_digest", "R", "sigma", "draws", "n_train", "D", "authors_D",
          "ratio", "informative", "when", "rbrepro_version", "git_commit", "git_dirty", "numpy", "numba", "cpu",
          "host"]
#: the candidates `--search` tries, the fitted values among them (about 10 s each on covtype, two
#: minutes on SUSY's 4 M rows)
CANDIDATES = [{"latent_dims": 0, "uniformize": u} for u in (0.0, 0.3)] + [
    {"latent_dims": k, "own_share": e, "uniformize": u}
    for k in (2, 4, 8) for e in (0.05, 0.1, 0.3) for u in (0.0, 0.3)]


def authors_bins(paper_set: str, R: int) -> dict[float, float]:
    """sigma -> D of the authors' training rows at R (their Fig. 3 TrainPerf data)."""
    table = published_table()
    rows = table[(table["panel"] == "fig3") & (table["split"] == "train") & (table["method"] == "rb")
                 & (table["dataset"] == paper_set) & (table["R"] == R)]
    return {float(s): float(d) for s, d in zip(rows["sigma"], rows["D"]) if d <= MAX_D}


def informative(authors_D: float, R: int, n_train: int) -> bool:
    low, high = INFORMATIVE
    return low <= authors_D / R <= high * n_train


def bins(X: np.ndarray, R: int, sigmas) -> dict[float, int]:
    """sigma -> D of the authors' grids on the rows X."""
    return {s: int(RandomBinningFeatures(n_grids=R, sigma=s, draws="authors").fit(X).n_bins_) for s in sigmas}


def measure(shape: str) -> list[dict]:
    """One row per sigma: the registered shape's training rows binned by the authors' grids."""
    spec = SHAPES[shape]
    R = GRIDS[shape]
    theirs = authors_bins(spec.paper_set, R)
    data = load_dataset(shape_dataset(shape), os.environ.get("RBREPRO_DATA"), progress=False)
    prov = provenance()
    rows = []
    for sigma, D in bins(data.X_train, R, sorted(theirs)).items():
        row = {"shape": shape, "dataset": shape_dataset(shape), "paper_set": spec.paper_set,
               "generator_version": spec.version, "shape_digest": shape_digest(spec), "R": R, "sigma": sigma, "draws": "authors",
               "n_train": data.X_train.shape[0], "D": D, "authors_D": theirs[sigma], "ratio": D / theirs[sigma],
               "informative": informative(theirs[sigma], R, data.X_train.shape[0]),
               "when": time.strftime("%Y-%m-%dT%H:%M:%S"), **{k: prov.get(k, "") for k in FIELDS if k in prov}}
        print(f"{shape:9s} R={R} sigma={sigma:<6g} D={D:>12,} authors' {theirs[sigma]:>12,.0f} "
              f"ratio {D / theirs[sigma]:.2f}{'' if row['informative'] else '  (not informative)'}", flush=True)
        rows.append(row)
    return rows


def write(rows: list[dict], out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / CSV_NAME
    part = path.with_suffix(".part")
    with open(part, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    part.replace(path)
    return path


def training_rows(name: str, shape: Shape) -> np.ndarray:
    """The training rows `load_dataset` makes of the shape registered as `name` when it is made as
    `shape`: all rows generated from seed 0, the registry's seeded split, min-max scaled on them."""
    X, _ = generate(shape, seed=0)
    order = np.random.default_rng(REGISTRY[shape_dataset(name)].split_seed).permutation(len(X))
    X = X[np.sort(order[:shape.n_train])]
    return MinMaxScaler.fit(X).transform(X)


def search(shape: str, candidates=CANDIDATES) -> None:
    """Each candidate's ratios to the authors' D over the informative sigmas, and the rms of their logs.
    The generator's own random draws (its mixing and mixtures) move D too, so every candidate keeps
    the shape's seed and version: the fit is of the set that is registered."""
    base = SHAPES[shape]
    R = GRIDS[shape]
    theirs = {s: d for s, d in authors_bins(base.paper_set, R).items() if informative(d, R, base.n_train)}
    print(f"{shape}: sigmas {sorted(theirs)}; fitted {BINNING[shape]}")
    for knobs in candidates:
        X = training_rows(shape, dataclasses.replace(base, **knobs))
        ratios = np.array([ours / theirs[s] for s, ours in bins(X, R, sorted(theirs)).items()])
        print(f"{knobs}: rms log ratio {np.sqrt(np.mean(np.log(ratios) ** 2)):.3f}, ratios "
              + " ".join(f"{r:.2f}" for r in ratios), flush=True)


LEARN_SIGMAS = (0.3, 1.0, 3.0, 10.0)


def learnability(n_train: int = 10_000, n_held: int = 2_000, R: int = 128) -> None:
    """Whether each shape's label needs a kernel: RB (sigma chosen on validation rows) against
    scikit-learn's RidgeClassifier, test accuracy on the first rows of each shape."""
    from sklearn.linear_model import RidgeClassifier

    from rbrepro.models import RandomBinningClassifier

    for shape, spec in SHAPES.items():
        if shape not in BINNING:
            continue
        X, y = generate(spec, seed=0, n_rows=n_train + 2 * n_held)
        fit, val, test = slice(0, n_train), slice(n_train, n_train + n_held), slice(n_train + n_held, None)
        scores = {s: RandomBinningClassifier(n_grids=R, sigma=s, random_state=0).fit(X[fit], y[fit]).score(X[val], y[val])
                  for s in LEARN_SIGMAS}
        sigma = max(scores, key=scores.get)
        rb = RandomBinningClassifier(n_grids=R, sigma=sigma, random_state=0).fit(X[fit], y[fit]).score(X[test], y[test])
        linear = RidgeClassifier().fit(X[fit], y[fit]).score(X[test], y[test])
        print(f"{shape:9s} RB R={R} sigma={sigma:g} (chosen on validation rows): test accuracy {rb:.3f}; "
              f"RidgeClassifier {linear:.3f}", flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--search", choices=sorted(BINNING), help="refit one shape's knobs (prints; writes nothing)")
    parser.add_argument("--learnability", action="store_true",
                        help="RB against a linear model on each shape's label (prints; writes nothing)")
    args = parser.parse_args(argv)
    if args.search:
        search(args.search)
        return
    if args.learnability:
        learnability()
        return
    rows = [row for shape in GRIDS for row in measure(shape)]
    print(f"wrote {write(rows, args.out)}")


if __name__ == "__main__":
    main()
