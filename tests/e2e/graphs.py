"""Note graphs of a known shape, for the graph page's tests and its benchmark."""

from __future__ import annotations

import random

from hybrid_memory.models import Link, Note, NoteType, Relation

TOPICS = [
    *("sourdough", "harbour", "kiln", "chess", "invoice", "ferry", "lighthouse", "garden", "museum"),
    *("migration", "budget", "concert", "recipe", "river", "backup", "contract", "deadline", "ticket"),
]
WORDS = ["starter", "hydration", "glaze", "opening", "rent", "timetable", "index", "cluster", "replica"]


def clustered_graph(
    sizes: list[int], *, seed: int = 7, project: str = "test", bridges: int = 0
) -> tuple[list[Note], list[Link]]:
    """One cluster per size: a hub linked to each member, members in a ring; ``bridges`` random links
    between notes of different clusters."""
    rng = random.Random(seed)
    notes: list[Note] = []
    links: list[Link] = []
    kinds = list(NoteType)
    for c, size in enumerate(sizes):
        topic = TOPICS[c % len(TOPICS)]
        ids = [f"c{c}-n{i}" for i in range(size)]
        for i, nid in enumerate(ids):
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 9)))
            notes.append(
                Note(
                    id=nid,
                    project=project,
                    content=f"{topic} {i}: {words}",
                    type=rng.choice(kinds),
                    tags=[topic],
                )
            )
        pairs = {(ids[0], m) for m in ids[1:]} | {(ids[i], ids[i + 1]) for i in range(1, size - 1)}
        for a, b in sorted(pairs):
            links.append(Link(project=project, from_id=a, to_id=b, relation=rng.choice(list(Relation))))
    for _ in range(bridges):
        a, b = rng.sample(notes, 2)
        if a.tags != b.tags:
            links.append(Link(project=project, from_id=a.id, to_id=b.id, relation=Relation.RELATES_TO))
    return notes, links


def sizes_summing_to(total: int, *, seed: int = 7) -> list[int]:
    """Cluster sizes between 2 and 60, a few big and many small, as real note graphs have."""
    rng = random.Random(seed)
    sizes: list[int] = []
    while sum(sizes) < total:
        sizes.append(min(total - sum(sizes), 60, max(2, int(rng.paretovariate(1.2) * 4))))
    return sizes
