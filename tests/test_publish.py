"""Publishing from one commit (`rbrepro.published.publish`): the worktree, the row checks and the copy,
on a tiny git repository and fake runs (no sweep runs here)."""

from __future__ import annotations

import csv
import subprocess
from pathlib import Path

import pytest

from rbrepro.published.publish import (
    DONE,
    PublishError,
    publish,
    resolve_commit,
    row_problems,
    run_commands,
    worktree_for,
)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    root.mkdir()
    _git(root, "init", "-q")
    _git(root, "config", "user.email", "t@example.org")
    _git(root, "config", "user.name", "t")
    (root / "configs").mkdir()
    (root / "configs" / "fig6.yaml").write_text("name: fig6\n")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "one")
    return root


def _rows(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["method", "git_commit", "git_dirty"])
        writer.writeheader()
        writer.writerows(rows)


def test_rows_from_another_commit_or_a_dirty_tree_are_named(tmp_path):
    sha = "a" * 40
    good = tmp_path / "good.csv"
    _rows(good, [{"method": "rb", "git_commit": sha, "git_dirty": "False"}] * 3)
    assert row_problems(good, sha) == []
    mixed = tmp_path / "mixed.csv"
    _rows(mixed, [{"method": "rb", "git_commit": sha, "git_dirty": "False"},
                  {"method": "rb", "git_commit": "b" * 40, "git_dirty": "False"},
                  {"method": "rb", "git_commit": sha, "git_dirty": "True"}])
    assert row_problems(mixed, sha) == [f"{mixed}: 1 row(s) from commit bbbbbbbbbbbb (lines 3)",
                                        f"{mixed}: 1 row(s) from a dirty tree (lines 4)"]
    assert row_problems(tmp_path / "none.csv", sha) == [f"{tmp_path / 'none.csv'}: no rows"]
    (tmp_path / "old.csv").write_text("method\nrb\n")
    assert "no git_commit, git_dirty column" in row_problems(tmp_path / "old.csv", sha)[0]


def test_the_worktree_lies_outside_is_at_the_commit_and_is_reused(repo, tmp_path):
    sha = resolve_commit(repo, "HEAD")
    tree = worktree_for(repo, sha)
    assert tree.parent == repo.parent and _git(tree, "rev-parse", "HEAD") == sha
    (tree / "results").mkdir()
    (tree / "results" / "x.csv").write_text("own output\n")  # a run's own output keeps the tree clean
    assert worktree_for(repo, sha) == tree
    with pytest.raises(PublishError, match="outside this checkout"):
        worktree_for(repo, sha, repo / "inside")
    (tree / "configs" / "fig6.yaml").write_text("changed\n")
    with pytest.raises(PublishError, match="has changes outside"):
        worktree_for(repo, sha)
    (repo / "more.txt").write_text("x")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "two")
    with pytest.raises(PublishError, match="is at"):
        worktree_for(repo, resolve_commit(repo, "HEAD"), tree)


class FakeRunner:
    """Writes each sweep's rows as `commit` (the worktree's HEAD unless told), records every command."""

    def __init__(self, commit: str | None = None, dirty: str = "False"):
        self.commit, self.dirty, self.commands = commit, dirty, []

    def __call__(self, command, cwd, env=None):
        self.commands.append((list(command), Path(cwd)))
        if "sweep" in command:
            out = Path(cwd) / command[command.index("--out") + 1]
            sha = self.commit or _git(Path(cwd), "rev-parse", "HEAD")
            _rows(out / "results.csv", [{"method": "rb", "git_commit": sha, "git_dirty": self.dirty}])
            (out / "cells").mkdir(exist_ok=True)
            (out / "config.resolved.yaml").write_text("name: fig6\n")
        return subprocess.CompletedProcess(command, 0)


def test_a_publish_copies_only_rows_of_the_commit_and_resumes(repo):
    runner = FakeRunner()
    copied = publish(repo, "HEAD", ("fig6",), python="py", runner=runner, say=lambda _: None)
    assert sorted(p.name for p in copied) == ["config.resolved.yaml", "results.csv"]
    assert not (repo / "results" / "fig6" / "cells").exists()
    ran = [c for c, _ in runner.commands]
    assert ["py", "-m", "rbrepro", "sweep", "configs/fig6.yaml", "--out", "results/fig6"] in ran
    assert ran[-2:] == [["py", "-m", "rbrepro", "plot", "fig6", "results/fig6", "--out", "figures/fig6"],
                        ["py", "-m", "rbrepro", "report"]]
    sweeps = [c for c, cwd in runner.commands if "sweep" in c]
    assert all(cwd != repo for c, cwd in runner.commands if "sweep" in c) and len(sweeps) == 1
    # a second publish of the same commit: the run was checked once, it is not run again
    again = FakeRunner()
    publish(repo, "HEAD", ("fig6",), python="py", runner=again, say=lambda _: None)
    assert not [c for c, _ in again.commands if "sweep" in c]


@pytest.mark.parametrize("runner", [FakeRunner(commit="c" * 40), FakeRunner(dirty="True")])
def test_a_publish_refuses_rows_from_another_commit_or_a_dirty_tree(repo, runner):
    with pytest.raises(PublishError, match="not published") as caught:
        publish(repo, "HEAD", ("fig6",), python="py", runner=runner, say=lambda _: None)
    assert "cccccccccccc" in str(caught.value) or "dirty tree" in str(caught.value)
    assert not (repo / "results").exists()  # nothing copied
    tree = [cwd for c, cwd in runner.commands if "sweep" in c][0]
    assert not (tree / "results" / "fig6" / DONE).exists()


def test_the_runs_are_made_as_the_makefile_makes_them():
    assert run_commands("fig3", "py")[-1][-2:] == ["--reuse-from", "results/fig5"]
    assert run_commands("fig3", "py")[0] == ["py", "-m", "rbrepro", "fetch", "--all", "-q"]
    assert run_commands("scaling", "py") == [["py", "-m", "rbrepro", "sweep", "configs/scaling.yaml", "--out",
                                              "results/scaling", "--memory-limit", "20"]]
    assert run_commands("theory", "py")[0][3] == "diagnose"
    with pytest.raises(PublishError, match="unknown run"):
        publish(Path("."), "HEAD", ("fig9",))
