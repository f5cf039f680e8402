"""Edit a JSON or JSONC file (comments, trailing commas) in place: only the span that changes moves.

An agent's settings file is the user's own: its comments, its order and its layout stay
as they were. Each edit parses the text into spans, then rewrites one member or one
array element; everything else is copied byte for byte. A member or element added is
written on lines of its own (in the file's indentation), so removing it again gives back
the text it was added to.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


class JsoncError(ValueError):
    """The text is not JSON (with comments) an agent would read."""


@dataclass
class Node:
    """A value and where it lies: ``text[start:end]``; an object's members, an array's elements."""

    start: int
    end: int
    kind: str  # "object", "array" or "scalar"
    members: list[tuple[str, int, Node]] = field(default_factory=list)
    """An object's members: key, the offset of the key's opening quote, value."""
    elements: list[Node] = field(default_factory=list)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0

    def fail(self, what: str) -> JsoncError:
        line = self.text.count("\n", 0, self.i) + 1
        return JsoncError(f"{what} at line {line}")

    def skip(self) -> None:
        """Past whitespace and comments."""
        text, n = self.text, len(self.text)
        while self.i < n:
            c = text[self.i]
            if c in " \t\r\n\ufeff":
                self.i += 1
            elif text.startswith("//", self.i):
                end = text.find("\n", self.i)
                self.i = n if end < 0 else end + 1
            elif text.startswith("/*", self.i):
                end = text.find("*/", self.i + 2)
                if end < 0:
                    raise self.fail("an unclosed comment")
                self.i = end + 2
            else:
                return

    def string(self) -> str:
        start = self.i
        self.i += 1
        while self.i < len(self.text):
            c = self.text[self.i]
            if c == "\\":
                self.i += 2
                continue
            self.i += 1
            if c == '"':
                return str(json.loads(self.text[start : self.i]))
        raise self.fail("an unclosed string")

    def value(self) -> Node:
        self.skip()
        if self.i >= len(self.text):
            raise self.fail("a missing value")
        start, c = self.i, self.text[self.i]
        if c == "{":
            return self._object(start)
        if c == "[":
            return self._array(start)
        if c == '"':
            self.string()
            return Node(start, self.i, "scalar")
        while self.i < len(self.text) and self.text[self.i] not in ",]}/ \t\r\n":
            self.i += 1
        if self.i == start:
            raise self.fail(f"an unexpected {c!r}")
        return Node(start, self.i, "scalar")

    def _object(self, start: int) -> Node:
        node = Node(start, start, "object")
        for _ in self._items(node, "}"):
            if not self.text.startswith('"', self.i):
                raise self.fail("a member without a quoted name")
            key_at = self.i
            key = self.string()
            self.skip()
            if not self.text.startswith(":", self.i):
                raise self.fail(f"no ':' after {key!r}")
            self.i += 1
            node.members.append((key, key_at, self.value()))
        return node

    def _array(self, start: int) -> Node:
        node = Node(start, start, "array")
        for _ in self._items(node, "]"):
            node.elements.append(self.value())
        return node

    def _items(self, node: Node, close: str) -> Iterator[None]:
        """Stop at each item of the container opening at ``self.i``; ``node`` ends at its ``close``."""
        self.i += 1
        while True:
            self.skip()
            if self.text.startswith(close, self.i):
                self.i += 1
                node.end = self.i
                return
            yield
            self._comma(close)

    def _comma(self, close: str) -> None:
        self.skip()
        if self.text.startswith(",", self.i):
            self.i += 1
        elif not self.text.startswith(close, self.i):
            raise self.fail(f"no ',' or '{close}'")


def parse(text: str) -> Node:
    """The spans of ``text``: one value (an empty text is an empty object)."""
    if not text.strip():
        return Node(0, 0, "object")
    parser = _Parser(text)
    node = parser.value()
    parser.skip()
    if parser.i != len(text):
        raise parser.fail("text after the value")
    return node


def loads(text: str, node: Node) -> Any:
    """The value ``node`` spans, as Python data."""
    if node.kind == "object":
        return {key: loads(text, value) for key, _, value in node.members}
    if node.kind == "array":
        return [loads(text, element) for element in node.elements]
    return json.loads(text[node.start : node.end])


def member(node: Node, key: str) -> Node | None:
    for name, _, value in node.members:
        if name == key:
            return value
    return None


def _indent_unit(text: str) -> str:
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            return line[: len(line) - len(stripped)]
    return "  "


def _line_indent(text: str, at: int) -> str:
    start = text.rfind("\n", 0, at) + 1
    line = text[start:at]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _render(value: Any, indent: str, unit: str) -> str:
    lines = json.dumps(value, indent=len(unit) if unit.strip(" ") == "" else unit, ensure_ascii=False)
    return lines.replace("\n", "\n" + indent)


def _insert(text: str, container: Node, entry: str) -> str:
    """``text`` with ``entry`` (a member or an element, rendered) last in ``container``, on its own line."""
    unit = _indent_unit(text)
    outer = _line_indent(text, container.start)
    inner = outer + unit
    ends = _ends(container)
    close = container.end - 1
    if not ends:
        return text[: container.start + 1] + f"\n{inner}{entry}\n{outer}" + text[close:]
    last = ends[-1]
    rest = text[last:close]
    if rest.lstrip().startswith(","):  # a trailing comma: the file's style, kept after the new one too
        at = _line_end(text, last + rest.index(",") + 1)
        return text[:at] + f"\n{inner}{entry}," + text[at:]
    at = _line_end(text, last)
    return text[:last] + "," + text[last:at] + f"\n{inner}{entry}" + text[at:]


def _line_end(text: str, at: int) -> int:
    """The end of ``at``'s line when only a comment follows there (it stays with its line), else ``at``."""
    end = text.find("\n", at)
    end = len(text) if end < 0 else end
    rest = text[at:end].strip()
    if not rest or rest.startswith("//") or (rest.startswith("/*") and rest.endswith("*/")):
        return end
    return at


