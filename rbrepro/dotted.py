"""How the registries (methods, solvers) name code without importing it: a "module:Name" string,
imported on use, so that listing the registry loads neither numba nor a plug-in's package."""

from __future__ import annotations

import importlib


def resolve(target):
    """A class (or function) itself, or the one a "module:Name" string names (imported on use)."""
    if not isinstance(target, str):
        return target
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)
