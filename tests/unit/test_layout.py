"""The package's shape: no import cycle between its parts, no long module, a light client side.

Every import is counted, read with ``ast``: top-level and inside functions, ``import x``
and ``from x import y``, under ``TYPE_CHECKING`` too.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import hybrid_memory

PACKAGE = Path(hybrid_memory.__file__).parent
MAX_LINES = 400


def _part(dotted: str, prefix: str = "hybrid_memory") -> str | None:
    """The package or top-level module of ``prefix`` that ``dotted`` lives in."""
    names, top = dotted.split("."), prefix.split(".")
    if names[: len(top)] != top or len(names) <= len(top):
        return None
    return names[len(top)]


def _module_name(path: Path) -> str:
    relative = path.relative_to(PACKAGE.parent).with_suffix("")
    names = list(relative.parts)
    if names[-1] == "__init__":
        names.pop()
    return ".".join(names)


def _imported(path: Path) -> set[str]:
    """The dotted names ``path`` imports, relative imports resolved."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            # ``from hybrid_memory.host import lock`` imports a module: count the module.
            found.update(f"{base}.{alias.name}" for alias in node.names)
            found.add(base)
    return found


def parts(within: str = "") -> dict[str, set[str]]:
    """Each part of ``hybrid_memory`` (or of its package ``within``) and the other parts it imports."""
    root = PACKAGE / within
    prefix = ".".join(["hybrid_memory", *within.split("/")]) if within else "hybrid_memory"
    names = {
        p.name.removesuffix(".py")
        for p in root.iterdir()
        if p.suffix == ".py" or (p / "__init__.py").is_file()
    }
    names.discard("__init__")
    graph: dict[str, set[str]] = {name: set() for name in names}
    for path in root.rglob("*.py"):
        relative = path.relative_to(root)
        if relative.parts == ("__init__.py",):
            continue
        source = relative.parts[0].removesuffix(".py")
        for dotted in _imported(path):
            target = _part(dotted, prefix)
            # ``hybrid_memory.__version__`` and the like: the root package, which imports nothing.
            if target in graph and target != source:
                graph[source].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts with more than one member (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            members = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                members.append(member)
                if member == node:
                    break
            if len(members) > 1:
                found.append(sorted(members))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_between_the_parts_of_the_package() -> None:
    graph = parts()
    assert cycles(graph) == [], {name: sorted(targets) for name, targets in graph.items()}


def test_no_import_cycle_between_the_parts_of_the_service() -> None:
    # writes/, recall/, lifecycle/, knowledge/ and the modules beside them: each feature above what it uses.
    graph = parts("service")
    assert {"writes", "recall", "lifecycle", "knowledge", "stores"} <= set(graph)
    assert cycles(graph) == [], {name: sorted(targets) for name, targets in graph.items()}


def test_no_import_cycle_between_the_parts_of_knowledge() -> None:
    # statements/ (the finder) below capture/ (the harvest) below the use cases beside them.
    graph = parts("service/knowledge")
    assert {"statements", "capture", "service"} <= set(graph)
    assert cycles(graph) == [], {name: sorted(targets) for name, targets in graph.items()}


def test_the_cycle_finder_finds_a_cycle_through_three_parts() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_an_import_inside_a_function_counts() -> None:
    # cli imports the viewer only inside the function of its ``view`` command.
    graph = parts()
    assert "viewer" in graph["cli"]
    assert "host" in graph["integrations"]  # and hooks import the host's client inside their handlers


def test_no_module_is_over_400_lines() -> None:
    long = {
        str(path.relative_to(PACKAGE)): n
        for path in PACKAGE.rglob("*.py")
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


HEAVY = {
    *("pydantic", "pydantic_settings", "mcp", "mcp_types", "anyio", "starlette", "uvicorn", "httpx"),
    *("numpy", "onnxruntime", "qdrant_edge", "qdrant_client", "tokenizers", "fastembed", "neo4j", "sqlite3"),
}


def _loaded_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {name.partition(".")[0] for name in json.loads(out)}


def test_the_hooks_and_the_host_client_side_import_nothing_heavy() -> None:
    loaded = _loaded_after(
        "import hybrid_memory._entry, hybrid_memory.integrations.hooks, hybrid_memory.text.repeats\n"
        "import hybrid_memory.integrations.pending, hybrid_memory.integrations.transcript\n"
        "import hybrid_memory.host.client, hybrid_memory.host.lock, hybrid_memory.host.wire\n"
        "import hybrid_memory.host.start, hybrid_memory.host.join, hybrid_memory.host.stdio_relay\n"
        "import hybrid_memory.host.stop\n"
        "from hybrid_memory.integrations.config import HookConfig\n"
        "HookConfig.from_env()"
    )
    assert loaded & HEAVY == set()


def test_a_command_that_joins_a_running_host_imports_nothing_heavy() -> None:
    # What ``hybrid-memory stats`` loads before it knows whether a server answers.
    loaded = _loaded_after("import hybrid_memory.cli")
    assert loaded & HEAVY == set()


DEVELOPMENT = Path(__file__).parents[2] / "docs" / "development.md"


def _documented_layout() -> dict[str, set[str]]:
    """What docs/development.md's layout lists: ``""`` -> the top-level parts, a package -> its modules
    and its packages (``name/``)."""
    text = DEVELOPMENT.read_text()
    block = text.split("## Layout", 1)[1].split("```", 2)[1]
    listed: dict[str, set[str]] = {"": set()}
    package = ""
    for line in block.splitlines():
        name = line.strip().split(" ", 1)[0]
        indent = len(line) - len(line.lstrip())
        if not name.endswith(("/", ".py")) or indent not in (2, 4):
            continue
        if indent == 2:
            listed[""].add(name.removesuffix("/").removesuffix(".py"))
            package = name.removesuffix("/")
        else:
            listed.setdefault(package, set()).add(name.removesuffix(".py"))  # a package keeps its "/"
    return listed


def test_the_documented_layout_lists_every_part_and_only_parts_that_exist() -> None:
    listed = _documented_layout()
    assert listed[""] == set(parts()), "docs/development.md's layout and src/hybrid_memory/ differ"
    for package, modules in listed.items():
        if package:
            present = {p.stem for p in (PACKAGE / package).glob("*.py")} - {"__init__"}
            present |= {f"{p.parent.name}/" for p in (PACKAGE / package).glob("*/__init__.py")}
            assert modules == present, f"docs/development.md lists {package}/ as {sorted(modules)}"


def test_the_prompt_hook_loads_no_hashlib() -> None:
    # hashlib loads OpenSSL: more than the rest of a prompt hook's imports together on a busy machine.
    loaded = _loaded_after(
        "import hybrid_memory._entry, hybrid_memory.integrations.hooks\n"
        "import hybrid_memory.host.client, hybrid_memory.host.wire\n"
        "from hybrid_memory.integrations.config import HookConfig\n"
        "HookConfig.from_env()"
    )
    assert "hashlib" not in loaded
