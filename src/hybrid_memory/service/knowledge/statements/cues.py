"""What a later session must know, read from what was said: rules, decisions, preferences, stated facts.

No model: each sentence of a user turn is matched against cues at its start ("never …",
"always …", "we use …", "we moved … from X to Y", "tests run with …", "I prefer …", "our
service uses …"), in English and a few cheap cues in Portuguese, Spanish, French and
German. An assistant turn counts only where it restates a decision ("Decision: …",
"Noted: …"). Precise rather than greedy, because a wrong note is shown in every later
session: questions, hypotheticals ("if we …", "maybe …"), hedges ("I think …"), one-off
requests ("don't change it for now"), quoted or pasted text and code are left alone.

Rules and conventions are typed ``decision`` and tagged ``rule`` (NoteType stays closed);
every note drawn from a conversation is tagged ``captured`` and with its kind.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from hybrid_memory.models import NoteType
from hybrid_memory.service.knowledge._text import SENTENCE_END, content_words
from hybrid_memory.service.knowledge.statements.clauses import PLAN, SCAFFOLD, prose
from hybrid_memory.text import activity

CAPTURED = "captured"
"""The tag of every note and entity drawn from a conversation."""
CLASSIFIED = "classified"
"""The tag of a note the statement classifier drew, with no cue: less sure than a cue's."""
PROBABILITY = "p:"
"""The tag of a classified note's probability (``p:0.973``), beside :data:`CLASSIFIED`."""
KINDS = {"rule": NoteType.DECISION, "decision": NoteType.DECISION}
MAX_MESSAGE_CHARS = 3_000
"""A longer user turn is most likely pasted text (a log, a document): its sentences are not the user's."""
MAX_SENTENCE_CHARS = 300
MIN_WORDS, MAX_WORDS = 3, 45


@dataclass(frozen=True)
class Said:
    """One remembered turn: its memory id, role and text, and its tool uses as stored (None: stored
    before they were, when its text's activity lines are all there is)."""

    id: str
    role: str
    text: str
    stored_uses: tuple[dict[str, str], ...] | None = None

    @property
    def uses(self) -> list[dict[str, str]]:
        """The files it edited and read and the commands it ran (:mod:`hybrid_memory.text.activity`)."""
        return list(self.stored_uses) if self.stored_uses is not None else activity.uses_in(self.text)


@dataclass
class Cue:
    """A note to write: its kind (rule, decision, preference, fact), text and the turns it came from."""

    kind: str
    content: str
    sources: list[str] = field(default_factory=list)
    replaces: str | None = None
    """The old value a change names ("we moved billing from Postgres 16 to …": Postgres 16)."""
    said: str = ""
    """The clause as the user said it, where the note's wording differs from it."""
    score: float = 1.0
    """How sure the finder is: 1.0 for a cue, the classifier's probability for a clause it kept."""

    @property
    def type(self) -> NoteType:
        return KINDS[self.kind] if self.kind in KINDS else NoteType(self.kind)

    @property
    def tags(self) -> list[str]:
        """``captured``, the kind, and ``classified`` where only the classifier found it (not a cue)."""
        sure = [CLASSIFIED, f"{PROBABILITY}{self.score:.3f}"] if self.score < 1.0 else []
        return [CAPTURED, self.kind, *sure]


def certainty(tags: Sequence[str]) -> float:
    """How sure the finder was of a note, from its tags: 1.0 unless :data:`CLASSIFIED`, else its
    probability (0.0 where a classified note has none recorded)."""
    if CLASSIFIED not in tags:
        return 1.0
    for tag in tags:
        if tag.startswith(PROBABILITY):
            try:
                return float(tag.removeprefix(PROBABILITY))
            except ValueError:
                return 0.0
    return 0.0


