"""The user's own data: YAML-registered datasets, files named on the command line, CSV, census --from."""

import json

import numpy as np
import pandas as pd
import pytest

from rbrepro.data.delimited import parse_csv
from rbrepro.data.files import ParseError
from rbrepro.data.load import load_dataset, resolve_spec
from rbrepro.data.user import load_datasets_file
from rbrepro.sweep.cells import cells_on_test
from rbrepro.sweep.config import ConfigError, load_config
from tests.cli_runner import run_cli
from tests.conftest import make_binary_problem, write_libsvm


def _cli(*args, env):
    return run_cli(*args, env=env)


@pytest.fixture
def files(tmp_path):
    X, y = make_binary_problem(500, 6, seed=7)
    write_libsvm(tmp_path / "own" / "train.libsvm", X[:400], y[:400])
    write_libsvm(tmp_path / "own" / "test.libsvm", X[400:, :5], y[400:])  # narrower test file: padded
    frame = pd.DataFrame(np.column_stack([np.sin(X[:, 0]) + X[:, 1], X]), columns=["y"] + [f"f{i}" for i in range(6)])
    frame.to_csv(tmp_path / "own" / "reg.csv", index=False)
    (tmp_path / "own" / "sets.yaml").write_text(
        "datasets:\n"
        "  ball:\n    train: train.libsvm\n    test: test.libsvm\n    task: binary\n    R: 32\n"
        "  wave:\n    train: reg.csv\n    scaling: published\n    lam: 0.1\n")
    return tmp_path / "own"


def test_yaml_registered_datasets_load_like_built_ins(files, tmp_path):
    specs = load_datasets_file(files / "sets.yaml")
    ball = load_dataset(specs["ball"], tmp_path / "d")
    assert ball.X_train.shape == (400, 6) and ball.X_test.shape == (100, 6) and ball.task == "binary"
    assert ball.split == "test file test.libsvm" and ball.scaling.startswith("minmax")
    wave = load_dataset("wave", tmp_path / "d", datasets_file=files / "sets.yaml")
    assert wave.task == "regression" and wave.X_train.shape == (400, 6) and wave.X_test.shape == (100, 6)
    assert wave.scaling == "as published" and wave.info["spec"].lam == 0.1


@pytest.mark.parametrize("text, fragment", [
    ("datasets:\n  x: {test: a}\n", "sets.yaml:2: datasets.x: train: missing"),
    ("datasets:\n  x: {train: a, format: parquet}\n", "datasets.x.format: expected one of libsvm, csv"),
    ("datasets:\n  ijcnn1: {train: a}\n", "is a built-in dataset"),
    ("datasets:\n  x: {train: a, colour: red}\n", "datasets.x.colour: unknown key"),
])
def test_bad_datasets_files_name_the_place(tmp_path, text, fragment):
    (tmp_path / "sets.yaml").write_text(text)
    with pytest.raises(ConfigError, match=fragment.replace(".", r"\.")):
        load_datasets_file(tmp_path / "sets.yaml")


def _last_column_csv(path, n=300, header="a,b,label"):
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (n, 2))
    y = (X ** 2).sum(1) < 0.5
    rows = [f"{a:.4f},{b:.4f},{int(c)}" for (a, b), c in zip(X, y)]
    path.write_text((header + "\n" if header else "") + "\n".join(rows) + "\n")
    return path


def test_a_csv_label_in_the_last_column_is_read_where_it_is_said_to_be(tmp_path):
    csv = _last_column_csv(tmp_path / "last.csv")
    data = load_dataset(str(csv), tmp_path / "d", progress=False, label_column=-1)
    assert data.task == "binary" and data.n_features == 2 and set(np.unique(data.y_train)) == {0.0, 1.0}
    with pytest.raises(ParseError, match=r"last\.csv:1: the header names column 3 'label', but the label is read "
                                          r"from column 1; give --label-column 2"):
        load_dataset(str(csv), tmp_path / "d2", progress=False)  # the default (first column) would regress on 'a'
    (tmp_path / "sets.yaml").write_text("datasets:\n  last:\n    train: last.csv\n    label_column: -1\n")
    assert load_dataset("last", tmp_path / "d3", progress=False, datasets_file=tmp_path / "sets.yaml").task == "binary"
    headless = _last_column_csv(tmp_path / "headless.csv", header="")
    first = load_dataset(str(headless), tmp_path / "d4", progress=False, label_column=0)
    last = load_dataset(str(headless), tmp_path / "d4", progress=False, label_column=-1)  # cached apart
    assert first.task == "regression" and last.task == "binary"


