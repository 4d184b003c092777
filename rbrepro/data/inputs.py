"""What the data layer reads from outside: input files and numeric environment settings.

Only regular files are read as data. A FIFO blocks its reader until a writer comes, /dev/zero
never ends and a socket cannot be read at all, so named as a data file, a dataset's source or a
mirror's MANIFEST.tsv each would hang or fill the disk: they are refused at once, naming the
path. A symlink to a regular file is followed; a symlink loop is named as such.

A numeric setting must lie in its documented range: 1e308 seconds would overflow a socket
timeout, and nan or a negative number would silently switch a limit off.
"""

from __future__ import annotations

import errno
import os
import re
import stat

from rbrepro.errors import RbreproError

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))
_PASSWORD = re.compile(r"(://[^/@\s:'\"]*):[^/@\s'\"]*@")


class InputFileError(RbreproError, ValueError):
    """A path that cannot be read as a data file (not a regular file, a symlink loop); names the path."""


def redact(text: str) -> str:
    """`text` with the password of every URL in it replaced by *** (user:***@host), so a URL with
    credentials can be stored or shown."""
    return _PASSWORD.sub(r"\1:***@", str(text))


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a plain file")


def _require_regular(path, mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise InputFileError(f"{path}: not a regular file ({_kind(mode)}); give a file of data")


def _named(path, exc: OSError) -> Exception:
    """A symlink loop as a clear error naming the path; other OS errors as they are, with the path."""
    if exc.errno == errno.ELOOP:
        return InputFileError(f"{path}: a symbolic link loop (too many levels of symbolic links)")
    if not exc.filename:
        exc.filename = str(path)
    return exc


def regular_stat(path) -> os.stat_result:
    """The stat of `path` (symlinks followed) if it is a regular file; InputFileError if it is not
    or is a symlink loop, FileNotFoundError if it is absent."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise _named(path, exc) from None
    _require_regular(path, st.st_mode)
    return st


def open_regular(path):
    """`path` opened for binary reading, refused at once unless it is a regular file. The file is
    checked before it is opened (opening some devices has effects) and again on the open descriptor
    (it may have been replaced meanwhile), opened non-blocking so that a FIFO never blocks."""
    regular_stat(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise _named(path, exc) from None
    try:
        _require_regular(path, os.fstat(fd).st_mode)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")
