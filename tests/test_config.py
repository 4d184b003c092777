"""Sweep configs are validated before any work, with errors naming file, line and key."""

from pathlib import Path

import numpy as np
import pytest

from rbrepro.sweep.cells import cells_on_test, selection_cells
from rbrepro.sweep.config import ConfigError, load_config, parse_config

REPO = Path(__file__).resolve().parents[1]

GOOD = """\
name: t
seeds: [0, 1]
defaults:
  sigma: [0.1, 1]
datasets:
  cadata: {}
  ijcnn1:
    R: [8, 16]
    lam: 0.1
"""


def test_good_config_resolves_defaults_from_registry():
    cfg = parse_config(GOOD, "t.yaml")
    grids = {g.name: g for g in cfg.datasets}
    assert grids["cadata"].R == (16,) and grids["cadata"].lam == 0.01  # registry defaults
    assert grids["ijcnn1"].R == (8, 16) and grids["ijcnn1"].lam == 0.1
    assert len(cells_on_test(cfg)) == 2 * 2 * 1 + 2 * 2 * 2
    assert cfg.maxit == 50 and cfg.tol == 1e-3


def test_per_dataset_seeds_override_the_config_seeds():
    cfg = parse_config(GOOD.replace("    lam: 0.1", "    lam: 0.1\n    seeds: [7]"), "t.yaml")
    seeds = {(c.dataset, c.seed) for c in cells_on_test(cfg)}
    assert seeds == {("cadata", 0), ("cadata", 1), ("ijcnn1", 7)}
    assert cfg.to_dict()["datasets"]["ijcnn1"]["seeds"] == [7]
    assert selection_cells(parse_config(cfg_text := GOOD.replace("seeds: [0, 1]", "seeds: [0, 1]\nsigma_selection: "
                                                                                   "validation"), "t.yaml"))[0].seed == 0
    assert cfg_text


@pytest.mark.parametrize("text, expected", [
    (GOOD.replace("seeds:", "seedz:"), "t.yaml:2: seedz: unknown key"),
    (GOOD.replace("R: [8, 16]", "R: many"), "t.yaml:8: datasets.ijcnn1.R[0]: expected a positive integer, got 'many'"),
    (GOOD.replace("R: [8, 16]", "R: [8, -16]"), "t.yaml:8: datasets.ijcnn1.R[1]: expected a positive integer"),
    (GOOD.replace("lam: 0.1", "lam: -1"), "t.yaml:9: datasets.ijcnn1.lam: expected a non-negative number"),
    (GOOD.replace("lam: 0.1", "seeds: [-1]"), "t.yaml:9: datasets.ijcnn1.seeds[0]: expected a non-negative integer"),
    (GOOD.replace("  cadata: {}", "  cadatta: {}"), "t.yaml:6: datasets.cadatta: unknown key; allowed here:"),
    (GOOD.replace("  sigma: [0.1, 1]", "  sigma: [0.1, .nan]"), "t.yaml:4: defaults.sigma[1]: expected a positive number"),
    (GOOD.replace("name: t", "name: ../escape"), "t.yaml:1: name: expected a name"),
    (GOOD + "methods: [svm]\n", "methods[0]: expected one of rb"),
    ("name: t\n", "datasets: missing"),
    ("name: t\ndatasets: [census]\ndefaults: {sigma: [1]}\n", "datasets.census: no R"),
    ("- a\n- b\n", "(top level): expected a mapping"),
    ("name: t\nname: u\n", "t.yaml:2: duplicate key 'name'"),
    ("name: [unclosed\n", "not valid YAML"),
    ("name: !!python/object:os.system ls\n", "t.yaml:1:"),
    ("", "the config is empty"),
])
def test_bad_configs_give_one_line_naming_the_place(text, expected):
    with pytest.raises(ConfigError) as info:
        parse_config(text, "t.yaml")
    message = str(info.value)
    assert expected in message and "\n" not in message


def test_alias_bomb_is_refused_quickly():
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n"
    for i in range(1, 12):
        bomb += f"a{i}: &a{i} [*a{'' if i == 1 else i - 1}, *a{'' if i == 1 else i - 1}, *a{'' if i == 1 else i - 1}]\n"
    with pytest.raises(ConfigError, match="too large"):
        parse_config("name: t\n" + bomb, "t.yaml")


def test_deep_nesting_is_refused_with_its_line_not_a_recursion_error():
    deep = "name: t\ndatasets:\n  x: " + "[" * 5000 + "]" * 5000 + "\n"
    with pytest.raises(ConfigError, match=r"t\.yaml:3: lists and mappings nested more than 64 deep"):
        parse_config(deep, "t.yaml")
    # 64 levels are still read (and then judged by the schema, not by the depth guard)
    with pytest.raises(ConfigError) as info:
        parse_config("name: t\ndatasets:\n  x: " + "[" * 60 + "]" * 60 + "\n", "t.yaml")
    assert "nested" not in str(info.value)


