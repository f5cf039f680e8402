"""The server loads the embedding model from its first moment, not after the handshake and the stores."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from hybrid_memory.server import app as server_app
from tests.conftest import make_settings


class _Seen(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []
        self.loaded = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())
        if record.getMessage().startswith("Loaded embedding model"):
            self.loaded.set()


async def test_the_model_loads_before_any_client_speaks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(server_app, "OPEN_WITHIN_S", 600.0)  # no client: the stores wait
    seen = _Seen()
    root = logging.getLogger("hybrid_memory")
    root.addHandler(seen)
    level = root.level
    root.setLevel(logging.INFO)
    try:
        async with server_app.serving_app(make_settings(tmp_path / "data")) as app:
            loaded = await anyio.to_thread.run_sync(seen.loaded.wait, 120.0)
            assert loaded, seen.messages
            assert not any(m.startswith("memory open") for m in seen.messages)
            app.want()  # a client: the stores open, and the model is ready for its first recall
            await app.ready()
    finally:
        root.removeHandler(seen)
        root.setLevel(level)
