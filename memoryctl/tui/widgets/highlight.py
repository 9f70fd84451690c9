"""Text with the places a deprecated string names highlighted (the one matching rule)."""

from __future__ import annotations

from collections.abc import Iterable

from textual.content import Content

from memoryctl.matching import spans

CONTEXT = 40
MATCH_STYLE = "bold $text-warning on $warning-muted"


def highlighted(text: str, needles: Iterable[str]) -> Content:
    """The text around its first match, every match of every needle highlighted."""
    text = " ".join(text.split())
    found = sorted({span for needle in needles for span in spans(text, needle)})
    if not found:
        return Content(text[: CONTEXT * 2])
    start = max(found[0][0] - CONTEXT, 0)
    end = min(max(e for _, e in found) + CONTEXT, len(text))
    parts: list[tuple[str, str] | str] = ["…" if start else ""]
    cursor = start
    for begin, stop in found:
        if begin < cursor or stop > end:
            continue
        parts += [text[cursor:begin], (text[begin:stop], MATCH_STYLE)]
        cursor = stop
    parts += [text[cursor:end], "…" if end < len(text) else ""]
    return Content.assemble(*parts)
