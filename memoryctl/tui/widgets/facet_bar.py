"""The vault list's filters besides the text: status, kind, namespace, tag and pinned.

One `Select` each, on a bar that `f` shows; a blank `Select` lets every memory through.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Select

from memoryctl.memory import KINDS, STATUSES
from memoryctl.tui.list_filter import ListFilter

PINNED_CHOICES = (("pinned", "yes"), ("not pinned", "no"))


class FacetBar(Horizontal):
    DEFAULT_CSS = """
    FacetBar {
        height: 1;
        display: none;
        padding: 0 1;
        background: $boost;
        &.-shown { display: block; }
        /* One line of compact Selects: at 80×24 the list keeps its rows. */
        Select { width: 1fr; margin: 0 1 0 0; }
        /* Wide enough for "needs_review" whole; the rest share what is left. */
        #facet-status { width: 17; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape",
            "close",
            "Close filters",
            id="memoryctl.facets.close",
            tooltip="Hide the filters (they stay applied) and go back to the list",
        ),
        Binding(
            "x",
            "clear_all",
            "Clear all",
            id="memoryctl.facets.clear",
            tooltip="Clear every filter: any status, kind, namespace, tag and pin",
        ),
    ]

    @dataclass
    class Changed(Message):
        """The person chose another status, kind, namespace, tag or pin filter."""

        bar: FacetBar
        facets: ListFilter

        @property
        def control(self) -> FacetBar:
            return self.bar

    @dataclass
    class Closed(Message):
        bar: FacetBar

    def compose(self) -> ComposeResult:
        yield Select(((s, s) for s in STATUSES), prompt="status", id="facet-status", compact=True)
        yield Select(((k, k) for k in KINDS), prompt="kind", id="facet-kind", compact=True)
        yield Select([], prompt="namespace", id="facet-namespace", compact=True)
        yield Select([], prompt="tag", id="facet-tag", compact=True)
        yield Select(PINNED_CHOICES, prompt="pinned?", id="facet-pinned", compact=True)

    @property
    def facets(self) -> ListFilter:
        def chosen(name: str) -> str | None:
            value = self.query_one(f"#facet-{name}", Select).value
            return value if isinstance(value, str) else None

        pinned = chosen("pinned")
        return ListFilter(
            status=chosen("status"),
            kind=chosen("kind"),
            namespace=chosen("namespace"),
            tag=chosen("tag"),
            pinned=None if pinned is None else pinned == "yes",
        )

    def set_choices(self, namespaces: Sequence[str], tags: Sequence[str]) -> None:
        """The namespaces and tags in the vault; a chosen one stays chosen."""
        for name, values in (("namespace", namespaces), ("tag", tags)):
            select = self.query_one(f"#facet-{name}", Select)
            kept = select.value
            with select.prevent(Select.Changed):
                select.set_options((v, v) for v in values)
                if kept in values:
                    select.value = kept

    @on(Select.Changed)
    def _chosen(self, event: Select.Changed) -> None:
        event.stop()
        self.screen.refresh_bindings()  # x clears them: the footer offers it once one is chosen
        self.post_message(self.Changed(self, self.facets))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "clear_all":
            return self.facets != ListFilter()
        return True

    def why_not(self, action: str, parameters: tuple[object, ...]) -> str | None:
        if action == "clear_all":
            return "No filter is chosen: there is nothing to clear."
        return None

    def action_close(self) -> None:
        self.post_message(self.Closed(self))

    def action_clear_all(self) -> None:
        self.clear_all()

    def clear_all(self) -> None:
        """Every filter back to "any", told once."""
        for select in self.query(Select):
            with select.prevent(Select.Changed):
                select.clear()
        self.screen.refresh_bindings()
        self.post_message(self.Changed(self, self.facets))
