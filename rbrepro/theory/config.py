"""configs/theory.yaml: which datasets, sigmas, sizes and seeds Theorem 1 is measured on.

    name: theory
    n: 2000                    # training rows subsampled per dataset (the exact kernel is n x n)
    max_R: 1024                # R = 1, 2, 4, ... max_R
    seeds: [0, 1, 2, 3, 4]
    datasets:
      ijcnn1: {sigma: [0.3, 1.58, 10]}   # inverse widths; n, max_R and seeds may be set per dataset

Validated into a TheoryConfig before any work starts; errors name the file, line and key.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rbrepro.yamlconf import ConfigError, Reader, compose

TOP_KEYS = ("name", "description", "n", "max_R", "seeds", "datasets")
DATASET_KEYS = ("sigma", "n", "max_R", "seeds")


@dataclass(frozen=True)
class TheoryDataset:
    name: str
    sigmas: tuple[float, ...]
    n: int
    max_R: int
    seeds: tuple[int, ...]


@dataclass(frozen=True)
class TheoryConfig:
    name: str
    datasets: tuple[TheoryDataset, ...]

    def to_dict(self) -> dict:
        return {"name": self.name, "datasets": {d.name: {"sigma": list(d.sigmas), "n": d.n, "max_R": d.max_R,
                                                         "seeds": list(d.seeds)} for d in self.datasets}}


def parse_theory_config(text: str, file: str = "<config>") -> TheoryConfig:
    rd = Reader(file)
    top = rd.mapping(compose(text, file), "", TOP_KEYS)
    for key in ("name", "datasets"):
        if key not in top:
            raise ConfigError(f"{file}:1: {key}: missing")
    name = rd.string(top["name"], "name")
    n = rd.number(top["n"], "n", integer=True) if "n" in top else 2000
    max_R = rd.number(top["max_R"], "max_R", integer=True) if "max_R" in top else 1024
    seeds = rd.number_list(top["seeds"], "seeds", integer=True, allow_zero=True) if "seeds" in top else (0, 1, 2, 3, 4)
    datasets = []
    for dname, node in rd.mapping(top["datasets"], "datasets", tuple(top["datasets"].value or ())).items():
        path = f"datasets.{dname}"
        own = rd.mapping(node, path, DATASET_KEYS) if node.value is not None else {}
        if "sigma" not in own:
            rd.fail(node, path, "give the sigmas (inverse widths) to measure, e.g. {sigma: [0.3, 1.58, 10]}")
        datasets.append(TheoryDataset(
            dname, rd.number_list(own["sigma"], f"{path}.sigma"),
            rd.number(own["n"], f"{path}.n", integer=True) if "n" in own else n,
            rd.number(own["max_R"], f"{path}.max_R", integer=True) if "max_R" in own else max_R,
            rd.number_list(own["seeds"], f"{path}.seeds", integer=True, allow_zero=True) if "seeds" in own else seeds))
    if not datasets:
        rd.fail(top["datasets"], "datasets", "expected at least one dataset")
    return TheoryConfig(name, tuple(datasets))


def load_theory_config(path: str | Path) -> TheoryConfig:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the config: {exc}") from None
    return parse_theory_config(text, str(path))
