"""Sets made on this machine instead of fetched: scikit-learn's bundled ones and the synthetic
shapes of rbrepro.data.synthetic, with what their fingerprint follows from."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from rbrepro.data.libsvm import Parsed, load_cache, save_cache
from rbrepro.data.records import file_lock
from rbrepro.data.registry import DatasetSpec

log = logging.getLogger(__name__)


def generated_rows(spec: DatasetSpec, root: Path) -> Parsed:
    """All rows of a set made here: scikit-learn's bundled one, or a synthetic shape (generated once,
    then read from the hash-checked cache, like a parsed file)."""
    kind, _, what = spec.source.partition(":")
    if kind == "sklearn":
        import sklearn.datasets

        X, y = getattr(sklearn.datasets, what)(return_X_y=True)
        return Parsed(np.ascontiguousarray(X, dtype=np.float32), y.astype(np.float64))
    from rbrepro.data import synthetic

    origin = generated_origin(spec)
    shape = synthetic.SHAPES[what]
    cache = root / "cache" / f"synthetic-{what}-v{shape.version}-{synthetic.shape_digest(shape)}.npz"
    cache.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(root / "locks" / (cache.name + ".lock")):
        parsed = load_cache(cache, origin)
        if parsed is None:
            log.info("%s: generating %s rows (seed 0)", spec.name, f"{spec.n_train + spec.n_test:,}")
            X, y = synthetic.generate(synthetic.SHAPES[what], seed=0)
            parsed = Parsed(X, y)
            save_cache(parsed, cache, origin)
    return parsed


def generated_origin(spec: DatasetSpec) -> str:
    """What a generated set's bytes follow from (its fingerprint's part in place of a file hash)."""
    if spec.source.startswith("sklearn:"):
        import sklearn

        return f"{spec.source} scikit-learn {sklearn.__version__}"
    from rbrepro.data.synthetic import SHAPES, shape_digest

    shape = SHAPES[spec.source.partition(":")[2]]
    return f"{spec.source} generator v{shape.version} seed 0 shape {shape_digest(shape)}"
