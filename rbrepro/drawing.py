"""What every figure draws with (the paper's figures in plots/, Theorem 1's in theory/): the
methods' names, colours and markers, a grid of panels, an empty panel's note, and PNG and PDF
written atomically with the same bytes for the same rows. The one module that sets matplotlib up."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from rbrepro.data.atomic import atomic_path  # noqa: E402
from rbrepro.models.registry import METHODS  # noqa: E402


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


def new_figure(n_rows: int, n_cols: int, width: float = 4.2, height: float = 3.2):
    return plt.subplots(max(1, n_rows), n_cols, figsize=(width * n_cols, height * max(1, n_rows)), squeeze=False)


DETERMINISTIC_METADATA = {"png": {"Software": None}, "pdf": {"CreationDate": None, "ModDate": None, "Producer": None,
                                                              "Creator": None}}


def finish(fig, out_base: Path, title: str, note: str = "", info: str = "", top: float = 0.96) -> list[Path]:
    """Title, problems in red and plain facts (e.g. datasets not available here) in grey at the
    bottom, PNG and PDF written atomically."""
    fig.suptitle(title, fontsize=11)
    if note:
        fig.text(0.5, 0.005, note, ha="center", fontsize=8, color="darkred", wrap=True)
    if info:
        fig.text(0.5, 0.025 if note else 0.005, info, ha="center", fontsize=8, color="0.35", wrap=True)
    fig.tight_layout(rect=(0, 0.015 + 0.02 * bool(note) + 0.02 * bool(info), 1, top))
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
