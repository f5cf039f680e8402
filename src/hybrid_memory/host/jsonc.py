"""JSON for the hooks' fast path: the standard library's own C scanner and encoder, without ``json``.

Importing the ``json`` package loads ``re`` and with it ``enum``: about a third of what a prompt
hook's process imports, for the regular expressions that only its pure-Python fallbacks use.
:func:`dumps` and :func:`loads` call the accelerator module ``json`` itself calls (``_json``),
with ``json``'s defaults, so they give and take exactly what ``json.dumps`` and ``json.loads``
do; an interpreter without that module gets ``json`` itself.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

try:
    from _json import encode_basestring, encode_basestring_ascii, make_encoder, make_scanner

    ACCELERATED = True
except ImportError:  # an interpreter without CPython's accelerator: the json package
    ACCELERATED = False

WHITESPACE = " \t\n\r"
"""What JSON allows around a value."""


def _unserializable(value: object) -> Any:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


class _Decoding:
    """What the C scanner reads off its context: ``json.JSONDecoder``'s defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__


_scan = make_scanner(_Decoding()) if ACCELERATED else None  # type: ignore[arg-type]  # duck-typed context


def dumps(value: object, *, separators: tuple[str, str] = (", ", ": "), ensure_ascii: bool = True) -> str:
    """``json.dumps(value, separators=separators, ensure_ascii=ensure_ascii)``."""
    if not ACCELERATED:
        import json

        return json.dumps(value, separators=separators, ensure_ascii=ensure_ascii)
    item, key = separators
    strings = encode_basestring_ascii if ensure_ascii else encode_basestring
    # A new encoder a call, as json makes one: its markers (for circular references) are this call's.
    encode = make_encoder({}, _unserializable, strings, None, key, item, False, False, True)
    return "".join(encode(value, 0))


def loads(text: str | bytes) -> Any:
    """``json.loads(text)`` (bytes as UTF-8); ``ValueError`` when ``text`` is not one JSON value."""
    if _scan is None:
        import json

        return json.loads(text)
    if isinstance(text, bytes):
        text = text.decode()  # a UnicodeDecodeError is a ValueError
    start = len(text) - len(text.lstrip(WHITESPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration as stop:
        raise ValueError(f"Expecting value: character {stop.value} of {len(text)}") from None
    if text[end:].strip(WHITESPACE):
        raise ValueError(f"Extra data: character {end} of {len(text)}")
    return value
