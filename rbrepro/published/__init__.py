"""The authors' published figure data, and our results put beside it (docs/design.md §2a, §4).

The numbers behind the paper's Figures 3 and 5, as the authors committed them to their
experiment repository (teddylfwu/RandomBinning at 6a42f52, ExptResults/plotdata_02012016/
L2R_Ridge/), are shipped as one table, `authors_figure_data.csv`, built from those files by
`python -m rbrepro.published DIR` and checked against them by the tests. They are for
comparing and drawing beside ours, never for choosing anything (the comparison itself is
`rbrepro.report.fidelity`).

Conventions of the table (read from the authors' code):
- `sigma` is in rbrepro's terms, an inverse width: RB's as published, the baselines' (RF,
  Nyström, block, exact; RLCM's IsotropicLaplace, the Euclidean kernel) is 1 / width;
- `method` is rbrepro's name (rb, rf, nystrom, block, exact), `dataset` the registry's;
- `panel` is fig5 (one row per R at the authors' chosen sigma) or fig3 (RB train and test
  performance per sigma at R = 64, 128, 256, and the exact kernel's best test value);
- the exact kernel's R is 0, as in our rows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from rbrepro.models.registry import REFERENCE, SUBJECT

TABLE = Path(__file__).with_name("authors_figure_data.csv")
SOURCE = "teddylfwu/RandomBinning@6a42f52fe13db1d4fb883df2d41255edb602e95e ExptResults/plotdata_02012016/L2R_Ridge"
METHODS = {"RandBin": "rb", "FOURIER": "rf", "NYSTROM": "nystrom", "BLOCKDIAG": "block", "STANDARD": "exact"}
DATASETS = {"cod_rna": "cod_rna", "covtype-mult": "covtype-mult"}  # the rest keep their names


def _read_plotdata(path: Path) -> pd.DataFrame:
    """One whitespace table; the STANDARD files have one value more than header names (the
    memory estimate N)."""
    lines = [ln.split() for ln in path.read_text().splitlines() if ln.strip()]
    header, rows = lines[0], lines[1:]
    if rows and len(rows[0]) == len(header) + 1:
        header = [*header, "MemEst"]
    return pd.DataFrame([[float(v) for v in r] for r in rows], columns=header)


def build_table(directory: str | Path) -> pd.DataFrame:
    """The shipped table from the authors' folder layout (see the module docstring)."""
    directory = Path(directory)
    parts = []
    for folder, panel in (("Perf_TrTime_Rank_AllMethods", "fig5"), ("TrTime_Perf_AllMethods", "fig5-memory"),
                          ("TrainTest_Accu_Time_Sigma", "fig3")):
        for path in sorted((directory / folder).glob("*.plotdata")):
            stem = path.stem.split("_")
            prefix = stem[0]
            what = stem[-1]  # Perf, TrainPerf or TestPerf
            dataset = "_".join(stem[3 if "Laplace" in stem else 2:-1])
            frame = _read_plotdata(path)
            method = METHODS[prefix]
            width_sigma = method != SUBJECT
            out = pd.DataFrame({
                "panel": panel, "method": method, "dataset": DATASETS.get(dataset, dataset),
                "split": "train" if what == "TrainPerf" else "test",
                "R": 0 if method == REFERENCE else frame["R"].astype(int),
                "D": frame["D"] if "D" in frame else np.nan,
                "sigma": 1.0 / frame["Sigma"] if width_sigma else frame["Sigma"],
                "published_sigma": frame["Sigma"], "lam": frame["Lambda"], "perf": frame["Perf"],
                "train_s": frame["TrainTime"], "test_s": frame["TestTime"],
                "mem_est": frame["MemEst"] if "MemEst" in frame else np.nan})
            parts.append(out)
    table = pd.concat(parts, ignore_index=True)
    return table.sort_values(["panel", "dataset", "method", "split", "R", "sigma"], kind="stable",
                             ignore_index=True)


def published_table() -> pd.DataFrame:
    return pd.read_csv(TABLE, comment="#")


def main(argv=None) -> None:  # pragma: no cover - maintenance: rebuild the shipped table
    import sys

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        raise SystemExit("usage: python -m rbrepro.published AUTHORS_FIGURE_DATA_DIR")
    table = build_table(args[0])
    with open(TABLE, "w") as fh:
        fh.write(f"# The authors' published figure data ({SOURCE}), in rbrepro's conventions: see rbrepro/published\n")
        table.to_csv(fh, index=False, float_format="%.10g")
    print(f"{len(table)} rows -> {TABLE}")


if __name__ == "__main__":  # pragma: no cover
    main()
