"""Words that mark a clause as a rule, a decision, a preference or a fact, in several languages.

English, Portuguese, Spanish, French, German, Chinese and Japanese. Latin-script words are
matched at word boundaries on the lower-cased clause; Chinese and Japanese markers anywhere.
Each clause gets a few numbers (see :func:`features`) that the statement classifier weighs
beside the clause's embedding, and a kind (see :func:`kind`) from the strongest marker.
A marker alone never makes a note: it is one feature among others.
"""

from __future__ import annotations

import re

_RULE = (
    r"\b(?:never|always|don'?t|do not|dont|donts|must(?:n'?t)?|should(?:n'?t)?|shall|avoid|ensure|make sure|"
    r"no more|not allowed|forbidden|every time|whenever|only ever|stop (?:doing|using)|"
    r"nunca|sempre|siempre|jamais|jamás|jamas|toujours|nie|niemals|immer|"
    r"n[ãa]o (?:use|fa[çc]a|fique|mexa|altere|crie|rode)|no (?:uses|hagas|toques|cambies|crees)|"
    r"deve|devem|tem que|têm que|debe|deben|hay que|tiene que|il faut|doit|doivent|"
    r"ne (?:\w+ )?(?:pas|jamais)|"
    r"muss|müssen|sollte|sollen|darf nicht|dürfen nicht|kein(?:e|en)?)\b"
    r"|不要|別|别|必須|必须|應該|应该|不能|禁止|总是|總是|永远|永遠|一律|务必|務必|不准|不得|统一|統一"
    r"|しないで|ないで|必ず|常に|禁止|べき|してはいけない|しては駄目|ダメ"
)
_PREFERENCE = (
    r"\b(?:i (?:really |just |also |actually )?(?:want|wanna|need|like|love|hate|prefer|dislike|would like|"
    r"'d like|'d rather|would rather|dont want|don'?t want|do not want|don'?t like|dont like|"
    r"do not like|can'?t stand)|i'?m fine with|looks? (?:the )?(?:best|better|good)|keep (?:the|it|them)|"
    r"quero|prefiro|gosto|não quero|nao quero|quiero|prefiero|me gusta|no quiero|"
    r"je veux|je préfère|j'aime|je ne veux pas|ich will|ich möchte|ich bevorzuge|ich mag|ich hätte gern)\b"
    r"|我想|我要|我希望|我喜欢|我喜歡|我不想|我不要|偏好|比较好|比較好"
    r"|たい|好き|がいい|ほうがいい|方がいい|欲しい"
)
_DECISION = (
    r"\b(?:let'?s|lets|we'?ll|we will|go with|going with|switch(?:ing)? (?:to|from)|move (?:to|from)|"
    r"migrate|replace|rename|instead of|rather than|change (?:\w+ )?to|use|using|decided|decide|"
    r"from now on|going forward|in the end|the plan is|the goal is|task:|"
    r"vamos|usar|usa|trocar|mudar para|em vez de|en vez de|cambiar a|utilizar|on va|utiliser|"
    r"remplacer|au lieu de|wir nehmen|verwenden|benutzen|ersetzen|statt|anstatt|stattdessen)\b"
    r"|改成|改为|改為|换成|換成|使用|采用|採用|决定|決定|(?<!使)用(?![户戶])\s?\S"
    r"|にする|に変更|を使う|を使って|使用"
)
_FACT = (
    r"\b(?:is|are|we use|we have|i use|i work|i am|i'm|im|my|our|is what we use|lives? in|runs? on|"
    r"currently|source of truth|source of thruth|"
    r"é|são|usamos|trabalho|es|son|somos|trabajo|est|sont|nous utilisons|ist|sind|wir nutzen|ich arbeite)\b"
    r"|是|都是|在|我們|我们|です|である|使っている"
)
_ONE_OFF = (
    r"^(?:please |pls |can you |could you |now |then |ok |okay |also )*"
    r"(?:fix|check|look|run|read|show|help|try|test|debug|find|explain|add|remove|delete|create|write|"
    r"update|install|build|commit|push|open|give|tell|make|start|stop|restart|continue|review|analy[sz]e|"
    r"investigate|search|print|list|generate|implement|refactor)\b"
    r"|^(?:请|請|看看|检查|檢查|运行|運行|执行|執行)|帮我|幫我|修复|修復|\bbug\b|好像|可能|也许|也許|或许|或許"
    r"|^(?:pode|podes|faça|faz|verifica|verifique|puedes|haz|revisa|peux-tu|vérifie|kannst du|prüf|mach)\b"
)
_NEGATION = (
    r"\b(?:not|no|never|don'?t|dont|do not|não|nao|nunca|jamais|nie|nicht|kein\w*)\b|不|没|沒|別|别|ない"
)
_DURABLE = (
    r"\b(?:always|never|from now on|going forward|every|each|all|whole|in the end|currently|"
    r"by default|default|convention|rule|policy|standard|source of truth|for efficiency|for consistency|"
    r"sempre|siempre|toujours|immer|todas?|todos|tous|alle)\b"
    r"|所有|每次|全部|一律|默认|預設|すべて|全て|毎回"
)

