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


@contextlib.contextmanager
def atomic_path(dest: Path | str):
    """Yield a temporary path beside `dest`; on success it replaces `dest` atomically.

    A symlink is followed: the file it points to is replaced, the link stays. A destination
    that exists but is not a regular file (/dev/null, /dev/stdout, a FIFO) is never replaced:
    the writer writes to it directly, as a shell redirection would."""
    dest = Path(os.path.realpath(dest))
    if dest.exists() and not dest.is_file():
        yield dest
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
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
