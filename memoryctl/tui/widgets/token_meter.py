"""A one-line meter of tokens used against a budget; it turns to a warning when over."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

BAR = 24
MIN_BAR = 8  # narrower than this, the meter leaves its label out to keep its bar


def meter_text(label: str, used: int, budget: int, bar: int = BAR) -> Content:
    share = used / budget if budget else 0.0
    filled = min(bar, round(share * bar))
    over = used > budget
    style = "$text-error" if over else "$text-warning" if share > 0.8 else "$text-success"
    parts: list[Content | tuple[str, str] | str] = [
        (f"{label} " if label else "", "bold"),
        (f"{used:,} / {budget:,} tokens ", ""),
        ("█" * filled, style),
        ("░" * (bar - filled), "$text-muted"),
        (f" {share:.0%}", style),
    ]
    if over:
        parts.append((f"  ⚠ over the budget by {used - budget:,}", "bold $text-error"))
    return Content.assemble(*parts)


def fitted_meter(label: str, used: int, budget: int, width: int) -> Content:
    """The meter in `width` cells: the bar takes what room the words leave, up to BAR, so
    the numbers always show; where that is less than MIN_BAR, the label is left out (what
    the meter counts is said around it) so that the bar still shows."""
    room = width - len(meter_text(label, used, budget, 0).plain)
    if room < MIN_BAR and label:
        label = ""
        room = width - len(meter_text(label, used, budget, 0).plain)
    return meter_text(label, used, budget, max(0, min(BAR, room)))


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
        return fitted_meter(self.label, self.used, self.budget, self.content_size.width)