def test_shipped_configs_are_valid():
    from rbrepro.theory.config import load_theory_config

    for path in sorted((REPO / "configs").glob("*.yaml")):
        if path.name == "theory.yaml":  # Theorem 1's diagnostics (rbrepro diagnose), not a sweep
            assert {d.name for d in load_theory_config(path).datasets} == {"cadata", "ijcnn1", "letter", "mnist"}
            continue
        cfg = load_config(path)
        assert cells_on_test(cfg) or selection_cells(cfg), path
    fig3 = load_config(REPO / "configs" / "fig3.yaml")
    assert {g.name for g in fig3.datasets} == {"cadata", "census", "ijcnn1", "covtype", "SUSY", "mnist", "acoustic",
                                               "letter"}
    ijcnn1 = next(g for g in fig3.datasets if g.name == "ijcnn1")
    assert ijcnn1.R == (128,) and len(ijcnn1.sigma) == 19  # the R of the authors' Fig. 3 data (docs/design.md §2a)
    covtype = next(g for g in fig3.datasets if g.name == "covtype")
    assert covtype.lam == 1e-4 and len(covtype.sigma) == 7


def test_missing_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match="nope.yaml: cannot read"):
        load_config(tmp_path / "nope.yaml")


def test_protocol_kernel_scaling_and_baseline_grids_reach_every_cell():
    cfg = parse_config("name: p\nprotocol: as-published\nkernel: euclidean\nmethods: [rb, rf, exact]\n"
                       "sigma_selection: {on: test, per: {rb: R, default: dataset}}\n"
                       "defaults: {sigma: [0.5, 1], baseline_sigma: [2, 4, 8], exact_sigma: [3]}\n"
                       "datasets:\n  cadata: {scaling: maxabs, R: [8, 16]}\n", "p.yaml")
    cells = cells_on_test(cfg)
    assert {c.scaling for c in cells} == {"maxabs"}
    assert {(c.method, c.kernel) for c in cells} == {("rb", "l1"), ("rf", "euclidean"), ("exact", "euclidean")}
    assert sorted({c.sigma for c in cells if c.method == "rf"}) == [2, 4, 8]
    assert [c.sigma for c in cells if c.method == "exact"] == [3]
    assert cfg.selection.per_method("rb") == "R" and cfg.selection.per_method("rf") == "dataset"
    resolved = cfg.to_dict()
    assert resolved["protocol"] == "as-published" and resolved["datasets"]["cadata"]["scaling"] == "maxabs"
    with pytest.raises(ConfigError, match=r"p.yaml:\d+: datasets.cadata.scaling: expected one of"):
        parse_config("name: p\ndatasets:\n  cadata: {sigma: [1], scaling: zscore}\n", "p.yaml")
    with pytest.raises(ConfigError, match=r"sigma_selection.per.rb: expected one of"):
        parse_config("name: p\nsigma_selection: {per: {rb: seed}}\ndatasets:\n  cadata: {sigma: [1]}\n", "p.yaml")


def test_maxabs_scaling_divides_each_column_by_its_largest_magnitude():
    import scipy.sparse as sp

    from rbrepro.data.scaling import MinMaxScaler

    X = np.array([[-4.0, 0.0, 1.0], [2.0, 0.0, 3.0]], dtype=np.float32)
    scaler = MinMaxScaler.fit_maxabs(X)
    np.testing.assert_allclose(scaler.transform(X), [[-1.0, 0.0, 1 / 3], [0.5, 0.0, 1.0]], rtol=1e-6)
    S = scaler.transform(sp.csr_matrix(X))
    assert sp.issparse(S) and np.allclose(S.toarray(), scaler.transform(X))


@pytest.mark.parametrize("run", ["fig5-as-published", "fig3-as-published"])
def test_as_published_runs_use_the_width_the_authors_data_names(run):
    """Where the authors' figure data names the kernel width of their baselines and exact kernel, the
    as-published config runs that width alone (never a width of ours chosen on test)."""
    from rbrepro.published import published_table

    config = load_config(REPO / "configs" / f"{run}.yaml").to_dict()
    panel = run.split("-")[0]
    ref = published_table()
    ref = ref[(ref["panel"] == panel) & ~ref["method"].isin(["rb"]) & ref["published_sigma"].notna()]
    checked = 0
    for dataset, spec in config["datasets"].items():
        methods = spec.get("methods") or config["methods"]
        widths = ref[ref["dataset"] == dataset]["published_sigma"].unique()
        if len(widths) != 1:
            continue
        inverse = 1.0 / float(widths[0])
        keys = [k for k, m in (("exact_sigma", "exact"), ("baseline_sigma", "rf")) if m in methods and k in spec]
        for key in keys:
            assert spec[key] == pytest.approx([inverse], rel=1e-3), (dataset, key, spec[key])
            checked += 1
    assert checked >= 3
