"""What a session touched, read from its turns: files, commands, packages, services, tickets, URLs, errors.

Files, commands and errors come from the activity lines capture writes for tool use
("(edited src/auth.py)", "(read …)", "(tests failed: pytest -q)", "(ran git push → failed:
error: …)"); packages from install commands; tickets, URLs and file paths from what was said;
services from a short list of well-known ones, named in the user's words or in a note.
Each entity has a normalised key, so one file is one node of a project however often touched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hybrid_memory.text import activity

ENTITY_TAG = "entity:"

_URL = re.compile(r"https?://[^\s)>\]\"'`]+")
_TICKET = re.compile(r"\b([A-Z][A-Z0-9]{1,9}-\d{1,6})\b(?!-\d)")
"""``PROJ-481``; not ``INV-2025-0001`` (a number with parts, an invoice's or a date's)."""
_NOT_TICKETS = frozenset(
    [
        "UTF",
        "SHA",
        "ISO",
        "GPT",
        "MD",
        "AES",
        "RSA",
        "HTTP",
        "TLS",
        "SSL",
        "ES",
        "PEP",
        "RFC",
        "IPV",
        "X86",
        "ARM64",
        "P256",
        "ED25519",
        "SSE",
        "AVX",
        "H",
    ]
)
_ISSUE = re.compile(r"\b(?:issue|pr|pull request|ticket|bug)\s+(#\d{1,7})\b", re.IGNORECASE)
_PATH = re.compile(r"(?<![\w/.:-])((?:\.{0,2}/)?(?:[\w.@-]+/)+[\w.@-]+\.[A-Za-z0-9]{1,8})\b")
_QUOTED_FILE = re.compile(r"`([\w.@/-]+\.[A-Za-z][A-Za-z0-9]{0,7})`")
_RUNNERS = frozenset(["npm", "yarn", "pnpm", "bun", "uv", "poetry", "pipenv", "pdm", "hatch"])
"""Tools whose ``run`` names what it runs: ``uv run pytest`` is the test run, not ``uv run``."""
_TWO_WORD = frozenset(
    [
        "git",
        "npm",
        "yarn",
        "pnpm",
        "make",
        "cargo",
        "go",
        "docker",
        "kubectl",
        "uv",
        "pip",
        "poetry",
        "terraform",
        "helm",
        "gh",
        "bun",
        "dotnet",
        "mvn",
        "gradle",
        "just",
        "npx",
        "bundle",
        "rails",
        "alembic",
    ]
)
_INSTALL = re.compile(
    r"\b(?:pip3? install|uv (?:pip install|add)|poetry add|npm (?:install|i|add)|yarn add"
    r"|pnpm (?:add|install)|bun add|cargo add|go get|gem install|bundle add|composer require)"
    r"\s+(?P<names>[^&|;>]+)"
)
_SERVICES = {
    name.lower().replace(" ", ""): name
    for name in [
        "Postgres",
        "PostgreSQL",
        "MySQL",
        "MariaDB",
        "SQLite",
        "Redis",
        "MongoDB",
        "CockroachDB",
        "Kafka",
        "RabbitMQ",
        "Elasticsearch",
        "OpenSearch",
        "DynamoDB",
        "BigQuery",
        "Snowflake",
        "ClickHouse",
        "Cassandra",
        "Memcached",
        "Nginx",
        "Kubernetes",
        "Stripe",
        "Auth0",
        "Sentry",
        "Datadog",
        "Grafana",
        "Prometheus",
        "Vercel",
        "Netlify",
        "Heroku",
        "Supabase",
        "Firebase",
        "Neo4j",
        "Qdrant",
        "Pinecone",
        "Celery",
        "SQS",
        "S3",
        "Terraform",
        "Docker",
        "Fly.io",
        "Cloudflare",
        "Keycloak",
        "Okta",
        "Twilio",
        "SendGrid",
    ]
}
_SERVICE_WORD = re.compile(r"[\w.]+")
_CANONICAL = {"postgresql": "Postgres", "postgres": "Postgres"}


@dataclass(frozen=True)
class Entity:
    kind: str
    """file, command, package, service, ticket, url or error."""
    name: str

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.name.lower() if self.kind != 'file' else self.name}"

    @property
    def content(self) -> str:
        return f"{self.kind.capitalize()} {self.name}"

    @property
    def tag(self) -> str:
        return f"{ENTITY_TAG}{self.kind}"


def command_name(command: str) -> str:
    """A command as one entity: its program, with the subcommand for tools that have them (``git push``)."""
    for part in re.split(r"&&|;|\|\||\|", command):
        words = [w for w in part.split() if "=" not in w.split("/")[0] and w not in ("sudo", "time", "env")]
        if not words or words[0] == "cd":
            continue
        program = words[0].rsplit("/", 1)[-1]
        if program in ("python", "python3") and len(words) > 2 and words[1] == "-m":
            return f"python -m {words[2]}"
        rest = [w for w in words[1:] if not w.startswith("-")]
        if program in _RUNNERS and rest[:1] == ["run"] and len(rest) > 1:
            return f"{program} run {rest[1]}"
        if program in _TWO_WORD and rest:
            return f"{program} {rest[0]}"
        return program
    return ""


def _packages(command: str) -> list[str]:
    found: list[str] = []
    for match in _INSTALL.finditer(command):
        for word in (w.strip("\"'") for w in match.group("names").split()):
            if word.startswith("-") or ("/" in word.lstrip("@") and not word.startswith("@")):
                continue
            name = re.split(r"[=<>~!\[;]", word)[0]
            name = name.rsplit("@", 1)[0] if name.count("@") > (1 if name.startswith("@") else 0) else name
            if re.fullmatch(r"@?[\w.-]+(?:/[\w.-]+)?", name):
                found.append(name)
    return found


def _error_name(signature: str) -> str:
    """An error's signature without what varies between runs (numbers, quoted values)."""
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", signature)
    return re.sub(r"\d+", "N", text)[:100].strip()