def test_the_label_column_is_part_of_the_data_fingerprint_and_only_for_csv(tmp_path):
    from rbrepro.data.load import dataset_availability
    from rbrepro.data.user import spec_from_path

    csv = _last_column_csv(tmp_path / "plain.csv", header="")
    first = dataset_availability(spec_from_path(str(csv)), tmp_path / "d")[0]
    assert first == dataset_availability(spec_from_path(str(csv), label_column=0), tmp_path / "d")[0]
    assert first != dataset_availability(spec_from_path(str(csv), label_column=-1), tmp_path / "d")[0]
    lib = tmp_path / "plain.libsvm"
    lib.write_text("1 1:0.5\n-1 1:0.2\n" * 20)
    with pytest.raises(ValueError, match="applies to CSV files"):
        load_dataset(str(lib), tmp_path / "d", progress=False, label_column=-1)
    with pytest.raises(FileNotFoundError, match="nosuch.csv: no such file"):
        load_dataset("nosuch.csv", tmp_path / "d", progress=False, test_file=csv)


def _named_csv(path, n, rng, header="f1,f2,label\n", names=("cat", "dog", "eel")):
    X = rng.uniform(-1, 1, (n, 2))
    kind = (X[:, 0] > 0.2).astype(int) + (X[:, 1] > 0.4).astype(int)
    path.write_text(header + "".join(f"{a:.4f},{b:.4f},{names[k]}\n" for (a, b), k in zip(X, kind)))
    return path, X, np.asarray(names)[kind]


def test_class_names_as_csv_labels_train_as_classes_and_map_the_test_file_by_name(tmp_path):
    rng = np.random.default_rng(5)
    train, _, names = _named_csv(tmp_path / "train.csv", 400, rng)
    # the test file lacks "cat" entirely: its own numbering would differ, the training file's names decide
    test, _, test_names = _named_csv(tmp_path / "test.csv", 150, rng, names=("dog", "dog", "eel"))
    data = load_dataset(str(train), tmp_path / "d", progress=False, label_column=-1, test_file=test)
    assert data.task == "multiclass" and data.info["class_names"] == ("cat", "dog", "eel")
    assert (np.asarray(data.info["class_names"])[data.y_train.astype(int)] == names).all()
    assert (np.asarray(data.info["class_names"])[data.y_test.astype(int)] == test_names).all()
    cached = load_dataset(str(train), tmp_path / "d", progress=False, label_column=-1, test_file=test)  # the cache
    assert cached.info["class_names"] == ("cat", "dog", "eel") and (cached.y_test == data.y_test).all()


def test_class_names_are_all_or_nothing_and_never_empty(tmp_path):
    (tmp_path / "mixed.csv").write_text("f1,f2,label\n1,2,0\n2,3,dog\n3,4,0\n")  # "0" is a name beside "dog"
    parsed = parse_csv(tmp_path / "mixed.csv", label_column=-1)
    assert parsed.classes == ("0", "dog") and parsed.y.tolist() == [0.0, 1.0, 0.0]
    (tmp_path / "empty.csv").write_text("f1,f2,label\n1,2,cat\n2,3,\n")
    with pytest.raises(ParseError, match=r"empty\.csv:3: column 3 \(the label\) is empty; in a file of class names"):
        parse_csv(tmp_path / "empty.csv", label_column=-1)
    (tmp_path / "numbers.csv").write_text("f1,f2,label\n1,2,1\n2,3,0\n")
    assert parse_csv(tmp_path / "numbers.csv", label_column=-1).classes == ()
    rng = np.random.default_rng(6)
    train, _, _ = _named_csv(tmp_path / "t.csv", 50, rng)
    other, _, _ = _named_csv(tmp_path / "o.csv", 20, rng, names=("cat", "fox", "fox"))
    with pytest.raises(ValueError, match=r"the test file has labels the training file lacks: \['fox'\]"):
        load_dataset(str(train), tmp_path / "d", progress=False, label_column=-1, test_file=other)
    (tmp_path / "n.csv").write_text("f1,f2,label\n" + "1,2,1\n2,3,0\n" * 10)
    with pytest.raises(ValueError, match="class names and the other's are numbers"):
        load_dataset(str(train), tmp_path / "d", progress=False, label_column=-1, test_file=tmp_path / "n.csv")


