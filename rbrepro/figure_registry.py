"""The figures, each declared once: a FigureSpec says its name and title, what it shows (the command line's
help), the function that draws it, the published runs drawn as it, whether the seeds table lists
them, the function of its Markdown tables and whether the authors' published points cover it.

`rbrepro plot` and a config's `figure:` key offer the figures registered; plots.make_figure draws by
the spec; the report (report.runs, report.sections.configs, report.tables), published.publish and
`rbrepro compare` read the runs, tables and coverage here. vocabulary.FIGURES is the built-in
figures' names, derived from it. A figure is one module with its drawing function
`(frame, out_base, config) -> [paths]` and one `register_figure(FigureSpec(...))`. A leaf module:
functions may be "module:function" strings (rbrepro.dotted.resolve imports them on use).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rbrepro.errors import InvalidParameter


@dataclass(frozen=True, kw_only=True)
class FigureSpec:
    name: str
    title: str                         # how prose names it ("Fig. 3")
    help: str                          # what it shows, for `rbrepro plot --help` and the docs
    #: (frame, out_base, config) -> the paths written, a callable or its "module:function"
    #: (None: the built-in convention, rbrepro.plots.<name>:plot_<name>)
    draw: Callable | str | None = None
    runs: tuple[str, ...] = ()          # the published runs (results/<run>) drawn as this figure
    extra_runs: tuple[str, ...] = ()    # runs the report reads beside them where committed
    seeded: bool = False                # its runs are rows of the seeds table (docs/sweeps.md)
    #: (results, config) -> Markdown tables of one of its runs (report.tables), or None
    tables: Callable | str | None = None
    published_points: bool = False      # the authors' published points cover it (`rbrepro compare`)

    @property
    def drawing(self) -> Callable | str:
        """Its drawing function (or the "module:function" that names it)."""
        return self.draw or f"rbrepro.plots.{self.name}:plot_{self.name}"


_TABLES = "rbrepro.report.tables:{}_tables"
BUILT_IN = (
    FigureSpec(name="fig3", title="Fig. 3", help="RB vs sigma", runs=("fig3", "fig3-as-published"), seeded=True,
               tables=_TABLES.format("fig3"), published_points=True),
    FigureSpec(name="fig4", title="Fig. 4", help="RB vs R and D", runs=("fig4",), seeded=True, tables=_TABLES.format("fig4")),
    FigureSpec(name="fig5", title="Fig. 5", help="methods at equal R and cost to a target", runs=("fig5", "fig5-as-published"),
               seeded=True, tables=_TABLES.format("fig5"), published_points=True),
    FigureSpec(name="fig6", title="Fig. 6", help="parallel RCD speedup", runs=("fig6",), extra_runs=("fig6-threads",), seeded=True,
               tables=_TABLES.format("fig6")),
    FigureSpec(name="scaling", title="the scaling figure", help="how cost grows", runs=("scaling",)),
)
#: name -> FigureSpec: the built-in figures and those registered
FIGURE_SPECS: dict[str, FigureSpec] = {spec.name: spec for spec in BUILT_IN}


def register_figure(spec: FigureSpec) -> FigureSpec:
    """Add a figure (refused where its name is taken or its drawing function is missing)."""
    if spec.name in FIGURE_SPECS or spec.name == "none":
        raise InvalidParameter(f"figure {spec.name!r} is registered already")
    if spec.draw is None:
        raise InvalidParameter(f"figure {spec.name!r} needs a draw function (frame, out_base, config) -> paths")
    FIGURE_SPECS[spec.name] = spec
    return spec


def unregister_figure(name: str) -> None:
    """Remove a registered figure (the built-in ones stay)."""
    if any(spec.name == name for spec in BUILT_IN):
        raise InvalidParameter(f"figure {name!r} is built in")
    FIGURE_SPECS.pop(name, None)


def figure_names() -> tuple[str, ...]:
    """Every figure registered, the built-in ones first."""
    return tuple(FIGURE_SPECS)


def figure_of_run(run: str) -> FigureSpec | None:
    """The figure a published run is drawn as (None: a run that is no figure's, as theory)."""
    return next((spec for spec in FIGURE_SPECS.values() if run in spec.runs), None)
