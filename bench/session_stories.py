"""Multi-session coding stories for ``bench/session_start.py``, each with its key.

Each story is a few sessions of one project: rules and decisions stated once (some
restated), one replaced further on, filler replies, a question asked again,
tool use. Its key lists what a new session must know (each fact: words that must all
appear in one line of SessionStart) and what is no longer current (a line naming the old
value must name the new one too).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.e2e.stories import Tool, Turn


@dataclass(frozen=True)
class Story:
    name: str
    slug: str
    """The project's directory name."""
    sessions: list[list[Turn]]
    must_know: list[tuple[str, ...]]
    replaced: list[tuple[str, str]]
    """(old, new): a line that names ``old`` must name ``new`` too."""


def _bash(command: str, output: str = "", failed: bool = False) -> Tool:
    return Tool("Bash", {"command": command, "description": command}, output, failed)


def _edit(root: Path, path: str) -> Tool:
    return Tool("Edit", {"file_path": str(root / path), "old_string": "a", "new_string": "b"})


def _read(root: Path, path: str) -> Tool:
    return Tool("Read", {"file_path": str(root / path)}, "…")


def mobile(root: Path) -> Story:
    return Story(
        "mobile app (Expo)",
        root.name,
        [
            [
                Turn(
                    "Quick ground rules for this app: always use pnpm, never npm or yarn. We support iOS 16 "
                    "and newer only.",
                    "Got it. I'll use pnpm for every install and keep the deployment target at iOS 16.",
                    (_bash("pnpm install", "Done in 4.2s"),),
                ),
                Turn("Add the settings screen skeleton.", "Done.", (_edit(root, "app/settings.tsx"),)),
            ],
            [
                Turn(
                    "State management: we decided to use Redux Toolkit for the cart and the session.",
                    "Checking.",
                    (_read(root, "app/store.ts"),),
                ),
                Turn(
                    "How do I run the app on the Android emulator?",
                    "Run `pnpm android` with the emulator open; Expo picks it up.",
                ),
            ],
            [
                Turn(
                    "How do I run the app on the Android emulator?",
                    "Run `pnpm android` with the emulator open; Expo picks it up.",
                ),
                Turn("ok", "OK"),
            ],
            [
                Turn(
                    "We're switching from Redux Toolkit to Zustand for state, Redux is too heavy for us.",
                    "Understood, I'll migrate the cart store to Zustand.",
                    (_edit(root, "app/store.ts"), _bash("pnpm test", "Tests: 31 passed")),
                ),
                Turn("Remember: always use pnpm, never npm.", "Noted."),
            ],
        ],
        must_know=[("pnpm",), ("ios 16",), ("zustand",)],
        replaced=[("redux", "zustand")],
    )


def pipeline(root: Path) -> Story:
    return Story(
        "data pipeline (dbt, Airflow)",
        root.name,
        [
            [
                Turn(
                    "Context for you: our warehouse is Snowflake and the dbt models live in "
                    "warehouse/models. I prefer explicit column lists over SELECT *.",
                    "Thanks: explicit columns, and the models are under warehouse/models.",
                    (_bash("dbt ls --select staging", "12 models"),),
                ),
            ],
            [
                Turn(
                    "The nightly load runs at 02:00 UTC; never schedule anything else in that window.",
                    "Let me look.",
                    (_read(root, "dags/nightly.py"),),
                ),
                Turn(
                    "Fix the failing orders model.",
                    "The join on customer_id duplicated rows; I deduplicated it and the tests pass.",
                    (
                        _bash("dbt test --select orders", "1 of 3 FAIL unique_orders_id", failed=True),
                        _edit(root, "warehouse/models/orders.sql"),
                        _bash("dbt test --select orders", "3 of 3 PASS"),
                    ),
                ),
            ],
            [Turn("Write a limerick about late data.", "A table that waited till three / ...")],
            [
                Turn(
                    "We moved the nightly load from 02:00 UTC to 04:00 UTC because the upstream export "
                    "finishes later now.",
                    "On it.",
                    (_edit(root, "dags/nightly.py"),),
                ),
            ],
        ],
        must_know=[("snowflake",), ("warehouse/models",), ("04:00",), ("select *",)],
        replaced=[("02:00", "04:00")],
    )


def cli(root: Path) -> Story:
    return Story(
        "command-line tool (Rust)",
        root.name,
        [
            [
                Turn(
                    "This crate's MSRV is Rust 1.74, so don't use newer std APIs. Use thiserror for "
                    "library errors; anyhow only in the binary.",
                    "Understood: MSRV 1.74, thiserror in the library, anyhow in main.rs.",
                    (_bash("cargo build", "Finished dev"),),
                ),
            ],
            [
                Turn(
                    "Releases are tagged vX.Y.Z and published from CI, never from a laptop.",
                    "Checking.",
                    (_read(root, ".github/workflows/release.yml"),),
                ),
                Turn(
                    "Why does cargo test fail on the config parser?",
                    "The fixture path was relative to the crate root; I made it absolute.",
                    (
                        _bash("cargo test", "test config::parse ... FAILED", failed=True),
                        _edit(root, "src/config.rs"),
                        _bash("cargo test", "test result: ok. 58 passed"),
                    ),
                ),
            ],
            [
                Turn(
                    "Why does cargo test fail on the config parser?",
                    "It passes now: the fixture path fix from last time is in src/config.rs.",
                ),
            ],
            [
                Turn(
                    "We're raising the MSRV from 1.74 to 1.80 so we can use LazyLock.",
                    "Done.",
                    (_edit(root, "Cargo.toml"),),
                ),
            ],
        ],
        must_know=[("1.80",), ("thiserror",), ("tagged",)],
        replaced=[("1.74", "1.80")],
    )


def stories(root: Path) -> list[Story]:
    return [mobile(root / "mobile"), pipeline(root / "pipeline"), cli(root / "cli")]
