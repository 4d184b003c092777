"""Logging: rbrepro's modules write to loggers under "rbrepro" (silent unless configured). The
command line's --verbose shows INFO lines on stderr (-vv: DEBUG), and --log-file appends DEBUG
lines with timestamps to a file, so a days-long sweep leaves a record of what it did and when.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

ROOT = "rbrepro"
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: how the command line's logging reaches a sweep's worker processes (spawned: they inherit the
#: environment, not the handlers)
ENV = "RBREPRO_LOG"


def configure(verbosity: int = 0, log_file: Path | None = None) -> None:
    """Route the "rbrepro" loggers: verbosity 1 = INFO, 2+ = DEBUG on stderr; `log_file` gets DEBUG.
    Called once by the command line; a library user configures logging their own way."""
    logger = logging.getLogger(ROOT)
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
        handler.close()
    levels = []
    if verbosity > 0:
        stream = logging.StreamHandler()
        stream.setLevel(logging.INFO if verbosity == 1 else logging.DEBUG)
        stream.setFormatter(logging.Formatter("rbrepro: %(message)s"))
        logger.addHandler(stream)
        levels.append(stream.level)
    if log_file is not None:
        handler = logging.FileHandler(Path(log_file).expanduser(), encoding="utf-8")
        handler.setLevel(logging.DEBUG)
        handler.setFormatter(logging.Formatter(FORMAT))
        logger.addHandler(handler)
        levels.append(logging.DEBUG)
    logger.setLevel(min(levels) if levels else logging.WARNING)
    logger.propagate = not levels  # configured here: not twice through the root logger
    if levels:
        os.environ[ENV] = json.dumps({"verbosity": verbosity, "log_file": str(log_file) if log_file else None})
    else:
        os.environ.pop(ENV, None)


def configure_from_environment() -> None:
    """In a worker process: the logging its command line asked for (ENV), if any."""
    text = os.environ.get(ENV)
    if not text:
        return
    try:
        asked = json.loads(text)
        configure(int(asked.get("verbosity") or 0), asked.get("log_file"))
    except (ValueError, TypeError, OSError):  # a damaged setting must not stop a cell: run unlogged
        return
