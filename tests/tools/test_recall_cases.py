"""What a new user saw (issue 9), through the tools with the real model: the stating turn comes first."""

from __future__ import annotations

from typing import Any

from mcp import Client
from mcp.server.mcpserver import MCPServer

from tests.tools.helpers import call


def thread(prefix: str, *turns: tuple[str, str]) -> list[dict[str, str]]:
    """Messages ``<prefix>1``, ``<prefix>2``, ... from (role, text) pairs."""
    return [{"role": role, "content": text, "id": f"{prefix}{n}"} for n, (role, text) in enumerate(turns, 1)]


ALLERGY = thread(
    "m",
    ("user", "Can you help me plan dinners for my family visit next month?"),
    ("assistant", "Of course. How many people, and any constraints I should know?"),
    ("user", "Six of us, and two are vegetarian."),
    ("user", "My sister is allergic to peanuts, so restaurants must be careful."),
    ("assistant", "Noted: I will only suggest restaurants that handle nut allergies."),
    ("user", "Also, I prefer trains over planes for getting there."),
)


async def _ranked(client: Client, query: str) -> list[str]:
    found = await call(client, "recall_memory", query=query, limit=5)
    return [r["message_id"] for r in found["results"]]


async def test_the_turn_that_states_the_allergy_comes_before_its_acknowledgement(
    server: MCPServer[Any],
) -> None:
    async with Client(server) as client:
        await call(client, "remember_thread", thread_id="family", messages=ALLERGY)
        peanut = await _ranked(client, "peanut allergy")
        assert peanut[0] == "m4"
        assert "m6" not in peanut[:2]


