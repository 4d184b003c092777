"""What every figure draws with (the paper's figures in plots/, Theorem 1's in theory/): the
methods' names, colours and markers, a grid of panels (with a column kept for legends), legends
placed where they cover no data, log axes with plain tick labels, an empty panel's note, and PNG
and PDF written atomically with the same bytes for the same rows. The one module that sets
matplotlib up: the Agg backend and matplotlib's own default style with its bundled font, whatever
a matplotlibrc of the machine or the user says, so that a figure's bytes depend on its rows alone."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter, NullLocator  # noqa: E402

from rbrepro.data.atomic import atomic_path  # noqa: E402
from rbrepro.models.registry import METHODS  # noqa: E402

#: what every figure is drawn with, over matplotlib's own defaults: its bundled DejaVu Sans alone (a
#: font installed on one machine but not another would change the glyphs, and with them the layout)
PINNED_RC = {"font.family": ["DejaVu Sans"]}
matplotlib.rcdefaults()
matplotlib.rcParams.update(PINNED_RC)

#: significant digits of every computed number a figure draws (`steady`)
STEADY_DIGITS = 6


def steady(values) -> np.ndarray:
    """Values rounded to STEADY_DIGITS significant digits (NaN and inf kept), for drawing: a median
    or a fitted power law that differs in its last bits between machines (another BLAS, another
    libm) then gives the same pixels. Python's decimal formatting is correctly rounded everywhere."""
    flat = np.asarray(values, dtype=np.float64)
    return np.array([float(f"{v:.{STEADY_DIGITS}g}") for v in flat.ravel()], dtype=np.float64).reshape(flat.shape)


class _MethodStyles(Mapping):
    """method -> (label, colour, marker), read from each registry entry's `style` on every lookup,
    so a method registered at run time is drawn with its own (in the registry's order)."""

    def __getitem__(self, method: str) -> tuple[str, str, str]:
        if method not in METHODS:
            raise KeyError(method)
        return METHODS[method].style

    def __iter__(self):
        return iter(list(METHODS))

    def __len__(self) -> int:
        return len(METHODS)


#: per method: (label, colour, marker)
METHOD_STYLE = _MethodStyles()


def new_figure(n_rows: int, n_cols: int, width: float = 4.2, height: float = 3.2, legend_width: float = 0.0,
               legend_at: int | None = None):
    """A grid of panels; with legend_width (inches) one more column, turned off, to hold each row's
    legend (see legend_in): a legend there never covers a panel's data. It is the last column, or
    column legend_at (beside the panel the legend belongs to)."""
    rows = max(1, n_rows)
    if not legend_width:
        return plt.subplots(rows, n_cols, figsize=(width * n_cols, height * rows), squeeze=False)
    at = n_cols if legend_at is None else legend_at
    ratios = [width] * n_cols
    ratios.insert(at, legend_width)
    fig, axes = plt.subplots(rows, n_cols + 1, figsize=(width * n_cols + legend_width, height * rows), squeeze=False,
                             gridspec_kw={"width_ratios": ratios})
    for ax in axes[:, at]:
        ax.axis("off")
    return fig, axes


LEGEND_FONTSIZE = 8


def legend_in(slot, handles, labels, **options):
    """A row's legend in its own (turned off) slot of new_figure(legend_width=...), left-aligned so
    that the rows' legends line up; `options` go to matplotlib's legend (a title, say)."""
    return slot.legend(handles, labels, loc="center left", bbox_to_anchor=(0.0, 0.5), fontsize=LEGEND_FONTSIZE,
                       frameon=False, borderaxespad=0.0, **options)


def plain_number(value: float) -> str:
    """0.001, 0.5, 10, 1,000: a tick label read without exponents (1e-05 beyond them)."""
    return f"{value:,.6g}"


def plain_log_ticks(ax, axis: str = "y") -> None:
    """Log ticks labelled as plain numbers (0.1, 1, 10), never matplotlib's minor labels such as
    6×10⁰: a tick per decade, at 1, 2 and 5 of each where the axis spans less than two decades, at
    every digit where it spans less than one. Call it once the axis has its data (it reads the limits)."""
    which = ax.yaxis if axis == "y" else ax.xaxis
    low, high = sorted(ax.get_ylim() if axis == "y" else ax.get_xlim())
    decades = np.log10(high / low) if low > 0 else np.inf
    subs = (1.0,) if decades >= 2 else (1.0, 2.0, 5.0) if decades >= 0.7 else np.arange(1.0, 10.0)
    which.set_major_locator(LogLocator(base=10, subs=subs))
    which.set_major_formatter(FuncFormatter(lambda v, _pos: plain_number(v)))
    which.set_minor_locator(LogLocator(base=10, subs=np.arange(2, 10)) if decades >= 2 else NullLocator())
    which.set_minor_formatter(NullFormatter())


def _y_scale(ax):
    """(forward, inverse) of the y-axis' scale: log10 on a log axis, the identity on a linear one."""
    if ax.get_yscale() == "log":
        return np.log10, lambda v: 10.0 ** np.asarray(v, dtype=np.float64)
    return (lambda v: np.asarray(v, dtype=np.float64)), (lambda v: np.asarray(v, dtype=np.float64))


