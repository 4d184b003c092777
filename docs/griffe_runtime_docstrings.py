"""A griffe extension for the API reference (mkdocs.yml): a class whose docstring is assigned at
import (`__doc__ = ...`, as the estimators share their parameter text) has none that static analysis
can read, so its docstring is taken from the imported class instead. Every other object is read
statically, without importing anything."""

from __future__ import annotations

import inspect

import griffe


class RuntimeDocstrings(griffe.Extension):
    def on_class_instance(self, *, node, cls: griffe.Class, agent, **kwargs) -> None:
        if cls.docstring is not None and cls.docstring.value.strip():
            return
        try:
            obj = griffe.dynamic_import(cls.path)
        except ImportError:
            return
        doc = vars(obj).get("__doc__") if isinstance(obj, type) else None
        if doc:
            cls.docstring = griffe.Docstring(inspect.cleandoc(doc), parent=cls)