_FILLER = re.compile(
    r"^(?:ok(?:ay)?|so|also|and|but|btw|fyi|just|oh|alright|right|great|cool|perfect|yes|yeah|"
    r"please|por favor|bitte|s'il te plaît|note|remember|important|reminder|heads up|"
    r"ah|e|y|et|und|então|entonces|alors|também|también|aussi|auch)\b[,:!.]?\s+",
    re.IGNORECASE,
)
_ASSISTANT_RESTATES = re.compile(
    r"^(?:decision|decided|agreed|rule|convention|noted|understood|got it)"
    r"\s*[:\u2014\u2013-]\s*(?P<rest>.+)$",
    re.IGNORECASE,
)
_NOT_STATED = re.compile(
    r"\?|^(?:do|does|did|is|are|was|were|can|could|would|should) (?:we|you|i|they|it|he|she|there)\b"
    r"|^(?:if|what if|suppose|imagine|maybe|perhaps|how|why|what|which|when|whether|unless|in case|"
    r"wondering|i wonder|not sure|se|si|wenn|ob|falls|"
    r"talvez|quizás|peut-être|vielleicht)\b"
    r"|\b(?:never ?mind|used to|was going to|were going to|i think|i guess|i believe|probably|might|"
    r"not sure|don't know|do not know|wonder|for now|right now|yet|this time|at the moment|here|"
    r"pay attention|"
    r"for this (?:task|file|pr|change)|por enquanto|por ahora|pour l'instant|vorerst|erstmal)\b",
    re.IGNORECASE,
)
"""Questions, hypotheticals, hedges, one-off and past-tense habits: not a durable statement."""
_ONE_OFF_VERBS = (
    "worry|bother|know|think|understand|see|get|care|mind|forget|touch it|do that|do this|change it|"
    "the|a|an|this|that|it|so|same|been|had|happened|ever|again|sure|mention|said|say|tell"
)
_RULE = re.compile(
    rf"^(?:never|always|don'?ts?|do not|avoid)\s+(?!(?:{_ONE_OFF_VERBS})\b)\w+"
    r"|^(?:please )?(?:ensure|make sure) (?:that )?.{3,80}"
    r"\b(?:according to|best practices?|conventions?|guidelines?)\b"
    r"|^(?:you|we) (?:must|should|need to|have to) (?:always|never)\b"
    r"|^(?:you|we) (?:always|never) \w+|^you (?:must not|mustn't) \w+"
    r"|^(?:make sure|ensure) (?:to |that |you |we )?(?:always|never)\b"
    r"|^(?:from now on|going forward|henceforth|as a rule)\b"
    r"|^(?!(?:it|that|this|there|which|he|she|they|we|you|i)\b)"
    r"[\w./`-]+(?: [\w./`-]+){0,4} must(?: not|n't)? \w+"
    r"|^(?:the |our |all )?(?:unit |integration |e2e |end-to-end )?tests? (?:are |is )?"
    r"(?:run|ran|runs|executed|launched) (?:with|via|using|through|by)\b"
    r"|^(?:to )?run (?:the )?tests? (?:with|via|using)\b"
    r"|^we (?:build|deploy|lint|format|release|ship|test|package|type-?check) "
    r"(?:\S+ ){0,3}(?:with|via|using)\b"
    r"|^use \S+(?: \S+){0,3} (?:for|instead of|rather than|over)\b"
    # pt / es
    r"|^(?:nunca|sempre|siempre|jamais|jamás)\s+\w+"
    r"|^não (?:faça|faz|use|usa|commite|rode|mexa|altere|suba|envie|dê)\b"
    r"|^no (?:hagas|uses|subas|toques|cambies|hagan|usen)\b"
    r"|^(?:os testes|as testes) (?:rodam|são executados|correm) com\b"
    r"|^las pruebas (?:se ejecutan|corren) con\b"
    # fr
    r"|^(?:ne jamais|il faut toujours|il ne faut jamais|toujours)\b"
    r"|^n'\w+ jamais\b|^ne \w+ jamais\b"
    r"|^les tests (?:se lancent|tournent) (?:avec|via)\b"
    # de
    r"|^(?:nie|niemals|immer)\s+\w+"
    r"|^wir \w+ (?:\S+ ){0,3}?(?:nur|immer|nie|niemals) (?:über|mit|per|via|auf|in)\b"
    r"|^(?:die )?tests (?:laufen|werden) mit\b",
    re.IGNORECASE,
)
_CHANGE = re.compile(
    r"^we(?:'ve| have|'re| are)? (?:now )?(?:moved|moving|switched|switching|migrated|migrating|changed|"
    r"replaced|upgraded|upgrading|raised|raising|bumped|bumping|lowered|lowering)\b"
    r"|^(?:nós )?(?:migramos|mudamos|trocamos)\b|^(?:nosotros )?(?:migramos|cambiamos)\b"
    r"|^(?:on a|nous avons) (?:migré|changé|remplacé)\b|^on (?:passe|est passé)\b"
    r"|^wir (?:sind|haben|migrieren|wechseln)\b.*\b(?:umgestiegen|migriert|gewechselt|wechseln|migrieren)\b",
    re.IGNORECASE,
)
_VAGUE = (
    r"(?!\s+(?:it|this|that|them|these|those|one|option|options|the (?:first|second|third|last|former|latter|"
    r"other|same|wrong)|your|my|a lot|too|way|plan|approach|suggestion)\b)"
)
"""What makes "let's go with …" say nothing to a later session: "that", "option 2", "your plan"."""
_DECISION = re.compile(
    r"^we(?:'re| are| will|'ll)? (?:use|using|standardi[sz]e on|stick with|sticking with|go with|going with|"
    rf"chose|picked|settled on|target|store|deploy (?:to|on)|run on|host on)\b{_VAGUE}"
    r"|^we(?:'ve| have)? (?:decided|agreed) (?:to|that|on)\b"
    r"|^(?:let's|lets|let us) (?:go with|stick with|standardi[sz]e on|adopt|switch to|move to|migrate to)\b"
    + _VAGUE
    + r"|^(?:let's|lets|let us) (?:use|keep) .+ (?:for|as|instead of)\b"
    r"|^(?:let's|lets|let us|we'll|we will) (?:set|make|keep) .+ (?:to|at) .*\d"
    r"|^(?:the )?decision(?: is)?\s*:|^decided\s*:|^it's decided\b"
    r"|^(?:the )?[\w -]{2,30}?(?:ttl|timeout|limit|port|version|retention|expiry|lifetime|budget) "
    r"(?:is|should be|must be|will be|stays) .*\d"
    r"|^(?:the |our |all )?[\w -]{2,30}? (?:expire|expires|time out|times out|rotate|rotates|renew|renews) "
    r"(?:after|every|in|at) .*\d"
    r"|^(?:set|make|change) (?:the |our )?[\w -]{0,30}?(?:ttl|timeout|limit|port|retention|expiry|lifetime|"
    r"budget)s?\b.* (?:to|at) .*\d"
    # pt / es / fr / de
    r"|^(?:nós )?(?:usamos|utilizamos|vamos usar|decidimos|escolhemos)\b"
    r"|^(?:nosotros )?(?:usamos|utilizamos|vamos a usar|elegimos)\b"
    r"|^(?:on utilise|nous utilisons|on a décidé|nous avons décidé|on part sur)\b"
    r"|^wir (?:nutzen|verwenden|benutzen|nehmen|setzen auf|haben (?:uns )?(?:für|entschieden))\b",
    re.IGNORECASE,
)
_PREFERENCE = re.compile(
    r"^i (?:really |strongly |much |generally |usually )?(?:prefer|favou?r|like to|like it when|"
    r"hate it when|dislike|can't stand|'d rather|would rather|always|never) \w+"
    r"|^my (?:preference|preferred [\w ]{1,20}) (?:is|are)\b"
    r"|^(?:eu )?prefiro\b|^(?:yo )?prefiero\b|^je préfère\b|^ich (?:bevorzuge|mag lieber)\b",
    re.IGNORECASE,
)
_ROLES = (
    "developer|engineer|programmer|designer|architect|student|researcher|scientist|analyst|manager|lead|"
    "maintainer|founder|cto|consultant|freelancer|administrator|admin|devops|sre|teacher|writer"
)
_FACT = re.compile(
    rf"^(?:i'm|i am) (?:a|an|the) (?:[\w-]+ ){{0,3}}(?:{_ROLES})\b"
    r"|^i work (?:at|for|with)\b|^my name is\b|^(?:i'm|i am) based in\b|^i live in\b"
    r"|^(?:the )?(?:company|team|org|organi[sz]ation|client) i work (?:at|for|with) is\b"
    r"|^my (?:team|company|role|job|timezone|time zone|stack|os|editor) (?:is|are|uses)\b"
    r"|^(?:our|the|this) (?:[\w-]+ )?(?:project|repo|repository|app|application|service|api|codebase|"
    r"backend|frontend|stack|team|company|product|database|db|ci|cluster|monorepo|website|site) "
    r"(?:uses|runs on|targets|depends on|is written in|is built (?:with|on)|is deployed (?:to|on)|"
    r"lives in|is hosted (?:on|at|by)|talks to|supports|requires)"
    r"|^we (?:only )?(?:support|require|target)\b",
    re.IGNORECASE,
)
_NAMED_FACT = re.compile(
    r"^(?:[Oo]ur|[Tt]his (?:project|repo|crate|package|app)'s) [\w-]+(?: [\w-]+)? (?:is|are|uses|runs on) "
    r"(?:Rust |Python |Node |Go |Java )?(?=[A-Z0-9`]|\S+/)"
    r"|^(?:[Tt]he|[Oo]ur) [\w-]+(?: [\w-]+)? lives? in \S+/"
    # de / pt / es: "Die Datenbank ist MariaDB 10.11", "O banco é PostgreSQL 15"
    r"|^(?:[Dd]ie|[Dd]er|[Dd]as|[Uu]nser[e]?) (?:Datenbank|DB|API|CI|Queue|Cache|Frontend|Backend) "
    r"(?:ist|läuft auf|nutzt|verwendet) (?=[A-Z0-9`])"
    r"|^(?:[Oo]|[Nn]osso|[Ee]l|[Nn]uestro) (?:banco(?: de dados)?|frontend|backend|cache) "
    r"(?:é|es|usa|roda em|corre en|está (?:feito|hecho) (?:com|con|em|en)) (?=[A-Z0-9`])"
    r"|^(?:[Aa]|[Nn]ossa|[Ll]a|[Nn]uestra) (?:base de (?:dados|datos)|API|fila|cola) "
    r"(?:é|es|usa|roda em|corre en) (?=[A-Z0-9`])"
)
"""A thing of the project named by a proper value: "our warehouse is Snowflake", "MSRV is Rust 1.74"."""
_LABEL = re.compile(r"^(?P<label>[\w' -]{2,40}):\s+(?P<rest>\S.*)$")
"""A sentence opened by a label ("Ground rules: always use pnpm"): its cue is read after the label."""
_CLAUSE_RULE = re.compile(
    rf"[,;]\s+(?:so |and |but |then )?(?:never|always|don't|do not)\s+"
    rf"(?!(?:{_ONE_OFF_VERBS}|has|have|had|was|were|is|are|did|does|works?|worked)\b)\w+",
    re.IGNORECASE,
)
"""A rule in a later clause: "published from CI, never from a laptop", "…; never schedule anything then"."""
_CHANGE_FROM = (
    re.compile(r"\bfrom (?P<old>[^,;]+?) (?:to|onto|over to)\b", re.IGNORECASE),
    re.compile(r"\breplaced? (?P<old>[^,;]+?) (?:with|by)\b", re.IGNORECASE),
    re.compile(r"\bde (?P<old>[^,;]+?) (?:para|a|à|vers)\b", re.IGNORECASE),
    re.compile(r"\bvon (?P<old>[^,;]+?) (?:auf|zu|nach)\b", re.IGNORECASE),
)
_ARTICLE = re.compile(r"^(?:the|our|a|an|o|a|os|el|la|los|le|les|der|die|das)\s+", re.IGNORECASE)
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_LIST_MARK = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_NOT_PROSE = re.compile(r"^\s*(?:\(|>|\$ |#!|//|    |\t|[{}\[\]<])")
_KEY = re.compile(r"[\W_]+")


