"""The hooks read their settings without pydantic, each variable declared once (HOOK_VARIABLES)."""

from __future__ import annotations

import pytest

from hybrid_memory.integrations.config import HOOK_VARIABLES, HookConfig


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in HOOK_VARIABLES:
        monkeypatch.delenv(variable.env, raising=False)


def test_unset_variables_give_their_documented_defaults() -> None:
    hooks = HookConfig.from_env()
    assert {v.field: getattr(hooks, v.field) for v in HOOK_VARIABLES} == {
        "context_tokens": 800,
        "prompt_tokens": 300,
        "min_match": 0.3,
        "timeout_s": 20.0,
        "detach": True,
        "min_note_match": 0.1,
    }


@pytest.mark.parametrize(
    ("name", "value", "read"),
    [
        ("CONTEXT_TOKENS", "1200", 1200),
        ("PROMPT_TOKENS", "0", 0),
        ("MIN_MATCH", "0.75", 0.75),
        ("TIMEOUT_S", "5", 5.0),
        ("DETACH", "0", False),
        ("DETACH", "False", False),
        ("DETACH", "1", True),
    ],
)
def test_each_variable_is_read(monkeypatch: pytest.MonkeyPatch, name: str, value: str, read: object) -> None:
    monkeypatch.setenv(f"HYBRID_MEMORY_HOOK_{name}", value)
    got = getattr(HookConfig.from_env(), name.lower())
    assert (got, type(got)) == (read, type(read))


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("CONTEXT_TOKENS", "9000", "is out of range; set it between 0 and 8000"),
        ("MIN_MATCH", "1.5", "is out of range; set it between 0 and 1"),
        ("TIMEOUT_S", "0", "is out of range; set it between 0.1 and 600"),
        ("TIMEOUT_S", "soon", "is not a number; set it to one between 0.1 and 600"),
    ],
)
def test_a_bad_value_is_refused_naming_the_variable_and_its_range(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, problem: str
) -> None:
    monkeypatch.setenv(f"HYBRID_MEMORY_HOOK_{name}", value)
    with pytest.raises(ValueError, match=f"^HYBRID_MEMORY_HOOK_{name}=") as refused:
        HookConfig.from_env()
    assert str(refused.value) == f"HYBRID_MEMORY_HOOK_{name}={value!r} {problem}"
