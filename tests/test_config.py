"""Sweep configs are validated before any work, with errors naming file, line and key."""

from pathlib import Path

import pytest

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
    assert len(cfg.cells()) == 2 * 2 * 1 + 2 * 2 * 2
    assert cfg.maxit == 50 and cfg.tol == 1e-3


def test_per_dataset_seeds_override_the_config_seeds():
    cfg = parse_config(GOOD.replace("    lam: 0.1", "    lam: 0.1\n    seeds: [7]"), "t.yaml")
    seeds = {(c.dataset, c.seed) for c in cfg.cells()}
    assert seeds == {("cadata", 0), ("cadata", 1), ("ijcnn1", 7)}
    assert cfg.to_dict()["datasets"]["ijcnn1"]["seeds"] == [7]
    assert parse_config(cfg_text := GOOD.replace("seeds: [0, 1]", "seeds: [0, 1]\nsigma_selection: test"),
                        "t.yaml").selection_cells()[0].seed == 0 and cfg_text


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


def test_shipped_configs_are_valid():
    for path in sorted((REPO / "configs").glob("*.yaml")):
        cfg = load_config(path)
        assert cfg.cells() or cfg.selection_cells(), path
    fig3 = load_config(REPO / "configs" / "fig3.yaml")
    assert {g.name for g in fig3.datasets} == {"cadata", "census", "ijcnn1", "covtype", "SUSY", "mnist", "acoustic",
                                               "letter"}
    ijcnn1 = next(g for g in fig3.datasets if g.name == "ijcnn1")
    assert ijcnn1.R == (17,) and len(ijcnn1.sigma) == 19
    covtype = next(g for g in fig3.datasets if g.name == "covtype")
    assert covtype.lam == 1e-4 and len(covtype.sigma) == 7


def test_missing_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match="nope.yaml: cannot read"):
        load_config(tmp_path / "nope.yaml")
