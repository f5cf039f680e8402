"""The hooks' JSON gives and takes exactly what the ``json`` package does."""

from __future__ import annotations

import enum
import json
import math

import pytest

from hybrid_memory.host import jsonc


class Level(enum.IntEnum):
    LOW = 1


VALUES: list[object] = [
    {},
    [],
    "",
    0,
    None,
    True,
    {"session_id": "s1", "cwd": "/tmp/a b", "prompt": "What did we decide?\nAnd why…", "n": [1, 2.5, -0.0]},
    {"nested": {"deep": [{"a": [None, False, True]}, (1, 2)]}, "1": 1},
    'émigré 日本語 \U0001f600 tab\tquote" backslash\\ control\x01 nul\x00',
    "lone surrogate \ud800",
    [1e300, 1e-300, 3.141592653589793, 10**40, -(10**40), Level.LOW],
    {1: "int key", 2.5: "float key", False: "bool key", None: "null key"},
]


@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("separators", [(", ", ": "), (",", ":")])
@pytest.mark.parametrize("ensure_ascii", [True, False])
def test_dumps_writes_what_json_writes(
    value: object, separators: tuple[str, str], ensure_ascii: bool
) -> None:
    expected = json.dumps(value, separators=separators, ensure_ascii=ensure_ascii)
    assert jsonc.dumps(value, separators=separators, ensure_ascii=ensure_ascii) == expected


@pytest.mark.parametrize("value", VALUES)
def test_loads_reads_what_json_reads(value: object) -> None:
    text = json.dumps(value)
    assert jsonc.loads(text) == json.loads(text)
    assert jsonc.loads(text.encode()) == json.loads(text)
    assert jsonc.loads(f" \n\t{text}\r\n ") == json.loads(text)


def test_loads_reads_json_constants_and_numbers_as_json_does() -> None:
    text = "[NaN, Infinity, -Infinity, 1.5, 12345678901234567890, -1, 2e3]"
    read = jsonc.loads(text)
    assert math.isnan(read[0])
    assert read[1:] == json.loads(text)[1:]
    assert [type(v) for v in read] == [type(v) for v in json.loads(text)]


@pytest.mark.parametrize(
    "text",
    ["", "   ", "{", '{"a": 1} trailing', "[1, 2,]", "{'single': 1}", "nope", '"unterminated', b"\xff\xfe"],
)
def test_what_json_refuses_is_a_value_error_that_says_where(text: str | bytes) -> None:
    with pytest.raises(ValueError, match=r"char|position"):
        json.loads(text)
    with pytest.raises(ValueError, match=r"char|position"):
        jsonc.loads(text)


def test_what_json_cannot_write_is_refused_the_same_way() -> None:
    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        jsonc.dumps({"ids": {"m1"}})
    looped: list[object] = []
    looped.append(looped)
    with pytest.raises(ValueError, match="Circular reference"):
        jsonc.dumps(looped)
    with pytest.raises(TypeError):
        jsonc.dumps({("a", "b"): 1})


def test_each_call_has_its_own_markers() -> None:
    """The same list twice in one value is not a circular reference, nor across calls."""
    shared = [1, 2]
    assert jsonc.dumps([shared, shared]) == "[[1, 2], [1, 2]]"
    assert jsonc.dumps([shared, shared]) == "[[1, 2], [1, 2]]"


def test_an_interpreter_without_the_accelerator_gets_json_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonc, "ACCELERATED", False)
    monkeypatch.setattr(jsonc, "_scan", None)
    assert jsonc.dumps({"a": [1, "é"]}, separators=(",", ":"), ensure_ascii=False) == '{"a":[1,"é"]}'
    assert jsonc.loads(b' {"a": [1, 2.5]} ') == {"a": [1, 2.5]}
    with pytest.raises(ValueError, match="char"):
        jsonc.loads("{")
