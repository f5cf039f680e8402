"""A server store that was down at start: its tools say so, and the next call after a pause retries.

The server keeps serving with the other store; recall answers from the channels that can.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from typing import Any, cast
from urllib.parse import urlsplit, urlunsplit

import anyio

from hybrid_memory.errors import BackendUnavailableError

logger = logging.getLogger(__name__)

RETRY_AFTER_S = 5.0
"""Calls within this long of a failed attempt fail at once instead of waiting on the timeout again."""
MAX_REASON_CHARS = 200


def without_credentials(url: str) -> str:
    """``bolt://user:pw@host`` -> ``bolt://host``: addresses go into messages the model reads."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


class Reconnecting:
    """Stands in for a store whose ``open`` failed: each call first tries to open it again.

    Until one attempt succeeds every call raises ``BackendUnavailableError`` naming the
    store, its address and how to get going; afterwards calls go straight to the store.
    """

    def __init__(
        self, store: Any, reopen: Callable[[], Awaitable[None]], what: str, env: str, address: str
    ) -> None:
        self._store = store
        self._reopen = reopen
        self._what, self._env, self._address = what, env, without_credentials(address)
        self._open = False
        self._lock = anyio.Lock()
        self._last_try = float("-inf")
        self._reason = ""

    def _error(self) -> BackendUnavailableError:
        return BackendUnavailableError(
            f"The {self._what} at {self._address} is unreachable ({self._reason}); start it or unset "
            f"{self._env}. Tools that do not need it keep working."
        )

    def failed(self, exc: BaseException) -> BackendUnavailableError:
        """Note a failed attempt; the error to raise names the driver's own reason, not our wrapping."""
        cause = exc.__cause__ if exc.__cause__ is not None else exc
        reason = " ".join(str(cause).split()) or type(cause).__name__
        self._reason = reason if len(reason) <= MAX_REASON_CHARS else reason[: MAX_REASON_CHARS - 1] + "…"
        self._last_try = time.monotonic()
        return self._error()

    async def _ensure_open(self) -> None:
        async with self._lock:
            if self._open:
                return
            if time.monotonic() - self._last_try < RETRY_AFTER_S:
                raise self._error()
            try:
                await self._reopen()
            except BackendUnavailableError as exc:
                raise self.failed(exc) from exc
            self._open = True
            logger.warning("the %s at %s is reachable again", self._what, self._address)

    async def close(self) -> None:
        if self._open:
            await self._store.close()

    def in_use(self) -> AbstractContextManager[None]:
        return cast("AbstractContextManager[None]", self._store.in_use())

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._store, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            await self._ensure_open()
            return await method(*args, **kwargs)

        return call
