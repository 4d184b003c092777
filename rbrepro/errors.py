"""One hierarchy for the errors a user can fix: bad input, files, settings, or a machine too small.
Its root and the general kinds are here; an error that belongs to one part (ConfigError in yamlconf,
ParseError in data.files, MemoryLimitError in memory, ModelFileError in models.persist, the cluster's
in distributed.errors, ...) subclasses one of them beside the code that raises it, so the command line
catches them all as RbreproError.

Each carries a message that names the file, line, key, option or value at fault and what to do.
The command line prints these, and an OSError about a file, as one line (exit status 2); any other
exception is a bug in rbrepro and keeps its traceback. Each kind also subclasses the built-in
exception a caller would expect (ValueError, KeyError, FileNotFoundError, MemoryError), so
scikit-learn and plain Python code that catch those catch these too.
"""

from __future__ import annotations


class RbreproError(Exception):
    """A problem with the user's input, files, settings or machine (not a bug)."""


class InvalidParameter(RbreproError, ValueError):
    """A parameter or option value outside its range."""


class UnknownName(RbreproError, KeyError):
    """A name that is not registered (a dataset, say); the message lists the known ones."""

    def __str__(self) -> str:  # KeyError's str() would quote the message
        return str(self.args[0]) if self.args else ""


class MissingData(RbreproError, FileNotFoundError):
    """Data or results that are not where they were asked for; the message says how to get them."""