def keep_in_view(ax, values, margin: float = 0.05) -> None:
    """Widen the y-limits so that each value (a reference line, a point) lies inside them, `margin` of
    the panel's height clear of its edges: a line on the frame is listed in the legend yet unseen.
    Call it once the panel has its data (it reads the limits); NaN, and values <= 0 on a log axis,
    are passed over."""
    log = ax.get_yscale() == "log"
    values = [float(v) for v in values if v is not None and np.isfinite(v) and (v > 0 or not log)]
    if not values:
        return
    forward, inverse = _y_scale(ax)
    lo, hi = (float(v) for v in forward(np.array(ax.get_ylim())))
    span = (hi - lo) or 1.0
    wanted_lo = min(lo, float(forward(min(values))) - margin * span)
    wanted_hi = max(hi, float(forward(max(values))) + margin * span)
    if (wanted_lo, wanted_hi) != (lo, hi):
        ax.set_ylim(float(inverse(wanted_lo)), float(inverse(wanted_hi)))


#: the share of a panel's height kept at its top for marks that have no value on the axis (`top_strip`)
STRIP_SHARE = 0.14


def top_strip(ax, low: float, ceiling: float, label: str) -> float:
    """The y-axis from `low` to `ceiling` for the values, and above it a shaded strip whose one tick
    says `label` (e.g. "not reached"): marks there stand apart from every value, and no tick above
    `ceiling` reads as one. Set the axis' scale first. Returns the strip's middle (where its marks go)."""
    forward, inverse = _y_scale(ax)
    lo, top = float(forward(low)), float(forward(ceiling))
    hi = lo + (top - lo) / (1 - STRIP_SHARE)
    middle = float(inverse((top + hi) / 2))
    ax.set_ylim(low, float(inverse(hi)))
    # over the grid lines (zorder 1.5), under the marks
    ax.axhspan(ceiling, float(inverse(hi)), color="0.93", lw=0, zorder=1.6)
    ax.axhline(ceiling, color="0.55", lw=0.6, zorder=1.7)
    if ax.get_yscale() == "log":
        plain_log_ticks(ax)

    room = top - 0.05 * (hi - lo)  # a tick label just under the strip would run into its own

    def below(locator, limit: float) -> list[float]:
        return [float(t) for t in locator.tick_values(low, ceiling) if low <= t and float(forward(t)) <= limit]

    major, minor = below(ax.yaxis.get_major_locator(), room), below(ax.yaxis.get_minor_locator(), top + 1e-9)
    ax.yaxis.set_major_locator(FixedLocator([*major, middle]))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: label if v == middle else plain_number(v)))
    ax.yaxis.set_minor_locator(FixedLocator(minor))
    ax.yaxis.set_minor_formatter(NullFormatter())
    return middle


DETERMINISTIC_METADATA = {"png": {"Software": None}, "pdf": {"CreationDate": None, "ModDate": None, "Producer": None,
                                                              "Creator": None}}


def finish(fig, out_base: Path, title: str, note: str = "", info: str = "", top: float = 1.0,
           legend: tuple[list, list] | None = None, legend_cols: int = 6) -> list[Path]:
    """Title, then (given handles and labels) one legend for the whole figure in a band of its own
    under the title, its rows read in the given order, problems in red and plain facts (e.g. datasets not available here) in grey at
    the bottom, the panels laid out in what is left (measured, so nothing overlaps), PNG and PDF
    written atomically. `top` caps the panels' top edge (a fraction of the figure's height)."""
    renderer = fig.canvas.get_renderer()
    height = fig.get_figheight() * fig.dpi
    pad = 6 / height  # six pixels between bands
    heading = fig.suptitle(title, fontsize=11, y=1 - pad, va="top")
    head = heading.get_window_extent(renderer).y0 / height
    heading.set_in_layout(False)  # its room is kept by the rect below (tight_layout would keep it twice)
    if legend is not None and legend[0]:
        ncol = min(legend_cols, len(legend[0]))
        rows = -(-len(legend[0]) // ncol)
        # matplotlib fills a legend's columns first: reorder so that its rows read in the given order
        order = [r * ncol + c for c in range(ncol) for r in range(rows) if r * ncol + c < len(legend[0])]
        handles, labels = [legend[0][i] for i in order], [legend[1][i] for i in order]
        band = fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, head - pad), ncol=ncol, fontsize=LEGEND_FONTSIZE, frameon=False,
                          borderaxespad=0.0)
        head = band.get_window_extent(renderer).y0 / height
    foot = pad
    for text, color in ((note, "darkred"), (info, "0.35")):
        if text:
            line = fig.text(0.5, foot, text, ha="center", va="bottom", fontsize=8, color=color, wrap=True)
            foot = line.get_window_extent(renderer).y1 / height + pad / 2
    fig.tight_layout(rect=(0, foot, 1, min(top, head - pad)))
    out_base = Path(out_base)
    out_base.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in ("png", "pdf"):
        path = out_base.with_suffix(f".{ext}")
        with atomic_path(path) as tmp:  # no timestamps: the same CSV gives the same bytes (make plots is a no-op)
            fig.savefig(tmp, dpi=130, format=ext, metadata=DETERMINISTIC_METADATA[ext])
        paths.append(path)
    plt.close(fig)
    return paths


def empty_panel(ax, text: str):
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, fontsize=9, color="0.3", wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])
