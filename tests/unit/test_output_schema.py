"""Lean output schemas accept the results the tools return, nulls included, and still refuse wrong ones."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from jsonschema.validators import validator_for

from hybrid_memory.models import AdjacentTurn, MemoryKind, NoteType, RecallHit, RecallResult
from hybrid_memory.tools._schema import lean_output
from hybrid_memory.tools.registry import build_tools

WHEN = datetime(2024, 5, 1, 9, 30, tzinfo=UTC)


def errors(schema: dict[str, Any], document: Any) -> list[str]:
    return [e.message for e in validator_for(schema)(schema).iter_errors(document)]


def recall_result() -> dict[str, Any]:
    bare = RecallHit(
        id="m1",
        kind=MemoryKind.MESSAGE,
        text="The ferry leaves at nine.",
        score=0.5,
        created_at=WHEN,
        channels=["dense"],
        ranks={"dense": 1},
        relevance=0.5,
        recency=0.1,
    )
    full = bare.model_copy(
        update={
            "id": "n1",
            "kind": MemoryKind.NOTE,
            "note_type": NoteType.DECISION,
            "importance": 0.8,
            "context_before": AdjacentTurn(id="m0", role="user", text="When does it leave?"),
        }
    )
    return RecallResult(query="ferry", results=[bare, full]).model_dump(mode="json")


def test_a_recall_result_with_nulls_and_with_values_is_valid() -> None:
    assert errors(lean_output(RecallResult.model_json_schema()), recall_result()) == []


@pytest.mark.parametrize(
    ("field", "value"),
    [("note_type", "rumour"), ("kind", None), ("importance", "high"), ("context_before", "m0")],
)
def test_a_wrong_value_is_still_refused(field: str, value: Any) -> None:
    result = recall_result()
    result["results"][0][field] = value
    assert errors(lean_output(RecallResult.model_json_schema()), result) != []


def test_every_output_schema_is_inlined_without_titles() -> None:
    for tool in build_tools():
        assert tool.output_schema is not None, tool.name
        text = json.dumps(tool.output_schema)
        assert "$ref" not in text, tool.name
        assert '"title"' not in text, tool.name