async def test_a_contradicted_note_ranks_below_the_note_that_contradicts_it(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        old = await call(
            client, "create_note", content="The payment retries run every 5 minutes.", type="fact"
        )
        new = await call(client, "create_note", content="Payment retries now run hourly.", type="fact")
        await call(client, "create_link", from_id=new["id"], to_id=old["id"], relation="contradicts")
        found = await call(
            client,
            "recall_memory",
            query="how often do payment retries run every 5 minutes",
            include_invalid=True,
        )
        ids = [r["id"] for r in found["results"]]
        assert ids.index(new["id"]) < ids.index(old["id"])
        assert found["results"][ids.index(old["id"])]["valid_to"] is not None


BILLING = thread(
    "b",
    ("user", "Next topic: the new billing service."),
    ("assistant", "The candidates are PostgreSQL, MySQL and DynamoDB. Transactions or scale?"),
    ("user", "Transactions, clearly. So which database should billing use?"),
    ("assistant", "Decision: billing will use PostgreSQL 16, with a read replica for the reports."),
    ("user", "Let me look at the current invoice schema first."),
    ("assistant", "Sure, send it over when you have it."),
)


async def test_the_decision_comes_before_the_question_and_the_filler_after_it(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        await call(client, "remember_thread", thread_id="billing", messages=BILLING)
        ranked = await _ranked(client, "which database did we choose for billing?")
        assert ranked[0] == "b4"


PROJECT = [
    "Project Atlas is the rewrite of the customer portal, started in January.",
    "Atlas uses React for the front end and a GraphQL gateway.",
    "The Atlas team is five engineers led by Priya.",
    "Atlas staging runs on the shared Kubernetes cluster.",
    "Atlas has a weekly demo every Thursday afternoon.",
    "The Atlas design system is shared with the mobile app.",
    "Atlas feature flags are managed in LaunchDarkly.",
    "Atlas end-to-end tests run nightly in CI.",
    "The Atlas GraphQL gateway caches responses for thirty seconds.",
    "Atlas error tracking goes to Sentry.",
    "The Atlas launch is blocked by the single sign-on integration.",
    "Atlas analytics events are sent to Segment.",
    "Atlas supports English, German and Japanese.",
    "The Atlas product owner is Marco.",
    "Atlas accessibility review is scheduled for March.",
    "Okta SSO integration waits for the security team's approval of the SAML certificate.",
    "The security team approves certificates only on Mondays.",
]


async def test_a_note_one_link_from_the_best_hit_reaches_the_top_five(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        ids = [(await call(client, "create_note", content=c, type="fact"))["id"] for c in PROJECT]
        hub = ids[0]
        for other in ids[1:15]:
            await call(client, "create_link", from_id=other, to_id=hub, relation="part_of")
        await call(client, "create_link", from_id=ids[10], to_id=ids[15], relation="caused_by")
        await call(client, "create_link", from_id=ids[15], to_id=ids[16], relation="caused_by")
        found = await call(client, "recall_memory", query="what is blocking the Atlas launch?", limit=5)
        top = [r["id"] for r in found["results"]]
        assert top[0] == ids[10]
        assert ids[15] in top


async def test_a_replaced_note_names_its_successor_in_recall_and_in_its_links(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        old = await call(client, "create_note", content="Deploys happen on Fridays.", type="decision")
        new = await call(client, "create_note", content="Deploys now happen on Tuesdays.", type="decision")
        gone = await call(client, "create_note", content="Staging resets every night.", type="fact")
        later = await call(client, "create_note", content="Staging resets every week now.", type="fact")
        await call(client, "create_link", from_id=new["id"], to_id=old["id"], relation="supersedes")
        await call(client, "create_link", from_id=later["id"], to_id=gone["id"], relation="contradicts")
        found = await call(client, "recall_memory", query="when do deploys happen", include_invalid=True)
        by_id = {r["id"]: r for r in found["results"]}
        assert by_id[old["id"]]["superseded_by"] == new["id"]
        assert by_id[new["id"]]["superseded_by"] is None
        staging = await call(client, "recall_memory", query="staging resets", include_invalid=True)
        assert {r["id"]: r["superseded_by"] for r in staging["results"]}[gone["id"]] == later["id"]
        linked = await call(client, "get_linked_notes", note_id=new["id"])
        notes = {n["id"]: n for n in linked["notes"]}
        assert notes[old["id"]]["superseded_by"] == new["id"]
        assert notes[old["id"]]["valid_to"] is not None
        assert notes[new["id"]]["superseded_by"] is None


async def test_a_min_score_leaves_nothing_for_a_topic_never_discussed(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        await call(client, "remember_thread", thread_id="family", messages=ALLERGY)
        await call(client, "remember_thread", thread_id="billing", messages=BILLING)
        unrelated = await call(client, "recall_memory", query="quantum computing qubits", min_score=0.3)
        assert unrelated["results"] == []
        related = await call(client, "recall_memory", query="peanut allergy", min_score=0.3)
        assert [r["message_id"] for r in related["results"]][:2] == ["m4", "m5"]
        assert all(r["match"] >= 0.3 for r in related["results"])


async def test_a_message_hit_carries_the_turns_around_it(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        await call(client, "remember_thread", thread_id="family", messages=ALLERGY)
        found = await call(client, "recall_memory", query="peanut allergy", limit=1)
        hit = found["results"][0]
        assert (
            hit["message_id"],
            hit["context_before"]["message_id"],
            hit["context_after"]["message_id"],
        ) == (
            "m4",
            "m3",
            "m5",
        )
        assert hit["context_after"]["text"] == ALLERGY[4]["content"]
        bare = await call(client, "recall_memory", query="peanut allergy", limit=1, with_context=False)
        assert (bare["results"][0]["context_before"], bare["results"][0]["context_after"]) == (None, None)


async def test_a_question_naming_a_month_prefers_what_was_said_then(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        for thread, when, text in (
            ("april", "2023-04-12T18:00:00Z", "Had dinner with Anna at the Thai place tonight."),
            ("may", "2023-05-03T18:00:00Z", "Had dinner with Tom at the Thai place tonight."),
            ("june", "2023-06-20T18:00:00Z", "Had dinner with Lea at the Thai place tonight."),
        ):
            message = {"role": "user", "content": text, "id": thread, "created_at": when}
            await call(client, "remember_thread", thread_id=thread, messages=[message])
        assert (await _ranked(client, "Who did I have dinner with in May 2023?"))[0] == "may"
        assert (await _ranked(client, "Who did I have dinner with on 20 June, 2023?"))[0] == "june"


async def test_the_users_statement_about_a_sibling_comes_before_the_assistants_acknowledgement(
    server: MCPServer[Any],
) -> None:
    async with Client(server) as client:
        await call(client, "remember_thread", thread_id="family", messages=ALLERGY)
        ranked = await _ranked(client, "which food allergy does my sibling have?")
        assert ranked.index("m4") < ranked.index("m5")


BILLING_WEEK = thread(
    "w",
    ("user", "We need to pick the database for the new billing service this week."),
    ("assistant", "Let me look at the current invoice schema first."),
    ("user", "Sure, the schema is in the shared drive under finance."),
    (
        "assistant",
        "Decision: billing will use PostgreSQL 16 with logical replication to the reporting cluster.",
    ),
    ("user", "Great, and keep the invoice ids as UUIDs."),
    ("assistant", "Understood, I will keep UUIDs for invoice ids."),
    ("user", "Next week we should look at the reporting dashboards."),
)


async def test_the_decision_ranks_first_though_the_question_named_the_database_before_it(
    server: MCPServer[Any],
) -> None:
    async with Client(server) as client:
        await call(client, "remember_thread", thread_id="billing", messages=BILLING_WEEK)
        ranked = await _ranked(client, "which database did we choose for billing?")
        assert ranked[0] == "w4"


async def test_a_query_about_nothing_stored_gets_only_hits_marked_weak(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        await call(client, "remember_thread", thread_id="billing", messages=BILLING_WEEK)
        result = await client.call_tool("recall_memory", {"query": "xyzzy quantum banana", "limit": 3})
        found = result.structured_content
        assert found is not None
        assert [r["weak"] for r in found["results"]] == [True, True, True]
        text = "".join(getattr(block, "text", "") for block in result.content)
        assert text.startswith(
            "Nothing stored matches this well; every hit below is a weak match, probably unrelated.\n"
        )
        real = await call(client, "recall_memory", query="which database did we choose for billing?", limit=3)
        assert real["results"][0]["weak"] is False
