"""The pending captures' files: what they keep across attempts, and what people are told."""

from __future__ import annotations

import json
from pathlib import Path

from hybrid_memory.integrations import pending
from hybrid_memory.integrations.config import HookConfig


def _config(tmp_path: Path) -> HookConfig:
    return HookConfig.from_env()._replace(data_dir=tmp_path / "data")


def test_a_capture_waits_from_before_its_attempt_until_it_is_done(tmp_path: Path) -> None:
    config = _config(tmp_path)
    pending.keep(config, "s/1", tmp_path / "s1.jsonl", tmp_path)
    [entry] = pending.waiting(config)
    assert {k: entry[k] for k in ("session_id", "transcript", "cwd", "attempts", "last_error")} == {
        "session_id": "s/1",
        "transcript": str(tmp_path / "s1.jsonl"),
        "cwd": str(tmp_path),
        "attempts": 0,
        "last_error": None,
    }
    assert pending.notice(config.data_dir) is None  # in progress, not failing
    pending.failed(config, "s/1", "the memory host did not start within 20 s")
    pending.keep(config, "s/1", tmp_path / "s1.jsonl", tmp_path)  # the session's next capture
    [entry] = pending.waiting(config)
    assert (entry["attempts"], entry["last_error"]) == (1, "the memory host did not start within 20 s")
    pending.done(config, "s/1")
    assert pending.waiting(config) == []
    pending.failed(config, "s/1", "late")  # a failure reported after another process captured it
    assert pending.waiting(config) == []


def test_people_are_told_how_many_sessions_wait_and_the_last_error(tmp_path: Path) -> None:
    config = _config(tmp_path)
    for session in ("s1", "s2", "s3"):
        pending.keep(config, session, tmp_path / f"{session}.jsonl", tmp_path)
    pending.failed(config, "s1", "first error")
    pending.failed(config, "s2", "second error")
    (Path(config.state_dir) / "pending" / "broken.json").write_text("{not json")
    assert pending.notice(config.data_dir) == (
        "hybrid-memory: 2 sessions wait to be captured (retried by the next hook and when the memory host "
        f"starts; see {Path(config.state_dir) / 'hooks.log'}); last error: second error"
    )
    assert [e["session_id"] for e in pending.waiting(config)] == ["s1", "s2", "s3"]


def test_a_waiting_capture_whose_transcript_is_gone_stops_waiting_and_says_so(tmp_path: Path) -> None:
    config = _config(tmp_path)
    pending.keep(config, "gone", tmp_path / "gone.jsonl", tmp_path)
    assert pending.retry(config, everything=True) == 1
    assert pending.waiting(config) == []
    log = (Path(config.state_dir) / "hooks.log").read_text()
    assert f"capture of session gone dropped: its transcript {tmp_path / 'gone.jsonl'} is gone" in log


def test_a_hook_retries_a_failed_capture_only_once_it_is_due(tmp_path: Path) -> None:
    config = _config(tmp_path)
    pending.keep(config, "s1", tmp_path / "s1.jsonl", tmp_path)
    pending.failed(config, "s1", "boom")
    assert pending.retry(config) == 0  # failed a moment ago
    assert len(pending.waiting(config)) == 1
    path = Path(config.state_dir) / "pending" / "s1.json"
    entry = json.loads(path.read_text())
    path.write_text(json.dumps({**entry, "last_attempt": entry["last_attempt"] - pending.RETRY_AFTER_S}))
    assert pending.retry(config) == 1  # due now (and its transcript is gone: nothing left to do)
    assert pending.waiting(config) == []


def test_a_capture_kept_again_meanwhile_is_not_taken_for_done(tmp_path: Path) -> None:
    config = _config(tmp_path)
    pending.keep(config, "s1", tmp_path / "s1.jsonl", tmp_path)
    [first] = pending.waiting(config)
    pending.keep(config, "s1", tmp_path / "s1.jsonl", tmp_path)  # the next Stop, while the first captures
    pending.done(config, "s1", first["token"])  # the first capture's lines are in; the second's may not be
    assert [e["session_id"] for e in pending.waiting(config)] == ["s1"]
    [second] = pending.waiting(config)
    pending.done(config, "s1", second["token"])
    assert pending.waiting(config) == []


def test_a_capture_never_tried_is_its_own_process_s_until_that_is_lost(tmp_path: Path) -> None:
    config = _config(tmp_path)
    pending.keep(config, "s1", tmp_path / "s1.jsonl", tmp_path)
    assert pending.retry(config) == 0  # its capture runs (or waits for a command) in its own process
    path = Path(config.state_dir) / "pending" / "s1.json"
    entry = json.loads(path.read_text())
    path.write_text(json.dumps({**entry, "since": entry["since"] - pending.LOST_AFTER_S}))
    assert pending.retry(config) == 1  # that process is gone: the hook takes it over
    assert pending.waiting(config) == []


def test_an_error_that_quotes_a_secret_is_kept_and_told_redacted(tmp_path: Path) -> None:
    config = _config(tmp_path)
    pending.keep(config, "s1", tmp_path / "s1.jsonl", tmp_path)
    password, token = "Zq8vK2mP9xL4", "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    error = RuntimeError(f"could not reach postgres://app:{password}@db.internal:5432/billing with {token}")
    pending.failed(config, "s1", pending.describe(error))
    text = (Path(config.state_dir) / "pending" / "s1.json").read_text()
    notice = pending.notice(config.data_dir) or ""
    for told in (text, notice):
        assert password not in told
        assert token not in told
    assert notice.endswith(
        "last error: could not reach postgres://app:[REDACTED:password]@db.internal:5432/billing "
        "with [REDACTED:github_token]"
    )
    # A file written before errors were redacted is told redacted all the same.
    entry = json.loads(text)
    (Path(config.state_dir) / "pending" / "s1.json").write_text(
        json.dumps({**entry, "last_error": f"token {token}"})
    )
    assert token not in (pending.notice(config.data_dir) or "")
