"""``hybrid-memory graph --html FILE``: the note graph as one self-contained offline page.

Notes are coloured by type, links by relation; each cluster (label propagation, as map_notes
finds them) is laid out apart from the others in a tinted circle captioned with its top terms;
the search box dims what does not match; a click shows the note, its links and the messages
it was distilled from. The layout is d3-force's, inlined (:mod:`.graph_parts`); a Content
Security Policy in the page lets nothing but its own script and style run and no request leave.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence

from hybrid_memory.models import Link, Note
from hybrid_memory.service.knowledge.distill import SOURCE_TAG
from hybrid_memory.service.knowledge.graphmap import adjacency, build_map, communities
from hybrid_memory.viewer.graph_parts import csp_hash, graph_style, licence_text, page_script, vendored

MAX_SOURCE_CHARS = 400


def source_ids(notes: Sequence[Note]) -> list[str]:
    """The memory ids notes cite (their ``src:`` tags)."""
    return list(
        dict.fromkeys(t.removeprefix(SOURCE_TAG) for n in notes for t in n.tags if t.startswith(SOURCE_TAG))
    )


def page_data(notes: Sequence[Note], links: Sequence[Link], sources: Mapping[str, str]) -> dict[str, object]:
    """What the page draws: nodes with their cluster and cited sources, links, cluster labels."""
    graph = adjacency(notes, links)
    labels = communities(graph)
    summary = build_map(notes, links, limit=len(notes) or 1)
    cluster_of = {member: c.hub_id for c in summary.clusters for member in _members(labels, c.hub_id)}
    hues = {c.hub_id: (i * 137) % 360 for i, c in enumerate(summary.clusters)}
    nodes = [
        {
            "id": n.id,
            "type": n.type.value,
            "content": n.content,
            "tags": [t for t in n.tags if not t.startswith(SOURCE_TAG)],
            "degree": len(graph[n.id]),
            "cluster": cluster_of.get(n.id),
            "hue": hues.get(cluster_of.get(n.id, ""), 0),
            "sources": [
                {"id": s, "text": sources[s][:MAX_SOURCE_CHARS]}
                for s in (t.removeprefix(SOURCE_TAG) for t in n.tags if t.startswith(SOURCE_TAG))
                if s in sources
            ],
        }
        for n in notes
    ]
    return {
        "nodes": nodes,
        "links": [{"from": lk.from_id, "to": lk.to_id, "relation": lk.relation.value} for lk in links],
        "clusters": [
            {"id": c.hub_id, "label": c.label[:60], "terms": c.terms[:3], "size": c.size}
            for c in summary.clusters
        ],
    }


def _members(labels: Mapping[str, str], hub: str) -> list[str]:
    return [node for node, label in labels.items() if label == labels[hub]]


PAGE_STYLE = """
body{margin:0;font:14px system-ui,sans-serif;display:flex;height:100vh;color:#222}
#side{width:320px;flex:none;padding:12px;border-right:1px solid #ddd;overflow:auto;box-sizing:border-box}
#side h1{font-size:16px;margin:0 0 8px}#search{width:100%;padding:6px;box-sizing:border-box}
#bar{color:#666;font-size:12px;margin:6px 0}#fit{float:right;font-size:12px}.detail{margin-top:12px}
"""


def render(title: str, data: Mapping[str, object]) -> str:
    """The whole page; the data rides in a JSON script block, ``</`` escaped so no text can end it."""
    payload = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    style, script = PAGE_STYLE + graph_style(), page_script()
    policy = (
        f"default-src 'none'; script-src {csp_hash(script)}; style-src {csp_hash(style)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    credits = ", ".join(f"{name} {v['version']}" for name, v in vendored().items())
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        f"<title>{html.escape(title)}</title><style>{style}</style></head><body>"
        f"<!-- The layout is {credits} (https://d3js.org), under this licence:\n{licence_text()}-->"
        f'<div id="side"><h1>{html.escape(title)}</h1>'
        '<input id="search" type="search" placeholder="Search notes (Enter zooms to them)" '
        'aria-label="Search notes">'
        '<div id="bar"><button id="fit" type="button">Fit</button><span id="count"></span></div>'
        '<div id="legend" class="legend"></div><div id="detail" class="detail"></div></div>'
        '<svg id="canvas" class="graph" xmlns="http://www.w3.org/2000/svg"></svg>'
        f'<script type="application/json" id="graph-data">{payload}</script>'
        f"<script>{script}</script></body></html>\n"
    )