def key(text: str) -> str:
    """What two statements of one note share: lower-cased words, punctuation and spacing dropped."""
    return _KEY.sub(" ", text.lower()).strip()


def _lines(text: str) -> list[str]:
    """The prose lines of a turn: code blocks, quotes, activity lines and code-looking lines dropped."""
    kept: list[str] = []
    for line in _FENCE.sub("\n", text).splitlines():
        if not line.strip() or _NOT_PROSE.match(line) or not prose(line):
            continue
        kept.append(_LIST_MARK.sub("", line).strip())
    return kept


def _strip_filler(sentence: str) -> str:
    before = None
    while before != sentence:
        before = sentence
        sentence = _FILLER.sub("", sentence, count=1).strip()
    return sentence


def _opening_kind(sentence: str) -> str | None:
    if _CHANGE.search(sentence) or _DECISION.search(sentence):
        return "decision"
    if _PREFERENCE.search(sentence):
        return "preference"
    if _RULE.search(sentence):
        return "rule"
    if _FACT.search(sentence) or _NAMED_FACT.search(sentence):
        return "fact"
    return None


def _kind(sentence: str) -> str | None:
    if _NOT_STATED.search(sentence):
        return None
    kind = _opening_kind(sentence)
    labelled = _LABEL.match(sentence)
    if kind is None and labelled is not None and len(labelled.group("label").split()) <= 6:
        kind = _opening_kind(_strip_filler(labelled.group("rest")))
    if kind in (None, "fact") and _CLAUSE_RULE.search(sentence):
        return "rule"
    return kind