def used(use: dict[str, str]) -> list[Entity]:
    """The entities of one tool use capture recorded (:mod:`hybrid_memory.text.activity`)."""
    if use.get("path"):
        return [Entity("file", use["path"].strip())]
    command = use.get("command") or ""
    entities = [Entity("command", name) for name in [command_name(command)] if name]
    entities.extend(Entity("package", p) for p in _packages(command))
    if use.get("error"):
        entities.append(Entity("error", _error_name(use["error"])))
    return entities


def services(text: str) -> list[Entity]:
    """Well-known services and databases named in ``text``."""
    names = {_SERVICES.get(w.lower().rstrip(".")) for w in _SERVICE_WORD.findall(text)}
    return [Entity("service", _CANONICAL.get(n.lower(), n)) for n in sorted(n for n in names if n)]


def mentioned(text: str, *, said_by_user: bool, uses: list[dict[str, str]] | None = None) -> list[Entity]:
    """The entities of a turn: its tool ``uses`` (else the activity lines of its text), and the URLs,
    tickets, paths (and services) its words name."""
    found = [entity for use in (activity.uses_in(text) if uses is None else uses) for entity in used(use)]
    said = activity.words(text)
    urls = [u.rstrip(".,;:!?") for u in _URL.findall(said)]
    found.extend(Entity("url", u) for u in urls)
    said = _URL.sub(" ", said)
    found.extend(Entity("ticket", t) for t in _TICKET.findall(said) if t.split("-")[0] not in _NOT_TICKETS)
    found.extend(Entity("ticket", f"#{n.lstrip('#')}") for n in _ISSUE.findall(said))
    # An absolute path stays whole: "/app/lager/worker.py" in a pasted traceback is not the
    # project's lager/worker.py, and "app/lager/worker.py" would name a file that does not exist.
    paths = {p.removeprefix("./") for p in _PATH.findall(said)} | set(_QUOTED_FILE.findall(said))
    found.extend(Entity("file", p) for p in sorted(paths) if not p.startswith(("http", "www.")))
    if said_by_user:
        found.extend(services(said))
    return list(dict.fromkeys(found))
