"""The shape of the note graph, as pure functions: degrees, communities, hubs, orphans.

Communities come from label propagation over the undirected links (each note takes the
label most of its neighbours carry until nothing changes), which splits a loosely joined
component where connected components would not.
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from collections.abc import Sequence

from hybrid_memory.models import Link, Note
from hybrid_memory.models.knowledge import Cluster, GraphMap, NoteBrief
from hybrid_memory.service.knowledge._text import top_terms
from hybrid_memory.text.words import cut

MAX_ROUNDS = 50
SEED = 14
CONTENT_CHARS = 120
CLUSTER_MEMBERS = 10


def adjacency(notes: Sequence[Note], links: Sequence[Link]) -> dict[str, set[str]]:
    """Undirected neighbours of each note; links to notes not given are ignored."""
    ids = {n.id for n in notes}
    graph: dict[str, set[str]] = {n.id: set() for n in notes}
    for link in links:
        if link.from_id in ids and link.to_id in ids and link.from_id != link.to_id:
            graph[link.from_id].add(link.to_id)
            graph[link.to_id].add(link.from_id)
    return graph


def communities(graph: dict[str, set[str]]) -> dict[str, str]:
    """A community label per note (a member's id); the same graph always gets the same labels.

    Nodes are visited in a shuffled order and ties broken at random, as label propagation
    needs to keep one label from flooding across a bridge, from a fixed seed.
    """
    rng = random.Random(SEED)
    label = {node: node for node in graph}
    order = sorted(graph)
    for _ in range(MAX_ROUNDS):
        rng.shuffle(order)
        changed = False
        for node in order:
            if not graph[node]:
                continue
            counts = Counter(label[n] for n in sorted(graph[node]))
            best = max(counts.values())
            tied = sorted(lbl for lbl, c in counts.items() if c == best)
            if label[node] in tied:
                continue
            label[node] = rng.choice(tied)
            changed = True
        if not changed:
            break
    return label


def _brief(note: Note, degree: int) -> NoteBrief:
    return NoteBrief(id=note.id, type=note.type, content=cut(note.content, CONTENT_CHARS), degree=degree)


def build_map(notes: Sequence[Note], links: Sequence[Link], *, limit: int) -> GraphMap:
    """Hubs, clusters (two notes or more) and orphans, each list at most ``limit`` long."""
    by_id = {n.id: n for n in notes}
    graph = adjacency(notes, links)
    degree = {node: len(neighbours) for node, neighbours in graph.items()}
    rank = sorted(graph, key=lambda n: (-degree[n], by_id[n].created, n))
    hubs = [_brief(by_id[n], degree[n]) for n in rank if degree[n] > 0][:limit]
    members: dict[str, list[str]] = defaultdict(list)
    for node, lbl in communities(graph).items():
        members[lbl].append(node)
    groups = sorted(
        (sorted(m, key=lambda n: (-degree[n], by_id[n].created, n)) for m in members.values() if len(m) > 1),
        key=lambda m: (-len(m), m[0]),
    )
    clusters = [
        Cluster(
            label=cut(by_id[group[0]].content, CONTENT_CHARS),
            terms=top_terms((by_id[n].content for n in group), 5),
            size=len(group),
            hub_id=group[0],
            note_ids=group[:CLUSTER_MEMBERS],
        )
        for group in groups[:limit]
    ]
    orphan_ids = [n for n in rank if degree[n] == 0]
    return GraphMap(
        notes=len(notes),
        links=sum(len(v) for v in graph.values()) // 2,
        hubs=hubs,
        clusters=clusters,
        orphans=[_brief(by_id[n], 0) for n in orphan_ids[:limit]],
        orphan_count=len(orphan_ids),
    )


def fit(result: GraphMap, max_tokens: int) -> GraphMap:
    """Drop the tail of the longest list until the JSON is under ``max_tokens`` (4 characters a token)."""
    current = result
    while len(json.dumps(current.model_dump(mode="json"))) > 4 * max_tokens:
        sizes = {
            "hubs": len(current.hubs),
            "clusters": len(current.clusters),
            "orphans": len(current.orphans),
        }
        name = max(sizes, key=lambda k: sizes[k])
        if not sizes[name]:
            break
        shorter = getattr(current, name)[:-1]
        current = current.model_copy(update={name: shorter, "truncated": True})
    return current
