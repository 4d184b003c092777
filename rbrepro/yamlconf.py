"""Reading YAML into validated values, with errors that name file, line and key path.

Used by sweep configs and user dataset files. YAML is composed with the safe loader
(no tags that build objects), duplicate keys are refused, and a size budget stops
alias bombs before they expand.
"""

from __future__ import annotations

import numbers
import re

import yaml

from rbrepro.errors import RbreproError

#: scientific notation YAML 1.1 leaves as a string: 1e-3, 5E+2, -2e4
_NUMBER_LIKE = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+")

NODE_BUDGET = 100_000
#: deepest nesting of lists and mappings a config may have (real configs use 4); checked on the
#: event stream, which PyYAML parses without recursion, before the recursive composer runs
MAX_DEPTH = 64


class ConfigError(RbreproError, ValueError):
    """An invalid config; the message is one line naming file, line and key path."""


class Node:
    """A YAML value with the line it came from, for error messages."""

    def __init__(self, value, line: int):
        self.value = value
        self.line = line


def _check_depth(text: str, file: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH, naming the line, before composing recurses into it."""
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                raise ConfigError(f"{file}:{event.start_mark.line + 1}: lists and mappings nested more than "
                                  f"{MAX_DEPTH} deep")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def compose(text: str, file: str):
    try:
        _check_depth(text, file)
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{file}:{mark.line + 1}" if mark else file
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{where}: not valid YAML: {problem}") from None
    if root is None:
        raise ConfigError(f"{file}: the config is empty")
    return _wrap(root, file, budget=[NODE_BUDGET])


def _wrap(node, file: str, budget: list[int]) -> Node:
    """Convert a composed YAML node to Node trees; rejects tags, duplicates and size bombs."""
    budget[0] -= 1
    line = node.start_mark.line + 1
    if budget[0] < 0:
        raise ConfigError(f"{file}:{line}: the config is too large (aliases expanding without bound?)")
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Node] = {}
        for k, v in node.value:
            if not isinstance(k, yaml.ScalarNode):
                raise ConfigError(f"{file}:{k.start_mark.line + 1}: mapping keys must be plain names")
            if k.value in out:
                raise ConfigError(f"{file}:{k.start_mark.line + 1}: duplicate key {k.value!r}")
            out[k.value] = _wrap(v, file, budget)
        return Node(out, line)
    if isinstance(node, yaml.SequenceNode):
        return Node([_wrap(v, file, budget) for v in node.value], line)
    try:
        value = yaml.constructor.SafeConstructor().construct_object(node)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{file}:{line}: {getattr(exc, 'problem', exc)}") from None
    return Node(value, line)


class Reader:
    def __init__(self, file: str):
        self.file = file

    def fail(self, node: Node, path: str, message: str):
        raise ConfigError(f"{self.file}:{node.line}: {path}: {message}")

    def mapping(self, node: Node, path: str, allowed: tuple[str, ...]) -> dict[str, Node]:
        if not isinstance(node.value, dict):
            self.fail(node, path or "(top level)", f"expected a mapping, got {type(node.value).__name__}")
        for key, child in node.value.items():
            if key not in allowed:
                self.fail(child, f"{path}.{key}" if path else key,
                          f"unknown key; allowed here: {', '.join(allowed)}")
        return node.value

    def number(self, node: Node, path: str, positive=True, integer=False, allow_zero=False):
        v = node.value
        if isinstance(v, str) and _NUMBER_LIKE.fullmatch(v.strip()):
            v = float(v)  # YAML 1.1 reads 1e-3 (no dot) as a string: take the number the user meant
            if integer and v.is_integer():
                v = int(v)
        kind = "integer" if integer else "number"
        ok = isinstance(v, numbers.Integral) if integer else isinstance(v, numbers.Real)
        if isinstance(v, bool) or not ok or (not integer and not (v == v and abs(v) != float("inf"))):
            sign = ("non-negative " if allow_zero else "positive ") if positive else ""
            self.fail(node, path, f"expected a {sign}{kind}, got {v!r}")
        if positive and (v < 0 or (v == 0 and not allow_zero)):
            self.fail(node, path, f"expected a {'non-negative' if allow_zero else 'positive'} {kind}, got {v!r}")
        return int(v) if integer else float(v)

    @staticmethod
    def items(node: Node) -> list[Node]:
        """A list's items, or the one value given alone."""
        return node.value if isinstance(node.value, list) else [node]

    def number_list(self, node: Node, path: str, integer=False, allow_zero=False) -> tuple:
        items = self.items(node)
        if not items:
            self.fail(node, path, "expected at least one value")
        values = tuple(self.number(n, f"{path}[{i}]", integer=integer, allow_zero=allow_zero) for i, n in enumerate(items))
        if len(set(values)) != len(values):
            self.fail(node, path, f"repeated values in {list(values)}")
        return values

    def choice(self, node: Node, path: str, allowed: tuple[str, ...]) -> str:
        if node.value not in allowed:
            self.fail(node, path, f"expected one of {', '.join(allowed)}, got {node.value!r}")
        return node.value

    def choice_list(self, node: Node, path: str, allowed: tuple[str, ...]) -> tuple[str, ...]:
        """One or several of `allowed` (a list, or one value alone), each checked as path[i]."""
        return tuple(self.choice(n, f"{path}[{i}]", allowed) for i, n in enumerate(self.items(node)))

    def boolean(self, node: Node, path: str) -> bool:
        if not isinstance(node.value, bool):
            self.fail(node, path, f"expected true or false, got {node.value!r}")
        return node.value

    def string(self, node: Node, path: str) -> str:
        if not isinstance(node.value, str) or not node.value:
            self.fail(node, path, f"expected a non-empty string, got {node.value!r}")
        return node.value
