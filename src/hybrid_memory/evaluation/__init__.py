"""Retrieval benchmarks run through the real server, with the baselines they are judged against.

Unlike the rest of the package below ``server/`` and ``tools/``, this package
imports ``mcp``: it is a *client* of the server, like the CLI, and drives
``hybrid-memory serve`` over stdio exactly as a user's agent would.

``hybrid-memory eval locomo PATH`` is the entry point (see :mod:`hybrid_memory.cli`).
"""

from hybrid_memory.evaluation.locomo import (
    Dataset,
    DatasetError,
    Question,
    RepairLog,
    RetrieverRun,
    load_locomo,
    parse_locomo,
)
from hybrid_memory.evaluation.report import build_report, format_report, write_json
from hybrid_memory.evaluation.runner import EvalOptions, EvaluationError, evaluate_locomo

__all__ = [
    "Dataset",
    "DatasetError",
    "EvalOptions",
    "EvaluationError",
    "Question",
    "RepairLog",
    "RetrieverRun",
    "build_report",
    "evaluate_locomo",
    "format_report",
    "load_locomo",
    "parse_locomo",
    "write_json",
]
