"""The vault list's filter: how its facets read, how a text narrows the order, and how
quickly a built index opens for the list."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from memoryctl.storage.index import ListFilters
from memoryctl.tui.list_filter import ListFilter, narrowed


def test_the_list_title_names_each_chosen_facet() -> None:
    wanted = ListFilter(text="ufo", kind="fact", tag="release", pinned=False)
    assert wanted.describe() == "kind fact · tag release · not pinned"
    assert wanted.facets() == {"kind": "fact", "tag": "release", "pinned": False}
    assert ListFilter(text="ufo").describe() == ""
    assert ListFilter(pinned=True).describe() == "pinned"


def test_the_index_is_asked_for_the_facets_and_not_the_text() -> None:
    wanted = ListFilter(text="ufo", kind="fact", tag="release", pinned=False)
    assert wanted.facet_filters() == ListFilters(kind="fact", tag="release", pinned=False)


def test_a_new_text_keeps_the_facets() -> None:
    wanted = ListFilter(status="retired").with_text("wifi")
    assert wanted == ListFilter(text="wifi", status="retired")
    assert wanted.same_facets(ListFilter(status="retired"))
    assert not wanted.same_facets(ListFilter())


def test_a_text_narrows_the_newest_first_order_without_reordering_it() -> None:
    order = [9, 4, 7, 1, 3]
    assert narrowed(order, {1, 9, 3}) == [9, 1, 3]
    assert narrowed(order, set()) == []
    assert narrowed(order, None) is order  # no words in the text: every memory


def test_opening_a_built_index_does_not_import_sqlmodel(tmp_path: Path) -> None:
    # sqlmodel and SQLAlchemy take about 0.3 s to import; the TUI's first paint waits for
    # the index to open, so a warm index must open without them.
    vault = tmp_path / "vault"
    (vault / "memories").mkdir(parents=True)
    (vault / "memories" / "a.md").write_text("---\nid: a1\ntitle: A\n---\n\nAn apple.\n")
    code = (
        "import sys; from pathlib import Path; from memoryctl.actions import init_vault; "
        "from memoryctl.storage.index import ListFilters; "
        "from memoryctl.storage.vault import Vault; root = Path(sys.argv[1]); "
        "init_vault(root) if sys.argv[2] == 'build' else None; v = Vault(root); "
        "print(v.index.count(ListFilters(text='apple')), 'sqlmodel' in sys.modules); v.close()"
    )
    env = {**os.environ, "MEMORYCTL_CACHE_DIR": str(tmp_path / "cache")}
    run = [sys.executable, "-c", code, str(vault)]
    built = subprocess.run([*run, "build"], capture_output=True, text=True, check=True, env=env)
    assert built.stdout.split() == ["1", "True"]
    warm = subprocess.run([*run, "open"], capture_output=True, text=True, check=True, env=env)
    assert warm.stdout.split() == ["1", "False"]