def cue_kind(sentence: str) -> str | None:
    """The kind a cue at the start of ``sentence`` names (None: no cue, or not a durable statement)."""
    return _kind(_strip_filler(sentence.strip()))


def replaced(sentence: str) -> str | None:
    """The old value a change in ``sentence`` names ("from Postgres 16 to …"), or None."""
    return _replaced(sentence)


def _replaced(sentence: str) -> str | None:
    if not _CHANGE.search(sentence):
        return None
    for pattern in _CHANGE_FROM:
        found = pattern.search(sentence)
        if found:
            old = _ARTICLE.sub("", found.group("old").strip(" `'\""))
            if len(old) >= 2 and len(old.split()) <= 5:
                return old
    return None


def _tidy(sentence: str) -> str:
    sentence = sentence.strip().rstrip(",;:")
    sentence = sentence[:1].upper() + sentence[1:]
    return sentence if sentence.endswith((".", "!", "…")) else sentence + "."


def _statements(sentence: str, role: str) -> list[str]:
    """The statements of a sentence: the user's sentence whole; the parts of the assistant's restatement.

    "Understood: billing stays on Postgres 16, I run `make test`, and changes go through pull
    requests" restates three things: each part is read on its own, never the list as one note.
    """
    sentence = _strip_filler(sentence.strip())
    if role != "assistant":
        return [s for s in [_statement(sentence)] if s]
    restated = _ASSISTANT_RESTATES.match(sentence)
    if restated is None:
        return []
    parts = _LIST_SPLIT.split(restated.group("rest"))
    return [s for s in (_statement(_strip_filler(p)) for p in parts) if s]


