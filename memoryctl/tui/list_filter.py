"""What the vault list shows: a text typed as a filter, narrowed by status, kind,
namespace, tag and pinned. Pure: the index does the reading (`Index.rowids_in_order`,
`Index.text_matches`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace

from memoryctl.storage.index_lists import ListFilters


@dataclass(frozen=True)
class ListFilter:
    text: str = ""
    status: str | None = None
    kind: str | None = None
    namespace: str | None = None
    tag: str | None = None
    pinned: bool | None = None

    def facets(self) -> dict[str, object]:
        """Everything but the text that is set, by name."""
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name != "text" and getattr(self, f.name) is not None
        }

    def facet_filters(self) -> ListFilters:
        """Everything but the text, as the index's filters (the text is matched apart)."""
        return ListFilters(
            status=self.status,
            kind=self.kind,
            pinned=self.pinned,
            namespace=self.namespace,
            tag=self.tag,
        )

    def with_text(self, text: str) -> ListFilter:
        return replace(self, text=text)

    def same_facets(self, other: ListFilter) -> bool:
        return self.facets() == other.facets()

    def describe(self) -> str:
        """The facets as a person reads them: "kind fact · tag release · pinned"."""
        parts = [f"{name} {value}" for name, value in self.facets().items() if name != "pinned"]
        if self.pinned is not None:
            parts.append("pinned" if self.pinned else "not pinned")
        return " · ".join(parts)


def narrowed(order: Sequence[int], matches: set[int] | None) -> Sequence[int]:
    """The rowids in `order` that a text matched, in that order (all when no text).

    One pass over the order in Python: cheaper than asking SQLite to sort every match of a
    one-letter filter by date (measured in bench/tui_bench.py)."""
    if matches is None:
        return order
    return list(filter(matches.__contains__, order))
