"""Atomic file writes: a reader sees the old file or the complete new one, never a part."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def remove_dead_parts(dest: Path) -> list[Path]:
    """Remove the temporary files that writers of `dest` killed before they could clean up (SIGKILL,
    power loss) left beside it: `.NAME.PID.*.part` whose process is gone. A live writer's are kept."""
    removed = []
    for part in dest.parent.glob(f".{dest.name}.*.part"):
        pid = part.name[len(dest.name) + 2:].split(".", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            with contextlib.suppress(FileNotFoundError):
                part.unlink()
                removed.append(part)
    return removed


@contextlib.contextmanager
def atomic_path(dest: Path | str):
    """Yield a temporary path beside `dest`; on success it replaces `dest` atomically.

    The temporary name carries the writer's pid, so a later write of `dest` removes what a killed
    writer left (remove_dead_parts). A symlink is followed: the file it points to is replaced, the link stays. A destination
    that exists but is not a regular file (/dev/null, /dev/stdout, a FIFO) is never replaced:
    the writer writes to it directly, as a shell redirection would."""
    dest = Path(os.path.realpath(dest))
    if dest.exists() and not dest.is_file():
        yield dest
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    remove_dead_parts(dest)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.{os.getpid()}.", suffix=".part", dir=dest.parent)
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the usual mode
    try:
        yield Path(tmp)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, dest)
    except OSError as exc:
        if exc.filename:
            raise
        # a full disk inside a writer (savefig, to_csv, np.savez) reports no file: name the one being written
        raise type(exc)(exc.errno, exc.strerror or str(exc), str(dest)) from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def write_text_atomic(dest: Path | str, text: str) -> None:
    with atomic_path(dest) as tmp:
        Path(tmp).write_text(text)