def _statement(sentence: str) -> str | None:
    """The sentence as a statement worth a note, or None."""
    words = sentence.split()
    if not MIN_WORDS <= len(words) <= MAX_WORDS or len(sentence) > MAX_SENTENCE_CHARS:
        return None
    if sentence[:1] in "\"'“«" or len(content_words(sentence)) < 2:
        return None
    return sentence


_LIST_SPLIT = re.compile(r"\s*;\s*|,\s+(?:and\s+)?(?=\S+\s+\S+\s+\S+)")
"""Where a restatement lists its parts: "a, b, and c", "a; b"."""


def cues(said: Sequence[Said]) -> list[Cue]:
    """The notes stated in ``said`` (turns in order); one cue per distinct statement, with all its sources."""
    found: dict[str, Cue] = {}
    for turn in said:
        if turn.role not in ("user", "assistant") or (
            turn.role == "user"
            and (len(turn.text) > MAX_MESSAGE_CHARS or PLAN.match(turn.text) or SCAFFOLD.match(turn.text))
        ):
            continue
        for line in _lines(turn.text):
            for sentence in (s for raw in SENTENCE_END.split(line) for s in _statements(raw, turn.role)):
                kind = _kind(sentence)
                if kind is None:
                    continue
                content = _tidy(sentence)
                cue = found.setdefault(
                    key(content), Cue(kind, content, replaces=_replaced(sentence), said=sentence)
                )
                if turn.id not in cue.sources:
                    cue.sources.append(turn.id)
    return list(found.values())