_MARKERS = {
    name: re.compile(pattern)  # matched on lower-cased text
    for name, pattern in (
        ("rule", _RULE),
        ("preference", _PREFERENCE),
        ("decision", _DECISION),
        ("fact", _FACT),
        ("one_off", _ONE_OFF),
        ("negation", _NEGATION),
        ("durable", _DURABLE),
    )
}
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_PATHLIKE = re.compile(r"\S+[/\\]\S+|\S+\.(?:py|ts|js|json|md|yml|yaml|toml|sh|css|html)\b")

NAMES = (
    "rule",
    "preference",
    "decision",
    "fact",
    "one_off",
    "negation",
    "durable",
    "cjk",
    "path",
    "short",
    "long",
    "answers",
    "in_plan",
)
"""The lexical features of a clause, in the order :func:`features` gives them."""


def features(text: str, *, answers: bool = False, in_plan: bool = False) -> list[float]:
    """The lexical features of ``text`` (see NAMES): 1.0 where a marker is present, else 0.0."""
    lowered = text.lower()
    found = [1.0 if _MARKERS[name].search(lowered) else 0.0 for name in NAMES[:7]]
    cjk = bool(CJK.search(text))
    size = len(text) // 3 if cjk else len(text.split())
    return [
        *found,
        1.0 if cjk else 0.0,
        1.0 if _PATHLIKE.search(text) else 0.0,
        1.0 if size <= 4 else 0.0,
        1.0 if size >= 25 else 0.0,
        1.0 if answers else 0.0,
        1.0 if in_plan else 0.0,
    ]


def kind(text: str) -> str:
    """The note kind ``text`` most likely states: preference, rule, decision, fact, else decision."""
    lowered = text.lower()
    if _MARKERS["preference"].search(lowered):
        return "preference"
    if _MARKERS["rule"].search(lowered):
        return "rule"
    if _MARKERS["decision"].search(lowered):
        return "decision"
    if _MARKERS["fact"].search(lowered):
        return "fact"
    return "decision"


_HAN = re.compile(r"[\u3400-\u9fff]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_WORD = re.compile(r"[^\W_]+")
_LANGUAGE_WORDS = {
    "pt": "não nao que para com uma os as você voce está esta isso fazer também pode quero do da em",
    "es": "que para con una los las usted está esto hacer también puedes quiero el del en por y",
    "fr": "que pour avec une les des est pas je vous ce cette faire aussi le la du et sur",
    "de": "und die der das nicht ist mit für ich wir ein eine auch bitte den dem zu auf",
    "en": "the and to is it that for with you this not we of in on be are use i",
}
_WORDS = {lang: frozenset(words.split()) for lang, words in _LANGUAGE_WORDS.items()}


def language(text: str) -> str:
    """en, pt, es, fr, de, zh or ja, by script and common words (en when unsure)."""
    if _KANA.search(text):
        return "ja"
    if _HAN.search(text):
        return "zh"
    found = [w.lower() for w in _WORD.findall(text)]
    counts = {lang: sum(w in vocab for w in found) for lang, vocab in _WORDS.items()}
    best = max(counts, key=lambda lang: counts[lang])
    return best if counts[best] > counts["en"] else "en"
