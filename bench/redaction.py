"""Redaction: what it catches, what it wrongly touches, and what it costs per message.

    python bench/redaction.py [--baseline REV] [--repeat 5] [--lme-step 5] [--without-detect-secrets]
                              [--out bench/results/redaction.json]

Compares, in the same run, our redaction against the one at git revision ``--baseline``
(loaded from ``git show``) and, when the package is installed, Yelp's ``detect-secrets``
(its default plugins, line by line, every reported value replaced) alone and after ours:

- the corpus in ``tests/unit``: secrets caught (the secret no longer in the text) and
  near-misses touched (the text changed);
- real text that holds no secret: LoCoMo's conversation turns, the distinct turns of the
  LongMemEval_S sample in ``shared/`` (user-assistant chats with code; every
  ``--lme-step``-th turn) and this repository's ``src/`` files cut into 4,000-character
  messages (a pasted file): how many are changed;
- cost: median microseconds per message over each set (best of ``--repeat`` passes);
- ``--uuids`` random version-4 UUIDs (seeded), alone: how many are changed (a UUID holds no
  secret; its digit groups can pass a card number's Luhn check).

Prints a table and the machine's load averages; ``--out`` also writes JSON.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from time import perf_counter_ns

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.unit.near_miss_corpus import NEAR_MISSES  # noqa: E402
from tests.unit.secret_corpus import SECRETS  # noqa: E402

from hybrid_memory.service.redaction import redact  # noqa: E402

LOCOMO = REPO.parent / "shared" / "datasets" / "locomo" / "locomo10.json"
LONGMEMEVAL = REPO.parent / "shared" / "datasets" / "longmemeval" / "lme_s_dev100.json.gz"
OLD_PATH = "src/hybrid_memory/service/redaction.py"

Redactor = Callable[[str], str]


def baseline(rev: str) -> Redactor:
    """The single-module redaction at ``rev``, imported from a temporary file."""
    source = subprocess.run(
        ["git", "show", f"{rev}:{OLD_PATH}"], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout
    path = Path(tempfile.mkdtemp()) / "redaction_baseline.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("redaction_baseline", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return lambda text: str(module.redact(text).text)


def detect_secrets_redactor() -> Redactor | None:
    """detect-secrets' default plugins, line by line; every value it reports is replaced.

    Its ad hoc ``scan_line`` also reports strings below the entropy plugins' limits (to
    show why they were not caught), so those are held to the limit here, as a scan is.
    """
    try:
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import default_settings, get_plugins
    except ImportError:
        return None

    def run(text: str) -> str:
        with default_settings():
            limits = {p.secret_type: p for p in get_plugins() if hasattr(p, "entropy_limit")}
            lines = []
            for line in text.split("\n"):
                for found in scan_line(line):
                    plugin = limits.get(found.type)
                    value = found.secret_value or ""
                    if not value or (
                        plugin is not None and plugin.calculate_shannon_entropy(value) <= plugin.entropy_limit
                    ):
                        continue
                    line = line.replace(value, f"[REDACTED:{found.type}]")
                lines.append(line)
        return "\n".join(lines)

    return run


def locomo_turns() -> list[str]:
    if not LOCOMO.exists():
        return []
    data = json.loads(LOCOMO.read_text(encoding="utf-8"))
    turns: list[str] = []
    for sample in data:
        for key, session in sample["conversation"].items():
            if key.startswith("session_") and isinstance(session, list):
                turns.extend(turn["text"] for turn in session if turn.get("text"))
    return turns


def longmemeval_turns(step: int) -> list[str]:
    if not LONGMEMEVAL.exists():
        return []
    with gzip.open(LONGMEMEVAL, "rt", encoding="utf-8") as f:
        data = json.load(f)
    turns = dict.fromkeys(turn["content"] for item in data for s in item["haystack_sessions"] for turn in s)
    return list(turns)[::step]


def code_messages(size: int = 4000) -> list[str]:
    messages: list[str] = []
    for path in sorted((REPO / "src").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        messages.extend(text[i : i + size] for i in range(0, len(text), size))
    return messages


def quality(redactor: Redactor) -> dict[str, object]:
    missed = [kind for kind, text, secret in SECRETS if secret in redactor(text)]
    touched = [text for text in NEAR_MISSES if redactor(text) != text]
    return {
        "caught": len(SECRETS) - len(missed),
        "secrets": len(SECRETS),
        "missed_kinds": sorted(set(missed)),
        "near_misses_touched": len(touched),
        "near_misses": len(NEAR_MISSES),
    }


def random_uuids(count: int, seed: int = 20261127) -> list[str]:
    rng = random.Random(seed)
    return [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(count)]


def changed(redactor: Redactor, messages: list[str]) -> int:
    return sum(redactor(m) != m for m in messages)


def cost_us(redactor: Redactor, messages: list[str], repeat: int) -> float:
    """Median over messages of the best of ``repeat`` timings, in microseconds."""
    best = [min(_time(redactor, m) for _ in range(repeat)) for m in messages]
    return statistics.median(best) / 1000


def _time(redactor: Redactor, message: str) -> int:
    start = perf_counter_ns()
    redactor(message)
    return perf_counter_ns() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="846c61e", help="git revision of the redaction to compare with")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--lme-step", type=int, default=5, help="keep every n-th LongMemEval turn")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--without-detect-secrets", action="store_true", help="only ours and the baseline")
    parser.add_argument("--uuids", type=int, default=200_000, help="random UUIDs to redact")
    args = parser.parse_args()

    ours: Redactor = lambda text: redact(text).text  # noqa: E731
    redactors: dict[str, Redactor] = {"ours": ours, f"baseline {args.baseline}": baseline(args.baseline)}
    found = None if args.without_detect_secrets else detect_secrets_redactor()
    if found is not None:
        redactors["detect-secrets"] = found
        redactors["ours + detect-secrets"] = lambda text: found(ours(text))
    sets = {
        "locomo turns": locomo_turns(),
        "longmemeval turns": longmemeval_turns(args.lme_step),
        "src files (4,000 chars)": code_messages(),
    }

    uuids = random_uuids(args.uuids)
    results: dict[str, dict[str, object]] = {}
    for name, redactor in redactors.items():
        row: dict[str, object] = quality(redactor)
        row["changed: random uuids"] = f"{changed(redactor, uuids)}/{len(uuids)}"
        for label, messages in sets.items():
            row[f"changed: {label}"] = f"{changed(redactor, messages)}/{len(messages)}"
            row[f"us/message: {label}"] = round(cost_us(redactor, messages, args.repeat), 1)
        results[name] = row
        print(f"{name}:")
        for key, value in row.items():
            print(f"  {key}: {value}")
    load = os.getloadavg()
    print(f"load average: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"results": results, "load": load}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
