"""Filler: a message that carries nothing on its own ("Done.", "Checking.", "Let me look.")."""

from __future__ import annotations

from hybrid_memory.text.words import normalized

_FILLER = frozenset(
    " ".join(
        (
            "ok okay k done checking looking on it sure thanks thank you thx got it noted great",
            "perfect cool nice right fine understood will do one moment working on it let me look",
            "let me check let me see let me take a look let me look into it looking into it alright",
            "sounds good all good ok thanks ok thank you okay thanks continue go on go ahead",
            "feito pronto certo beleza obrigado obrigada valeu vale listo hecho gracias vale d'accord",
            "merci fait c'est fait erledigt danke fertig klar gut",
        )
    ).split(" ")
)
_PHRASES = frozenset(
    {
        "on it",
        "will do",
        "got it",
        "thank you",
        "one moment",
        "working on it",
        "let me look",
        "let me check",
        "let me see",
        "let me take a look",
        "let me look into it",
        "looking into it",
        "sounds good",
        "all good",
        "ok thanks",
        "ok thank you",
        "okay thanks",
        "go on",
        "go ahead",
        "c'est fait",
    }
)


def is_filler(text: str) -> bool:
    """True for a message that carries nothing on its own: an acknowledgement or a "let me look"."""
    flat = normalized(text)
    if not flat:
        return True
    if len(flat.split()) > 6:
        return False
    return flat in _PHRASES or all(word in _FILLER for word in flat.split())
