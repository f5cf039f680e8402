"""The error tree of mcp-hybrid-memory.

Every message is written for the model that will read it: what was wrong and how
to call correctly. The tools layer turns these into MCP ``ToolError`` in one place.

    HybridMemoryError
    ├── InvalidInputError        the caller's arguments are wrong; nothing was changed
    ├── NotFoundError            an id that does not exist in this scope
    ├── ConflictError            the request clashes with what is stored (e.g. a model mismatch)
    ├── StoreLockedError         another process owns the embedded store
    ├── ConfigurationError       settings that cannot work together; nothing was started
    ├── AddressUnavailableError  the HTTP server cannot listen on its host and port
    └── BackendError             a store or model failed
        └── BackendUnavailableError   it could not be reached within the timeout
"""

from __future__ import annotations


class HybridMemoryError(Exception):
    """Root of every error this package raises on purpose."""


class InvalidInputError(HybridMemoryError):
    """The caller's arguments are wrong; nothing was stored or changed."""


class NotFoundError(HybridMemoryError):
    """An id that does not exist in the caller's scope."""


class ConflictError(HybridMemoryError):
    """The request clashes with what is already stored."""


class StoreLockedError(HybridMemoryError):
    """Another process already owns an embedded store directory."""


class ConfigurationError(HybridMemoryError):
    """The settings cannot work as given (e.g. a public bind without a token); nothing was started."""


class AddressUnavailableError(HybridMemoryError):
    """The HTTP server cannot listen on its host and port (in use, unknown host, not permitted)."""


class BackendError(HybridMemoryError):
    """A storage backend or the embedding model failed."""


class BackendUnavailableError(BackendError):
    """A backend could not be reached within its timeout."""