def _ends(container: Node) -> list[int]:
    """Where each member's or element's value ends."""
    if container.kind == "object":
        return [value.end for _, _, value in container.members]
    return [element.end for element in container.elements]


def _indent_of_entry(text: str, container: Node) -> tuple[str, str]:
    unit = _indent_unit(text)
    return _line_indent(text, container.start) + unit, unit


def set_member(text: str, path: list[str], key: str, value: Any) -> str:
    """``text`` with the object at ``path`` (made when missing) holding ``key``: ``value``."""
    root = parse(text)
    if not text.strip():
        text, root = "{}\n", parse("{}\n")
    node = root
    for depth, name in enumerate(path):
        if node.kind != "object":
            raise JsoncError(f"{'.'.join(path[:depth]) or 'the file'} is not an object")
        child = member(node, name)
        if child is None:
            inner, unit = _indent_of_entry(text, node)
            nested = _nest([*path[depth + 1 :], key], value)
            return _insert(text, node, f"{json.dumps(name)}: {_render(nested, inner, unit)}")
        node = child
    if node.kind != "object":
        raise JsoncError(f"{'.'.join(path) or 'the file'} is not an object")
    current = member(node, key)
    inner, unit = _indent_of_entry(text, node)
    if current is None:
        return _insert(text, node, f"{json.dumps(key)}: {_render(value, inner, unit)}")
    if loads(text, current) == value:
        return text
    return text[: current.start] + _render(value, inner, unit) + text[current.end :]


def append_element(text: str, path: list[str], value: Any) -> str:
    """``text`` with ``value`` last in the array at ``path`` (made, with its objects, when missing)."""
    root = parse(text) if text.strip() else None
    node = root
    for depth, name in enumerate(path):
        child = member(node, name) if node is not None and node.kind == "object" else None
        if child is None:
            return set_member(text, path[:depth], name, _nest(path[depth + 1 :], [value]))
        node = child
    if node is None or node.kind != "array":
        raise JsoncError(f"{'.'.join(path)} is not an array")
    inner, unit = _indent_of_entry(text, node)
    return _insert(text, node, _render(value, inner, unit))


def _nest(path: list[str], value: Any) -> Any:
    for name in reversed(path):
        value = {name: value}
    return value


def _cut(text: str, item: Node, at: int, container: Node, index: int) -> str:
    """``text`` without the member or element that starts at ``at`` and ends with ``item``."""
    ends = _ends(container)
    line_start = text.rfind("\n", 0, at)
    start = line_start if line_start >= 0 and not text[line_start + 1 : at].strip() else at
    end = item.end
    rest = text[end:]
    stripped = rest.lstrip(" \t\r\n")
    if stripped.startswith(","):
        end += len(rest) - len(stripped) + 1
    if index == len(ends) - 1 and index > 0 and not stripped.startswith(","):
        # The last one goes: the comma before it goes too (a trailing comma is JSONC only).
        comma = text.find(",", ends[index - 1], start)
        if comma >= 0:
            return text[:comma] + text[comma + 1 : start] + text[end:]
    if len(ends) == 1:
        start = container.start + 1
        end = container.end - 1
    return text[:start] + text[end:]


def remove_member(text: str, path: list[str], key: str) -> str:
    """``text`` without ``key`` in the object at ``path``; an object it leaves empty goes too."""
    if not text.strip():
        return text
    node = parse(text)
    for name in path:
        child = member(node, name) if node.kind == "object" else None
        if child is None:
            return text
        node = child
    for index, (name, at, value) in enumerate(node.members):
        if name == key:
            if len(node.members) == 1 and path:
                return remove_member(text, path[:-1], path[-1])
            return _cut(text, value, at, node, index)
    return text


def remove_elements(text: str, path: list[str], keep: Any) -> str:
    """``text`` without the elements of the array at ``path`` for which ``keep(element)`` is false;
    an array (and objects) it leaves empty go too."""
    if not text.strip():
        return text
    while True:
        node = parse(text)
        for name in path:
            child = member(node, name) if node.kind == "object" else None
            if child is None or (name == path[-1] and child.kind != "array"):
                return text
            node = child
        doomed = [i for i, e in enumerate(node.elements) if not keep(loads(text, e))]
        if not doomed:
            return text
        if len(doomed) == len(node.elements):
            return remove_member(text, path[:-1], path[-1])
        index = doomed[-1]
        element = node.elements[index]
        text = _cut(text, element, element.start, node, index)
