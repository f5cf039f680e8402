"""With no client speaking, the server opens its stores and loads its embedding model all the same."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import anyio
import anyio.to_thread

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


async def test_the_model_loads_and_the_stores_open_before_any_client_speaks(tmp_path: Path) -> None:
    seen = _Seen()
    root = logging.getLogger("hybrid_memory")
    root.addHandler(seen)
    level = root.level
    root.setLevel(logging.INFO)
    try:
        async with server_app.serving_app(make_settings(tmp_path / "data")) as app:
            with anyio.fail_after(120):
                await app.ready()  # no request has come: the lifespan alone opens the stores
            loaded = await anyio.to_thread.run_sync(seen.loaded.wait, 120.0)
            assert loaded, seen.messages
            assert any(m.startswith("memory open") for m in seen.messages)
    finally:
        root.removeHandler(seen)
        root.setLevel(level)
