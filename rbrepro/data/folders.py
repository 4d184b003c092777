"""Where rbrepro keeps data: the cache folder (`$RBREPRO_DATA`, else the platform's user cache
folder), resolved once against the folder the process started in."""

from __future__ import annotations

import functools
import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)


def _startup_folder() -> Path:
    try:
        return Path.cwd()
    except OSError:  # the working folder was removed: relative paths then fail where they are used
        return Path(".")


STARTUP_FOLDER = _startup_folder()


def default_data_dir() -> Path:
    """The platform's cache folder for rbrepro (~/.cache/rbrepro on Linux, ~/Library/Caches/rbrepro
    on macOS, %LOCALAPPDATA%\\rbrepro\\Cache on Windows), as pooch does: one cache whatever the
    working folder, so `load_dataset("ijcnn1")` finds the data from anywhere."""
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("rbrepro", appauthor=False))


def data_dir(path: str | os.PathLike | None = None) -> Path:
    """The cache folder: `path`, else $RBREPRO_DATA, else the platform's cache folder
    (`default_data_dir`); `~` expanded, and a relative folder taken from the working folder at
    startup (STARTUP_FOLDER), so a later change of folder does not move the cache."""
    chosen = path or os.environ.get("RBREPRO_DATA")
    if not chosen:
        _warn_about_an_old_cache()
    folder = Path(chosen).expanduser() if chosen else default_data_dir()
    return folder if folder.is_absolute() else STARTUP_FOLDER / folder


@functools.lru_cache(maxsize=1)
def _warn_about_an_old_cache() -> None:
    """Once per process: a data cache in ./datasets, which is not the default cache, is named rather than
    passed over silently."""
    old = STARTUP_FOLDER / "datasets"
    if (old / "hashes.lock.json").exists() or (old / "raw").is_dir():
        log.warning("rbrepro: %s holds a data cache, but the default cache is %s; set RBREPRO_DATA=%s to "
                    "keep using it (or move it there)", old, default_data_dir(), old)
