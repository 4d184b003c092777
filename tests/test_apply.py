"""A saved model applied to new rows: LIBSVM or CSV, labelled or not, scores, and the Python
save/load round trip."""

from __future__ import annotations

import io

import numpy as np
import pytest
from sklearn.datasets import load_digits

from rbrepro import models
from rbrepro.models.apply import _Unlabelled, apply_model, prediction_lines


@pytest.fixture(scope="module")
def digits_model(tmp_path_factory):
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    model = models.RandomBinningClassifier(n_grids=32, sigma=0.3, random_state=0).fit(X[:1200], y[:1200])
    path = model.save(tmp_path_factory.mktemp("m") / "digits.npz")
    return model, path, X[1200:], y[1200:]


def _libsvm(X, y=None) -> str:
    rows = []
    for i, x in enumerate(X):
        pairs = " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(x) if v)
        rows.append(pairs if y is None else f"{int(y[i])} {pairs}")
    return "\n".join(rows) + "\n"


def test_save_then_load_gives_the_same_predictions(digits_model):
    model, path, X, _ = digits_model
    again = models.load(path)  # the whole model: the estimator and what the file says of its rows
    assert type(again.estimator) is type(model) and again.estimator.get_params() == model.get_params()
    assert again.scaler is None and again.task == "multiclass" and again.n_features_in_ == X.shape[1]
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    np.testing.assert_allclose(again.decision_function(X), model.decision_function(X))


def test_labelled_unlabelled_and_csv_rows_predict_alike(digits_model, tmp_path):
    model, path, X, y = digits_model
    labelled, bare = tmp_path / "t.txt", tmp_path / "bare.txt"
    labelled.write_text(_libsvm(X, y))
    bare.write_text(_libsvm(X))
    with_labels, without = apply_model(path, labelled), apply_model(path, bare)
    np.testing.assert_array_equal(with_labels.predicted, model.predict(X))
    np.testing.assert_array_equal(without.predicted, with_labels.predicted)
    assert with_labels.value == pytest.approx(100 * np.mean(model.predict(X) == y)) and without.value is None
    assert without.why_no_metric == "the file has no labels"
    csv_last, csv_bare = tmp_path / "t.csv", tmp_path / "bare.csv"
    csv_last.write_text("".join(",".join(f"{v:.6g}" for v in x) + f",{int(t)}\n" for x, t in zip(X, y)))
    csv_bare.write_text("".join(",".join(f"{v:.6g}" for v in x) + "\n" for x in X))
    np.testing.assert_array_equal(apply_model(path, csv_last, label_column=-1).predicted, with_labels.predicted)
    assert apply_model(path, csv_last, label_column=-1).value == with_labels.value
    assert apply_model(path, csv_bare).value is None
    lines = prediction_lines(with_labels, "classification", with_scores=True).splitlines()
    assert len(lines) == len(X) and len(lines[0].split(",")) == 1 + 10  # the label, then ten class scores


@pytest.mark.parametrize("block", [1, 2, 3, 5, 64])
def test_unlabelled_lines_get_their_placeholder_across_block_edges(block):
    text = b"1:0.5 3:1\n   2:0.25\n\n4:1\n"
    reader = _Unlabelled(io.BytesIO(text))
    out = b"".join(iter(lambda: reader.read(block), b""))
    assert out == b"0 1:0.5 3:1\n   0 2:0.25\n\n0 4:1\n"


@pytest.mark.parametrize("name", [n for n in models.__all__ if n not in ("load", "save")])
def test_every_model_class_saves_and_loads_to_the_same_predictions(name, tmp_path):
    X, y = load_digits(return_X_y=True)
    X = X[:400] / 16.0
    target = y[:400] if name.endswith("Classifier") else X[:, 10]
    model = getattr(models, name)().fit(X[:300], target[:300])
    again = models.load(model.save(tmp_path / f"{name}.npz"))
    np.testing.assert_allclose(np.asarray(again.predict(X[300:]), float), np.asarray(model.predict(X[300:]), float))