@pytest.mark.slow
def test_a_model_trained_on_class_names_predicts_names_through_the_cli(tmp_path):
    rng = np.random.default_rng(7)
    train, _, _ = _named_csv(tmp_path / "train.csv", 400, rng)
    test, X_test, test_names = _named_csv(tmp_path / "test.csv", 100, rng)
    env = {"RBREPRO_DATA": str(tmp_path / "d")}
    proc = _cli("train", train, "--test", test, "--label-column", "-1", "-R", "64", "--sigma", "1", "--json",
                "--save-model", tmp_path / "m.npz", env=env)
    assert proc.returncode == 0, proc.stderr
    row = json.loads(proc.stdout)
    assert row["classes"] == "cat,dog,eel" and row["test_metric"] > 80.0
    unlabelled = tmp_path / "new.csv"
    unlabelled.write_text("".join(f"{a:.4f},{b:.4f}\n" for a, b in X_test))
    out = _cli("predict", tmp_path / "m.npz", unlabelled, env=env)
    assert out.returncode == 0, out.stderr
    predicted = np.array(out.stdout.split())
    assert set(predicted) <= {"cat", "dog", "eel"}
    assert abs(100.0 * np.mean(predicted == test_names) - row["test_metric"]) < 1e-9  # the same model, the same rows
    scored = _cli("predict", tmp_path / "m.npz", test, "--label-column", "-1", env=env)
    assert scored.returncode == 0 and f"{row['test_metric']:g}" in scored.stderr


@pytest.mark.slow
def test_train_scores_on_a_test_file_given_with_test_and_quiet_prints_only_the_result(files, tmp_path):
    env = {"RBREPRO_DATA": str(tmp_path / "d")}
    proc = _cli("train", files / "train.libsvm", "--test", files / "test.libsvm", "-R", "32", "--sigma", "1", "-q",
                env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "" and len(proc.stdout.strip().splitlines()) == 1  # -q: the result line alone
    row = json.loads(_cli("train", files / "train.libsvm", "--test", files / "test.libsvm", "-R", "32", "--json",
                          env=env).stdout)
    assert row["n_train"] == 400 and row["n_test"] == 100  # every training row trains; the test file scores
    refused = _cli("train", "digits", "--test", files / "test.libsvm", env=env)
    assert refused.returncode == 2 and "'digits' is a registered dataset with its own files" in refused.stderr


@pytest.mark.slow
def test_a_file_named_on_the_command_line_trains(files, tmp_path):
    spec = resolve_spec(str(files / "train.libsvm"), tmp_path)
    assert spec.name == "train" and spec.source == "user"
    proc = _cli("train", files / "train.libsvm", "--R", "32", "--sigma", "1", "--json",
                env={"RBREPRO_DATA": str(tmp_path / "d")})
    assert proc.returncode == 0, proc.stderr
    row = json.loads(proc.stdout)
    assert row["task"] == "binary" and row["n_train"] == 320 and row["n_test"] == 80  # seeded 80/20
    assert row["test_metric"] > 80


@pytest.mark.slow
def test_a_sweep_over_a_registered_dataset(files, tmp_path):
    (tmp_path / "cfg.yaml").write_text(f"name: own\ndataset_files: [{files / 'sets.yaml'}]\n"
                                       "datasets:\n  ball: {sigma: [0.5, 2]}\n")
    cfg = load_config(tmp_path / "cfg.yaml")
    assert [c.R for c in cells_on_test(cfg)] == [32, 32]  # the dataset's own default R
    proc = _cli("sweep", tmp_path / "cfg.yaml", "--out", tmp_path / "res", "-q",
                env={"RBREPRO_DATA": str(tmp_path / "d")})
    assert proc.returncode == 0, proc.stderr
    frame = pd.read_csv(tmp_path / "res" / "results.csv")
    assert len(frame) == 2 and (frame["status"] == "ok").all() and set(frame["dataset"]) == {"ball"}


@pytest.mark.slow
def test_census_needs_from_and_then_uses_the_papers_counts(tmp_path):
    env = {"RBREPRO_DATA": str(tmp_path / "d")}
    proc = _cli("fetch", "census", env=env)
    assert proc.returncode == 2 and "--from" in proc.stderr and "origin is unconfirmed" in proc.stderr
    rng = np.random.default_rng(0)
    X = np.round(rng.random((20459, 119)) * (rng.random((20459, 119)) < 0.1), 3)
    y = X[:, :5].sum(axis=1) + 1
    write_libsvm(tmp_path / "census.libsvm", X, y)
    proc = _cli("fetch", "census", "--from", tmp_path / "census.libsvm", "-q", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "18186 train / 2273 test rows" in proc.stdout  # the paper's split of 20,459 rows
    data = load_dataset("census", tmp_path / "d", fetch=False)
    assert data.X_train.shape == (18186, 119) and data.task == "regression"
    listing = _cli("fetch", "--list", env=env).stdout
    assert any(line.startswith("census") and "supplied" in line for line in listing.splitlines())
