"""The hostile-input battery's cases of what lies around a run: data too small or too uniform to learn
from, damaged results folders read by summary, plot and compare, the report outside a checkout or over
a file it did not write, and a cluster address that accepts the connection and never answers."""

from __future__ import annotations

import shutil
import socket
import threading
from pathlib import Path

from bench.battery_cases import REPO, Case, write


def _rows(path: Path, labels) -> Path:
    return write(path, "".join(f"{y} 1:{(7 * i) % 10 / 10 + 0.05:.2f} 2:{(3 * i) % 10 / 10 + 0.05:.2f}\n"
                               for i, y in enumerate(labels)))


def degenerate_cases(tmp: Path) -> list[Case]:
    d = tmp / "degenerate"
    two, three = _rows(d / "two.txt", [1, -1]), _rows(d / "three.txt", [1, -1, 1])
    flat, one = _rows(d / "flat.txt", [2.5] * 40), _rows(d / "one.txt", [1] * 30)
    train, zeros = _rows(d / "tr.txt", [i / 10 for i in range(30)]), _rows(d / "zeros.txt", [0] * 10)
    return [
        Case("degenerate", "2 rows of 2 classes", ["train", two, "--R", "8"], (str(two), "too few rows")),
        Case("degenerate", "2 rows of 2 classes, --sigma auto", ["train", two, "--R", "8", "--sigma", "auto"],
             (str(two), "too few rows")),
        Case("degenerate", "3 rows of 2 classes, --sigma auto", ["train", three, "--R", "8", "--sigma", "auto"],
             (str(three), "too few rows")),
        Case("degenerate", "one class in the file", ["train", one, "--R", "8"], (str(one), "one class")),
        Case("degenerate", "constant regression targets", ["train", flat, "--task", "regression", "--R", "8"],
             (str(flat), "constant targets")),
        Case("degenerate", "constant targets, --sigma auto",
             ["train", flat, "--task", "regression", "--R", "8", "--sigma", "auto"], (str(flat), "constant targets")),
        Case("degenerate", "test targets all 0 (NaN stated)", ["train", train, "--test", zeros, "--task",
                                                                "regression", "--R", "8"],
             expect="ok", check_ok=lambda out: "rel_error NaN (undefined" in out),
    ]


def _folder(tmp: Path, name: str, edit=None, config_edit=None) -> Path:
    import pandas as pd

    out = tmp / "folders" / name
    out.mkdir(parents=True, exist_ok=True)
    for part in ("results.csv", "config.resolved.yaml"):
        shutil.copy(REPO / "results" / "fig4" / part, out / part)
    if edit:
        edit(pd.read_csv(out / "results.csv", low_memory=False)).to_csv(out / "results.csv", index=False)
    if config_edit:
        (out / "config.resolved.yaml").write_text(config_edit((out / "config.resolved.yaml").read_text()))
    return out


def _failed_without_error(frame):
    frame.loc[frame.index[0], "status"] = "failed"
    return frame.drop(columns=["error"])


def results_folder_cases(tmp: Path) -> list[Case]:
    import pandas as pd

    no_error = _folder(tmp, "no_error", _failed_without_error)
    cut = _folder(tmp, "cut", config_edit=lambda t: t[: len(t) // 2] + "\n  - [unclosed\n")
    twice = _folder(tmp, "twice", lambda f: pd.concat([f, f.iloc[[3]]]))
    intact = _folder(tmp, "intact")
    not_a_mapping = _folder(tmp, "list_config", config_edit=lambda t: "- a\n- b\n")
    garbage = _folder(tmp, "garbage")
    (garbage / "results.csv").write_bytes(b"\xff\xfe\x00binary" * 50)
    cases = []
    for command in (["summary"], ["plot", "fig4"], ["compare"]):
        verb = command[0]
        cases += [
            Case("results folder", f"{verb}: a failed row, no error column", [*command, no_error],
                 (str(no_error / "results.csv"), "error")),
            Case("results folder", f"{verb}: a cut resolved config", [*command, cut], ("config.resolved.yaml",)),
            Case("results folder", f"{verb}: a cell key twice", [*command, twice], ("results.csv:122", "again")),
            Case("results folder", f"{verb}: binary bytes as results.csv", [*command, garbage],
                 (str(garbage / "results.csv"),)),
            Case("results folder", f"{verb}: a resolved config that is a list", [*command, not_a_mapping],
                 ("config.resolved.yaml",)),
        ]
    (tmp / "folders" / "loose").mkdir(parents=True, exist_ok=True)  # a CSV alone, in a folder without results.csv
    named = shutil.copy(intact / "results.csv", tmp / "folders" / "loose" / "fig4-rows.csv")
    cases.append(Case("results folder", "summary: a CSV named directly", ["summary", named],
                      expect="ok", check_ok=lambda out: "no results" not in out and "120 cells: 120 ok" in out))
    return cases


def report_cases(tmp: Path) -> list[Case]:
    checkout = tmp / "checkout"
    (checkout / "results").mkdir(parents=True, exist_ok=True)
    write(checkout / "pyproject.toml", '[project]\nname = "rbrepro"\n')
    notes = write(checkout / "REPRODUCTION.md", "my own notes\n")

    def unchanged(err: str) -> bool:
        return notes.read_text() == "my own notes\n"

    return [
        Case("report", "report --check outside a checkout", ["report", "--check", "--root", tmp / "nowhere"],
             ("not a checkout of rbrepro",)),
        Case("report", "report outside a checkout", ["report", "--root", tmp / "nowhere"], ("not a checkout",),
             check_err=lambda err: not (tmp / "nowhere" / "REPRODUCTION.md").exists()),
        Case("report", "report over a REPRODUCTION.md it did not write", ["report", "--root", checkout],
             ("REPRODUCTION.md", "did not write"), check_err=unchanged),
    ]


def _silent_server() -> int:
    """A server on 127.0.0.1 that accepts every connection and never sends a byte (for this process's life)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held = []

    def serve():
        while True:
            conn, _ = server.accept()
            held.append(conn)

    threading.Thread(target=serve, daemon=True).start()
    return server.getsockname()[1]


def cluster_cases(tmp: Path) -> list[Case]:
    port = _silent_server()
    config = write(tmp / "cluster" / "c.yaml", "name: c\ndatasets:\n  digits: {sigma: [1], R: [8]}\n")
    address = f"tcp://127.0.0.1:{port}"
    return [
        Case("cluster", "--cluster at a port that never answers", ["train", "digits", "--R", "8", "--cluster", address],
             (address, "no dask handshake within 10 s")),
        Case("cluster", "--scheduler at a port that never answers",
             ["sweep", config, "--out", tmp / "cluster" / "out", "--scheduler", address, "-q"],
             (address, "no dask handshake within 10 s")),
        Case("cluster", "--cluster port that is not a number", ["train", "digits", "--cluster", "tcp://127.0.0.1:x"],
             ("tcp://HOST:PORT",)),
        Case("cluster", "RBREPRO_CLUSTER_TIMEOUT=abc", ["train", "digits", "--cluster", address],
             ("RBREPRO_CLUSTER_TIMEOUT",), env={"RBREPRO_CLUSTER_TIMEOUT": "abc"}),
    ]
