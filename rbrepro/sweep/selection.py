"""Choosing sigma (docs/design.md §2a): on which data, per R, per dataset or as the exact kernel's,
and whether every sigma also runs on test; the choice from finished rows, with grid-edge flags.
Only the protocol's own cells choose (its seeds and draws, never a band's extra seeds)."""

from __future__ import annotations

from dataclasses import dataclass

from rbrepro.metrics import best_sigma, seed_statistic
from rbrepro.models.registry import METHODS, REFERENCE, method_names
from rbrepro.yamlconf import Node, Reader

SELECT_ON = ("validation", "test")
SELECT_PER = ("R", "dataset", "exact")
#: per: the exact kernel's sigma (a baseline takes the width the exact kernel chose)
PER_EXACT = SELECT_PER[2]
SELECT_RUN = ("chosen", "grid")
SELECTIONS = ("grid", "validation", "test")


@dataclass(frozen=True)
class Selection:
    """How sigma is chosen (docs/design.md §2a): on which data, per R or per dataset (by method), and
    whether every sigma also runs on test (the grid, chosen ones marked) or only the chosen one."""
    on: str = "validation"
    per: tuple[tuple[str, str], ...] = (("default", "R"),)   # (method | "default", "R" | "dataset")
    run: str = "chosen"

    def per_method(self, method: str) -> str:
        table = dict(self.per)
        return table.get(method, table.get("default", "R"))

    def to_dict(self) -> dict:
        return {"on": self.on, "per": dict(self.per), "run": self.run}


def grid_edge(sigma: float, sigmas: tuple[float, ...]) -> str:
    """"low" / "high" when sigma is its grid's smallest / largest (the best may lie beyond), else ""."""
    if len(sigmas) < 2:
        return ""
    if sigma <= min(sigmas) * (1 + 1e-9):
        return "low"
    return "high" if sigma >= max(sigmas) * (1 - 1e-9) else ""


def chooses_from(config, row: dict, grid) -> bool:
    """Only the protocol's own cells choose: its seeds and its draws, never the band's extra seeds."""
    rng = row.get("rng")
    rng = "numpy" if not isinstance(rng, str) or not rng else rng
    if METHODS[row["method"]].authors_draws and rng != config.rng:
        return False
    return int(row.get("seed", 0)) in (grid.seeds or config.seeds)


def _scores(config, rows: list[dict], on: str, grids: dict) -> tuple[dict, dict]:
    """(dataset, method) -> R -> sigma -> the metric of each choosing row evaluated `on`, and
    (dataset, method) -> the metric's name."""
    scores: dict = {}
    metrics: dict = {}
    for row in rows:
        if row.get("status") != "ok" or row.get("evaluate_on", "test") != on:
            continue
        key = (row["dataset"], row["method"])
        if key[0] not in grids or not chooses_from(config, row, grids[key[0]]):
            continue
        metrics[key] = row.get("metric") or "accuracy"
        scores.setdefault(key, {}).setdefault(int(row["R"]), {}).setdefault(float(row["sigma"]), []).append(
            float(row["test_metric"]))
    return scores, metrics


def best_sigmas(config, rows: list[dict]) -> dict:
    """(dataset, method, R) -> (sigma, edge) from finished rows: the validation rows of the
    selection cells, or the test grid's rows when choosing on test, by the one rule of
    `metrics.best_sigma` (the best median over seeds, the smaller sigma on a tie). Per dataset, one
    sigma serves every R: the best at select_R (validation) or the best median over R of each R's
    median (test). `edge` is "low" / "high" when the choice is the grid's smallest / largest sigma,
    else ""."""
    if config.selection is None:
        return {}
    on = config.selection.on
    grids = {g.name: g for g in config.datasets}
    scores, metrics = _scores(config, rows, on, grids)
    chosen = {}
    for (dataset, method), by_R in scores.items():
        metric = metrics[dataset, method]
        grid = grids[dataset]
        sigmas = grid.sigmas_for(method)
        line = not METHODS[method].has_R  # the exact kernel: one sigma for its line
        Rs = (0,) if line else grid.R
        if line or config.selection.per_method(method) == "R":
            for R, table in by_R.items():
                s = best_sigma(table, metric) if R in Rs else float("nan")
                if s == s:  # NaN: no finite score at this R, nothing chosen
                    chosen[dataset, method, R] = (s, grid_edge(s, sigmas))
            continue
        if on == "validation":
            table = by_R.get(grid.select_R)
            if not table:
                continue
        else:  # the best over R of each R's median, among sigmas run at every R
            table = {}
            for R, per_sigma in by_R.items():
                for s, vals in per_sigma.items():
                    table.setdefault(s, {})[R] = seed_statistic(vals)
            table = {s: list(v.values()) for s, v in table.items() if len(v) == len(by_R)}
            if not table:
                continue
        s = best_sigma(table, metric)
        if s != s:  # NaN: no finite score, nothing chosen
            continue
        for R in Rs:
            chosen[dataset, method, R] = (s, grid_edge(s, sigmas))
    for grid in config.datasets:  # per: exact — the exact kernel's choice of the dataset
        for method in grid.methods or config.methods:
            if not METHODS[method].has_R or config.selection.per_method(method) != PER_EXACT:
                continue
            sigmas = grid.sigmas_for(method)
            exact = chosen.get((grid.name, REFERENCE, 0))
            if exact is None and len(sigmas) != 1:
                continue
            s = exact[0] if exact is not None else sigmas[0]
            for R in grid.R:
                chosen[grid.name, method, R] = (s, grid_edge(s, sigmas) if s in sigmas else "")
    return chosen


def parse_selection(rd: Reader, node: Node, protocol: str) -> Selection | None:
    """sigma_selection: a scalar (grid | validation | test) or {on, per, run}; test data only
    for protocol as-published."""
    if not isinstance(node.value, dict):
        name = rd.choice(node, "sigma_selection", SELECTIONS)
        selection = None if name == "grid" else Selection(on=name)
    else:
        m = rd.mapping(node, "sigma_selection", ("on", "per", "run"))
        on = rd.choice(m["on"], "sigma_selection.on", SELECT_ON) if "on" in m else "validation"
        per: tuple = (("default", "R"),)
        if "per" in m:
            if isinstance(m["per"].value, dict):
                table = rd.mapping(m["per"], "sigma_selection.per", (*method_names(), "default"))
                per = tuple((k, rd.choice(v, f"sigma_selection.per.{k}", SELECT_PER)) for k, v in table.items())
            else:
                per = (("default", rd.choice(m["per"], "sigma_selection.per", SELECT_PER)),)
        run = rd.choice(m["run"], "sigma_selection.run", SELECT_RUN) if "run" in m else "chosen"
        selection = Selection(on=on, per=per, run=run)
    if selection is not None and selection.on == "test" and protocol != "as-published":
        rd.fail(node, "sigma_selection", "choosing sigma on test data is the authors' protocol; it is allowed only "
                                         "with `protocol: as-published` (every other protocol chooses on validation)")
    return selection
