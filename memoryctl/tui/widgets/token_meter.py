"""A one-line meter of tokens used against a budget; it turns to a warning when over."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

BAR = 24


def meter_text(label: str, used: int, budget: int, bar: int = BAR) -> Content:
    share = used / budget if budget else 0.0
    filled = min(bar, round(share * bar))
    over = used > budget
    style = "$text-error" if over else "$text-warning" if share > 0.8 else "$text-success"
    parts: list[Content | tuple[str, str] | str] = [
        (f"{label} ", "bold"),
        (f"{used:,} / {budget:,} tokens ", ""),
        ("█" * filled, style),
        ("░" * (bar - filled), "$text-muted"),
        (f" {share:.0%}", style),
    ]
    if over:
        parts.append((f"  ⚠ over the budget by {used - budget:,}", "bold $text-error"))
    return Content.assemble(*parts)


class TokenMeter(Widget):
    DEFAULT_CSS = """
    TokenMeter { height: 1; padding: 0 1; background: $boost; }
    TokenMeter.-over { background: $error-muted; }
    """

    label: reactive[str] = reactive("Tokens")
    used: reactive[int] = reactive(0)
    budget: reactive[int] = reactive(1)

    def show(self, label: str, used: int, budget: int) -> None:
        self.label, self.used, self.budget = label, used, budget
        self.set_class(used > budget, "-over")

    @property
    def over(self) -> bool:
        return self.used > self.budget

    def render(self) -> Content:
        # The bar takes what room the words leave, so the numbers always show.
        words = len(meter_text(self.label, self.used, self.budget, 0).plain)
        room = self.content_size.width - words
        return meter_text(self.label, self.used, self.budget, max(0, min(BAR, room)))
