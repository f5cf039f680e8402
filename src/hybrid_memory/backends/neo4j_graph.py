"""The Neo4j graph store: :class:`~hybrid_memory.backends.base.GraphStore` over Bolt.

Every statement lives in :mod:`hybrid_memory.backends.cypher`; this module only
chooses one, fills its parameters and turns records into models. Every call is
bounded by ``timeout_s`` end to end (connecting, retries, the query itself), and the
driver's errors become ours with a message that says what to do.

``dialect="arcadedb"`` swaps in the few statements ArcadeDB's Cypher needs instead
(:data:`~hybrid_memory.backends.cypher.ARCADEDB_OVERRIDES`); nothing outside this
class knows the difference.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, Literal, cast

import anyio
from neo4j import (
    AsyncDriver,
    AsyncGraphDatabase,
    AsyncManagedTransaction,
    Query,
    RoutingControl,
    unit_of_work,
)
from neo4j.exceptions import (
    AuthError,
    ConnectionAcquisitionTimeoutError,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
)

from hybrid_memory.backends import cypher
from hybrid_memory.backends._text import fmt_time_opt, note_not_found, query_terms
from hybrid_memory.errors import BackendError, BackendUnavailableError, ConflictError
from hybrid_memory.models import domain

logger = logging.getLogger(__name__)

Dialect = Literal["neo4j", "arcadedb"]

# The Bolt schemes; the driver's http(s) Query API is a preview feature we do not use.
_BOLT_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")

_EXPAND = {
    domain.Direction.OUT: cypher.EXPAND_OUT,
    domain.Direction.IN: cypher.EXPAND_IN,
    domain.Direction.BOTH: cypher.EXPAND_BOTH,
}


def _describe(exc: Exception) -> str:
    """The server's own message and code, without the driver's GQL status boilerplate."""
    if isinstance(exc, Neo4jError) and exc.message:
        return f"{exc.message} [{exc.code}]" if exc.code else exc.message
    return " ".join(str(exc).split()) or type(exc).__name__


class Neo4jGraphStore:
    """:class:`~hybrid_memory.backends.base.GraphStore` on a Neo4j server (or ArcadeDB's Bolt plugin).

    Nothing connects until :meth:`open`. ``password=None`` connects without
    authentication; ``database=None`` uses the server's home database.
    """

    def __init__(
        self,
        uri: str,
        user: str,
        password: str | None,
        database: str | None,
        *,
        timeout_s: float,
        dialect: Dialect = "neo4j",
    ) -> None:
        self._uri = uri
        self._user = user
        self._password = password
        self._database = database
        self._timeout_s = timeout_s
        self._dialect = dialect
        overrides = cypher.ARCADEDB_OVERRIDES if dialect == "arcadedb" else {}
        self._schema = cast("tuple[str, ...]", overrides.get("SCHEMA", cypher.SCHEMA))
        self._search = cast(str, overrides.get("SEARCH_NOTES", cypher.SEARCH_NOTES))
        self._driver: AsyncDriver | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    async def open(self) -> None:
        """Connect, check the server answers, and create constraints and indexes idempotently."""
        if self._driver is not None:
            return
        scheme = self._uri.partition("://")[0].lower()
        if scheme not in _BOLT_SCHEMES:
            raise BackendError(
                f"NEO4J_URI={self._uri!r} is not a Neo4j Bolt address: use neo4j://host:7687 or "
                "bolt://host:7687 (or neo4j+s:// for TLS)"
            )
        try:
            driver = AsyncGraphDatabase.driver(
                self._uri,
                auth=None if self._password is None else (self._user, self._password),
                connection_timeout=self._timeout_s,
                connection_acquisition_timeout=self._timeout_s,
                max_transaction_retry_time=self._timeout_s,
                # Server notifications go to the "neo4j.notifications" logger, never to warnings.
                warn_notification_severity="OFF",
                user_agent="mcp-hybrid-memory",
            )
        except (ValueError, DriverError) as exc:
            raise BackendError(f"NEO4J_URI={self._uri!r} is not a usable Neo4j address: {exc}") from exc
        self._driver = driver
        try:
            async with self._errors():
                await driver.verify_connectivity()
            for statement in self._schema:
                # db.awaitIndexes takes whole seconds.
                await self._run(statement, {"timeout_s": max(1, int(self._timeout_s))})
        except BaseException:
            self._driver = None
            await driver.close()
            raise
        logger.info("graph store connected to %s (%s)", self._uri, self._dialect)

    async def close(self) -> None:
        """Close the driver and its connections; safe to call twice."""
        driver, self._driver = self._driver, None
        if driver is not None:
            await driver.close()

    @asynccontextmanager
    async def _errors(self) -> AsyncIterator[None]:
        """Bound the enclosed calls by the timeout and map driver errors to ours."""
        try:
            with anyio.fail_after(self._timeout_s):
                yield
        except TimeoutError as exc:
            raise BackendUnavailableError(
                f"Neo4j at {self._uri} did not answer within {self._timeout_s:g}s: "
                "start it (docker compose up neo4j) or fix NEO4J_URI"
            ) from exc
        except AuthError as exc:
            raise BackendError(
                f"Neo4j at {self._uri} refused the credentials of user {self._user!r}: "
                f"check NEO4J_USER/NEO4J_PASSWORD ({_describe(exc)})"
            ) from exc
        except (ServiceUnavailable, SessionExpired, ConnectionAcquisitionTimeoutError) as exc:
            raise BackendUnavailableError(
                f"Neo4j at {self._uri} cannot be reached ({_describe(exc)}): "
                "start it (docker compose up neo4j) or fix NEO4J_URI"
            ) from exc
        except (Neo4jError, DriverError) as exc:
            raise BackendError(f"Neo4j at {self._uri} failed: {_describe(exc)}") from exc

    def _require(self) -> AsyncDriver:
        if self._driver is None:
            raise RuntimeError("Neo4jGraphStore is not open; call open() first.")
        return self._driver

    async def _run(
        self, statement: str, params: dict[str, Any], *, read: bool = False
    ) -> list[dict[str, Any]]:
        """Run one statement in its own transaction (retried by the driver on transient errors)."""
        driver = self._require()
        async with self._errors():
            result = await driver.execute_query(
                Query(statement, timeout=self._timeout_s),
                params,
                routing_=RoutingControl.READ if read else RoutingControl.WRITE,
                database_=self._database,
            )
        return [record.data() for record in result.records]

    # -- notes -----------------------------------------------------------------------------------

    async def upsert_note(self, note: domain.Note) -> None:
        """Insert or replace every field of the note with this id.

        Raises ``ConflictError`` when the id belongs to another scope: ids are global,
        and replacing would move someone else's note.
        """
        if not await self._run(cypher.UPSERT_NOTE, cypher.note_params(note)):
            raise ConflictError(
                f"Note id '{note.id}' is already used in another project or by another user; "
                "choose a different id."
            )

    async def get_notes(self, scope: domain.Scope, ids: Sequence[str]) -> list[domain.Note]:
        """The notes among ``ids`` in ``scope``; unknown ids and other scopes' ids are skipped."""
        if not ids:
            return []
        params = {"ids": list(ids), "project": scope.project, "user": scope.user}
        rows = await self._run(cypher.GET_NOTES, params, read=True)
        return [cypher.note_from_map(row["note"]) for row in rows]

    async def delete_note(self, scope: domain.Scope, note_id: str) -> bool:
        """Delete a note and every link touching it; False when it did not exist in ``scope``."""
        params = {"id": note_id, "project": scope.project, "user": scope.user}
        rows = await self._run(cypher.DELETE_NOTE, params)
        return bool(rows and rows[0]["deleted"])

    async def list_notes(self, flt: domain.NoteFilter, limit: int, offset: int = 0) -> list[domain.Note]:
        """Notes matching ``flt``, newest ``created`` first (ties: id descending)."""
        params = {**cypher.filter_params(flt), "limit": max(limit, 0), "offset": max(offset, 0)}
        rows = await self._run(cypher.LIST_NOTES, params, read=True)
        return [cypher.note_from_map(row["note"]) for row in rows]

    async def count_notes(self, flt: domain.NoteFilter) -> int:
        rows = await self._run(cypher.COUNT_NOTES, cypher.filter_params(flt), read=True)
        return int(rows[0]["total"])

    async def search_notes(self, text: str, flt: domain.NoteFilter, limit: int) -> list[domain.NoteHit]:
        """Full-text search over content and tags, best match first; positive scores.

        Any text is accepted: only its words are searched, each quoted, so query
        operators in it are plain words. A text with no searchable word returns [].
        """
        terms = query_terms(text)
        if not terms or limit <= 0:
            return []
        params = {
            **cypher.filter_params(flt),
            "limit": limit,
            "query": cypher.lucene_query(terms),
            "terms": terms,
        }
        rows = await self._run(self._search, params, read=True)
        return [
            domain.NoteHit(note=cypher.note_from_map(row["note"]), score=float(row["score"])) for row in rows
        ]

    # -- links -----------------------------------------------------------------------------------

    async def upsert_link(self, link: domain.Link) -> domain.Link:
        """Create the link, or update strength and validity of the one with the same
        (from, to, relation), keeping its ``created``. Returns what is stored.

        Raises ``NotFoundError`` naming an endpoint that is not a note of the link's scope.
        """
        rows = await self._run(cypher.UPSERT_LINK[link.relation], cypher.link_params(link))
        if not rows:
            scope = domain.Scope(project=link.project, user=link.user)
            found = {note.id for note in await self.get_notes(scope, [link.from_id, link.to_id])}
            missing = link.from_id if link.from_id not in found else link.to_id
            raise note_not_found(missing)
        return cypher.link_from_row(rows[0], project=link.project, user=link.user)

    async def delete_link(
        self, scope: domain.Scope, from_id: str, to_id: str, relation: domain.Relation
    ) -> bool:
        """Delete one link; False when it did not exist in ``scope``."""
        params = {
            "from_id": from_id,
            "to_id": to_id,
            "project": scope.project,
            "user": scope.user,
            "rel_type": cypher.REL_TYPES[relation],
        }
        rows = await self._run(cypher.DELETE_LINK, params)
        return bool(rows and rows[0]["deleted"])

    async def list_links(self, scope: domain.Scope, limit: int, offset: int = 0) -> list[domain.Link]:
        """Links of ``scope`` by (from_id, to_id, relation): a stable order to page through."""
        params = {
            "project": scope.project,
            "user": scope.user,
            "limit": max(limit, 0),
            "offset": max(offset, 0),
        }
        rows = await self._run(cypher.LIST_LINKS, params, read=True)
        return [cypher.link_from_row(row, project=scope.project, user=scope.user) for row in rows]

    async def scopes(self) -> list[domain.Scope]:
        """Every (project, user) holding a note, sorted."""
        rows = await self._run(cypher.SCOPES, {}, read=True)
        return [domain.Scope(project=row["project"], user=row["user"]) for row in rows]

    async def move_scope(self, scope: domain.Scope, project: str) -> int:
        """Every note of ``scope`` to ``project``; its links go with it (they hold no scope of their own)."""
        params = {"project": scope.project, "user": scope.user, "to_project": project}
        rows = await self._run(cypher.MOVE_SCOPE, params)
        return int(rows[0]["moved"]) if rows else 0

    async def neighbourhood(self, scope: domain.Scope, walk: domain.Walk) -> domain.Neighbourhood:
        """The notes and links around ``walk.note_id``; see ``GraphStore.neighbourhood``."""
        if walk.empty:
            return domain.Neighbourhood(notes=[], links=[])
        params: dict[str, Any] = {
            "project": scope.project,
            "user": scope.user,
            "rel_types": None if walk.relations is None else [cypher.REL_TYPES[r] for r in walk.relations],
            "valid_at": fmt_time_opt(walk.valid_at),
        }
        expand = _EXPAND[walk.direction]

        # One read transaction for the whole walk: every hop sees the same snapshot.
        @unit_of_work(timeout=self._timeout_s)
        async def traverse(tx: AsyncManagedTransaction) -> tuple[list[domain.Note], list[dict[str, Any]]]:
            seen = {walk.note_id}
            frontier = [walk.note_id]
            found: list[domain.Note] = []
            # Breadth first: each hop's new notes, oldest first, so cutting at ``limit``
            # keeps the nearest ones, and a note is reached once, at its smallest depth.
            for _ in range(walk.depth):
                if not frontier or len(found) >= walk.limit:
                    break
                result = await tx.run(expand, {**params, "frontier": frontier})
                reached = [cypher.note_from_map(row["note"]) for row in await result.data()]
                fresh = {n.id: n for n in reached if n.id not in seen}
                new = sorted(fresh.values(), key=lambda n: (n.created, n.id))
                seen.update(n.id for n in new)
                found.extend(new)
                frontier = [n.id for n in new]
            found = found[: walk.limit]
            if not found:
                return [], []
            ids = [walk.note_id, *(n.id for n in found)]
            result = await tx.run(cypher.LINKS_AMONG, {**params, "ids": ids})
            return found, await result.data()

        driver = self._require()
        async with self._errors(), driver.session(database=self._database) as session:
            notes, link_rows = await session.execute_read(traverse)
        links = [cypher.link_from_row(row, project=scope.project, user=scope.user) for row in link_rows]
        links.sort(key=lambda link: (link.from_id, link.to_id, link.relation.value))
        return domain.Neighbourhood(notes=notes, links=links)
