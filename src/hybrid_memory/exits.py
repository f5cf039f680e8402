"""How the command ends when it cannot do its job: one line on stderr and an exit code by cause.

0    done (a server stopped by SIGINT/SIGTERM also ends with 0)
1    the command failed: a domain error not listed below, or a bug (its traceback at DEBUG)
2    configuration: a bad flag or setting, a public bind without a token, a store of another model
3    storage unavailable: the data directory or a store file is unusable, the store is in use, a store failed
4    the HTTP address is unavailable: the port is in use, the host unknown or not permitted
130  interrupted (Ctrl-C)
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from hybrid_memory.errors import (
    AddressUnavailableError,
    BackendError,
    ConfigurationError,
    ConflictError,
    HybridMemoryError,
    StoreLockedError,
)

if TYPE_CHECKING:
    from pydantic import ValidationError

# pydantic and the settings are imported where they are used: a command that a running
# server answers never needs them, and they are most of its start-up time.

logger = logging.getLogger(__name__)

E = TypeVar("E", bound=BaseException)

OK, FAILED, USAGE, STORE, ADDRESS, INTERRUPTED = 0, 1, 2, 3, 4, 130
MAX_MESSAGE_CHARS = 400

_FLAGS = {"HYBRID_MEMORY_HTTP_PORT": "--port", "HYBRID_MEMORY_HTTP_HOST": "--host"}


def _prefixes() -> dict[str, str]:
    from hybrid_memory.settings import (
        EmbeddingSettings,
        HttpSettings,
        LifecycleSettings,
        RankingSettings,
        Settings,
    )

    return {
        cls.__name__: str(cls.model_config.get("env_prefix", ""))
        for cls in (Settings, EmbeddingSettings, HttpSettings, LifecycleSettings, RankingSettings)
    }


def settings_error(exc: ValidationError) -> str:
    """The first problem as one line, naming the environment variable; the value is never echoed."""
    first: Any = exc.errors()[0]
    loc = [str(part) for part in first["loc"]]
    message = str(first["msg"]).removeprefix("Value error, ")
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    if not loc:
        return f"invalid settings: {message}{more}"
    name = (
        loc[0] if loc[0].isupper() else _prefixes().get(exc.title, "HYBRID_MEMORY_") + "_".join(loc).upper()
    )
    if name in _FLAGS:
        name = f"{_FLAGS[name]} ({name})"
    return f"invalid setting {name}: {message}{more}"


def check_data_dir(path: Path) -> None:
    """Fail before anything opens when the data directory cannot be created or written."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise BackendError(
            f"the data directory {path} is not usable ({exc.strerror or exc}); choose a writable one "
            "with --data-dir or HYBRID_MEMORY_DATA_DIR"
        ) from exc


def _find(exc: BaseException, kind: type[E]) -> E | None:
    """The first ``kind`` inside whatever task groups and causes wrapped it on the way out."""
    if isinstance(exc, kind):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _find(inner, kind)
            if found is not None:
                return found
    if exc.__cause__ is not None:
        return _find(exc.__cause__, kind)
    return None


def _code(error: HybridMemoryError) -> int:
    if isinstance(error, ConfigurationError | ConflictError):
        return USAGE
    if isinstance(error, StoreLockedError | BackendError):
        return STORE
    if isinstance(error, AddressUnavailableError):
        return ADDRESS
    return FAILED


def classify(exc: BaseException) -> tuple[int, str]:
    """The exit code and the one line to print for an exception that ended the command."""
    domain = _find(exc, HybridMemoryError)
    if domain is not None:
        return _code(domain), _one_line(str(domain) or type(domain).__name__)
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        return USAGE, settings_error(exc)
    failed_file = _find(exc, OSError)
    if failed_file is not None and failed_file.filename is not None:
        return STORE, _one_line(f"cannot use {failed_file.filename}: {failed_file.strerror or failed_file}")
    logger.debug("unexpected failure", exc_info=exc)
    inner = _innermost(exc)
    return FAILED, _one_line(
        f"unexpected error ({type(inner).__name__}: {inner}); "
        "HYBRID_MEMORY_LOG_LEVEL=DEBUG shows the traceback"
    )


def _innermost(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MAX_MESSAGE_CHARS else line[: MAX_MESSAGE_CHARS - 1] + "…"


def describe_exit_codes() -> str:
    """For ``serve --help``."""
    return (os.linesep.join(line.strip() for line in (__doc__ or "").splitlines()[2:] if line.strip())) + "\n"
