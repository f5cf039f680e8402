"""The viewer's one page: its HTML, with the graph component and d3-force inlined, and its CSP."""

from __future__ import annotations

from importlib import resources

from hybrid_memory.viewer.graph_parts import csp_hash, graph_style, layout_script, licence_text, vendored


def _asset(name: str) -> str:
    return resources.files("hybrid_memory.viewer").joinpath("assets", name).read_text(encoding="utf-8")


_STYLE = graph_style() + _asset("viewer.css")
_SCRIPT = layout_script() + "\n" + _asset("viewer.js")
_CREDITS = ", ".join(f"{name} {v['version']}" for name, v in vendored().items())

POLICY = (
    f"default-src 'none'; script-src {csp_hash(_SCRIPT)}; style-src {csp_hash(_STYLE)}; "
    "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
"""Only the page's own script and style run, and it talks to the server that sent it, nothing else."""

PAGE = (
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
    '<meta name="viewport" content="width=device-width, initial-scale=1">'
    f"<title>hybrid-memory viewer</title><style>{_STYLE}</style></head><body>"
    f"<!-- The graph layout is {_CREDITS} (https://d3js.org), under this licence:\n{licence_text()}-->"
    '<header><b>hybrid-memory</b><label>project <select id="project"></select></label>'
    '<nav><button data-tab="threads">Threads</button><button data-tab="notes">Notes</button>'
    '<button data-tab="recent">Recent</button><button data-tab="search">Search</button></nav>'
    '<input id="q" type="search" placeholder="Recall: what recall_memory returns, and why" '
    'aria-label="Recall"><span id="status" role="status"></span></header>'
    '<div id="auth" hidden><p>This viewer needs a bearer token: open the URL '
    "<code>hybrid-memory view</code> printed (the token rides after #token=), or, on an HTTP server, "
    "give its HYBRID_MEMORY_HTTP_TOKEN.</p>"
    '<input id="token" type="password" aria-label="Token" placeholder="Bearer token">'
    '<button id="use-token" type="button">Open</button></div>'
    "<main>"
    '<section id="tab-threads"><div id="thread-list" class="list"></div>'
    '<div id="thread-view" class="pane"></div></section>'
    '<section id="tab-notes"><svg id="graph" class="graph" xmlns="http://www.w3.org/2000/svg"></svg>'
    '<div class="side"><input id="note-search" type="search" placeholder="Find notes" '
    'aria-label="Find notes"><div id="legend" class="legend"></div>'
    '<div id="note-detail" class="detail"></div></div></section>'
    '<section id="tab-recent"><div id="recent-list" class="pane"></div></section>'
    '<section id="tab-search"><div id="results" class="pane"></div></section>'
    "</main>"
    f"<script>{_SCRIPT}</script></body></html>\n"
)
