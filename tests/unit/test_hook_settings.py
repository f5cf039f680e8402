"""The hooks read their settings without pydantic; the settings tree documents the same ones."""

from __future__ import annotations

import pytest

from hybrid_memory.integrations.config import HookConfig
from hybrid_memory.settings import HookSettings

FIELDS = ["context_tokens", "prompt_tokens", "min_match", "timeout_s", "detach"]


def test_the_hooks_defaults_are_the_settings_trees(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in FIELDS:
        monkeypatch.delenv(f"HYBRID_MEMORY_HOOK_{name.upper()}", raising=False)
    hooks, tree = HookConfig.from_env(), HookSettings()
    assert {name: getattr(hooks, name) for name in FIELDS} == tree.model_dump()


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("CONTEXT_TOKENS", "1200"),
        ("PROMPT_TOKENS", "0"),
        ("MIN_MATCH", "0.75"),
        ("TIMEOUT_S", "5"),
        ("DETACH", "0"),
    ],
)
def test_the_hooks_read_each_variable_as_the_settings_tree_does(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(f"HYBRID_MEMORY_HOOK_{name}", value)
    field = name.lower()
    assert getattr(HookConfig.from_env(), field) == getattr(HookSettings(), field)


@pytest.mark.parametrize(
    ("name", "value"), [("CONTEXT_TOKENS", "9000"), ("MIN_MATCH", "1.5"), ("TIMEOUT_S", "0")]
)
def test_both_refuse_what_is_out_of_range(monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> None:
    monkeypatch.setenv(f"HYBRID_MEMORY_HOOK_{name}", value)
    with pytest.raises(ValueError, match=f"HYBRID_MEMORY_HOOK_{name}"):
        HookConfig.from_env()
    with pytest.raises(ValueError, match=name.lower()):
        HookSettings()
