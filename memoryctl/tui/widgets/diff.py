"""A unified diff as coloured text: added lines green, removed lines red."""

from __future__ import annotations

import difflib

from textual.content import Content

STYLES = {"+": "$text-success", "-": "$text-error", "@": "$text-accent"}


def diff_content(diff: str) -> Content:
    lines = []
    for line in diff.splitlines():
        head = line[:1]
        if line.startswith(("+++", "---", "diff ", "index ")):
            lines.append(Content.styled(line, "$text-muted"))
        else:
            lines.append(Content.styled(line, STYLES.get(head, "")))
    return Content("\n").join(lines)


def text_diff(before: str, after: str, before_name: str, after_name: str) -> Content:
    """The difference between two texts, as a unified diff."""
    diff = difflib.unified_diff(
        before.splitlines(), after.splitlines(), before_name, after_name, lineterm=""
    )
    return diff_content("\n".join(diff))
