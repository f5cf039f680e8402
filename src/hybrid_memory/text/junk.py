"""Lines that are no one's words: what a session start, a digest or a note must never show.

A session's turns carry much that a person reading "where were we" does not want: the agent
host's notifications ("Read the output file to retrieve the result: /private/tmp/…"), pasted
terminal output and logs, tracebacks, code, markdown tables, box drawing from a CLI's screen,
image tags, the CLI's own echoes ("Unknown skill: …"). :func:`junk` says why a line is one of
those; :func:`prose` keeps the other lines of a text. Both the capture side (notes and digests
are drawn from prose only) and the injection side (a stored line is checked again before it is
shown) use it. Stdlib only: the hooks import it.
"""

from __future__ import annotations

import re

_IMAGE = re.compile(r"\[(?:Image|Pasted text|Pasted image)\s*#?\d*[^\]]{0,40}\]", re.IGNORECASE)
"""An image or paste placeholder inside a request: removed, the request around it kept."""
_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "notification",
        re.compile(
            r"Read the output file to retrieve|retrieve the result|<task-notification|task-notification>|"
            r"/private/tmp/|/tmp/claude-|[Bb]ackground (?:command|task|bash|shell)|"
            r"Command running in background|"
            r"\btool_use_id\b|\bshell_id\b|^\s*(?:Status|Exit code|Task ID|Output file):",
        ),
    ),
    (
        "echo",
        re.compile(
            r"Unknown (?:skill|slash command|command):|permission check failed|\[Request interrupted|"
            r"No response requested|^\(no content\)$|Caveat: The messages below|"
            r"<command-(?:name|message|args)>|"
            r"<local-command|<system-reminder|hook (?:additional context|feedback)|^Login successful|"
            r"^Set model to|^Compacted|^Context left|^\s*⎿"
        ),
    ),
    ("box drawing", re.compile(r"[─━│┃┌┐└┘├┤┬┴┼╭╮╯╰═║╔╗╚╝⎿⎡⎣▐▛▜▌▝▘░▒▓█●✓✗✔✘⏺]")),
    ("table", re.compile(r"^\s*\||\|\s*:?-{3,}|\S\s\|\s[^|]{1,60}\s\|\s|\|\s*$")),
    (
        "traceback",
        re.compile(
            r"Traceback \(most recent call last\)|^\s*File \"[^\"]+\", line \d+|"
            r"^\s*[A-Z]\w*(?:Error|Exception|Warning)(?::|$)|^\s*at [\w.$<>]+\s*\(|panicked at|"
            r"Segmentation fault|^\s*raise \w|\bError: .*\bat line \d"
        ),
    ),
    (
        "terminal",
        re.compile(
            r"^\s*(?:\$|#|>>>|\u276f|\u279c|PS [A-Z]:\\[^>]*>)\s+\S|^\s*\w[\w.-]*@[\w.-]+:[~/]|"
            r"npm (?:ERR|WARN)!|"
            r"^\s*(?:error|warning)(?:\[\w+\])?:|^\s*\[?(?:INFO|DEBUG|WARN|WARNING|ERROR|TRACE|FATAL)\]?[: ]|"
            r"^\s*\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}|^\s*\d+%\s*\||^\s*\[\d+/\d+\]|"
            r"^\s*(?:total \d+|drwx|-rw-)|^\s*(?:PASS|FAIL|ok|FAILED|ERROR)\s+[\w./:-]+|"
            r"^\s*={3,}|^\s*-{3,}|^\s*\*{3,}|^\s*\.{3,}\s*$|"
            r"\[(?:SUCCESS|OK|DONE|FAIL|FAILED|PASS|PASSED|INFO|WARN|WARNING|ERROR|SKIP|SKIPPED)\]|[✅❌⚠]"
        ),
    ),
    (
        "code",
        re.compile(
            r"```|^\s*(?:def |class \w+[(:]|import \w|from [\w.]+ import |const |let |var |function |"
            r"#include|"
            r"public |private |return |if \(|for \(|while \(|\} ?else|@\w+\()|[{;]\s*$|^\s*[})\]]+[;,]?\s*$|"
            r"=>\s*[{(]|\)\s*\{|</?[a-z][\w-]*(?:\s[^>]*)?>|^\s*[\w.]+\s*=\s*[\[{(\"'\d]|^\s*#!|^\s*//"
        ),
    ),
)
_WORD = re.compile(r"[^\W\d_]{2,}")


def without_tags(text: str) -> str:
    """``text`` without image and paste placeholders ("[Image #1]"), its spacing kept."""
    return _IMAGE.sub("", text) if "[" in text else text


def junk(line: str) -> str | None:
    """Why ``line`` is no one's words (``notification``, ``echo``, ``box drawing``, ``table``,
    ``traceback``, ``terminal``, ``code``, ``paste``); None for a line of prose."""
    text = without_tags(line).strip()
    if not text:
        return None
    for kind, pattern in _KINDS:
        if pattern.search(text):
            return kind
    items = [i.split() for i in text.split(",")]
    if len(items) >= 6 and all(1 <= len(i) <= 2 for i in items):
        return "paste"  # a list of names pasted from somewhere ("APIDesigner, Architect, Bastion, …")
    letters = sum(len(w) for w in _WORD.findall(text))
    if letters < 0.55 * len(text.replace(" ", "")) or (len(text) > 40 and " " not in text):
        return "paste"  # mostly symbols, digits or one unbroken run: a hash, a path list, a log
    return None


def prose(text: str) -> str:
    """The lines of ``text`` that are prose (fenced blocks and junk lines dropped), placeholders removed."""
    text = re.sub(r"```.*?(?:```|\Z)", "\n", text, flags=re.DOTALL) if "```" in text else text
    kept = [without_tags(line).strip() for line in text.splitlines() if junk(line) is None]
    return "\n".join(line for line in kept if line)
