"""The bundle marks what is contested: beneath an older memory, the newer one that
replaces, excludes or retires it, or the proposal about it that waits for the person,
dated. And no text is carried twice.

Built on a copy of `sample_vault`, where Porto replaces Lisbon (`lives_in` holds one
value), Helix names the Neovim preference in `retires`, and `dislikes: mangoes` excludes
`likes: mangoes`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_bundle import add_profiles, build, edit_frontmatter, ids, path_of, reasons

import memoryctl.tokens
from memoryctl.bundle import Bundle
from memoryctl.bundle_formats import as_json, render
from memoryctl.contested import by_facts, by_retires
from memoryctl.context import context_bundle
from memoryctl.memory import Memory
from memoryctl.moments import moment
from memoryctl.review import decline, undo
from memoryctl.rules import STARTER_REGISTRY
from memoryctl.storage.vault import Vault

LISBON, PORTO = "hafbhwmj2s", "aghaak5xqn"
NEOVIM, HELIX = "vvtwsb0afj", "r2qxe7ged0"
LIKES_MANGOES, DISLIKES_MANGOES = "zk26gcx3q4", "wbhh9dh72s"
PORTO_TEXT = "I moved to Porto on 2026-10-26 and live in Bonfim now."
HELIX_TEXT = "I stopped using Neovim; I use Helix now."
NOW = moment("2026-11-29T12:00:00Z")
CITY = "what city do I live in now"
EDITOR = "which editor setup do I use"


@pytest.fixture(autouse=True)
def estimated_tokens(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("MEMORYCTL_TOKENIZER", "estimate")
    memoryctl.tokens.counter.cache_clear()
    yield
    memoryctl.tokens.counter.cache_clear()


def entry(bundle: Bundle, memory_id: str):
    [found] = [e for e in (*bundle.pinned, *bundle.recalled) if e.memory.id == memory_id]
    return found


def lines_beneath(bundle: Bundle, memory_id: str) -> list[str]:
    return entry(bundle, memory_id).block.splitlines()[1:]


def write_proposal(root: Path, name: str, **frontmatter: str) -> None:
    folder = root / "proposals"
    folder.mkdir(exist_ok=True)
    lines = [f"{key}: {value}" for key, value in frontmatter.items()]
    (folder / f"{name}.md").write_text("---\n" + "\n".join(lines) + "\n---\n", encoding="utf-8")


# --- the three ways a newer memory contests an older one --------------------------------------


def test_the_older_city_is_shown_with_the_newer_one_beneath_it_dated(sample_dir):
    bundle = build(sample_dir, message=CITY)
    [line] = lines_beneath(bundle, LISBON)
    assert line.startswith(f"    newer (2026-10-28, replaces this): {PORTO_TEXT}")
    assert bundle.text.count(PORTO_TEXT) == 1  # carried once, beneath Lisbon
    assert reasons(bundle)[PORTO] == f"shown beneath {LISBON} as the newer memory"


def test_a_memory_named_in_retires_is_shown_with_the_one_that_retires_it(sample_dir):
    bundle = build(sample_dir, message=EDITOR)
    [line] = lines_beneath(bundle, NEOVIM)
    assert line.startswith(f"    newer (2026-10-14, retires this): {HELIX_TEXT}")
    assert bundle.text.count(HELIX_TEXT) == 1
    assert HELIX not in ids(bundle.recalled)


def test_an_excluded_fact_points_at_the_newer_one_already_shown_above(sample_dir):
    bundle = build(sample_dir, message="any snack ideas with mangoes")
    order = ids(bundle.recalled)
    assert order.index(DISLIKES_MANGOES) < order.index(LIKES_MANGOES)
    [line] = lines_beneath(bundle, LIKES_MANGOES)
    assert line == (
        "    newer (2026-10-20, excludes this): (recalled above) I've gone off mangoes: "
        "after eating them almost every day this summer …"
    )
    assert bundle.conflicts  # the conflict line stays as it was


def test_a_pin_is_contested_too(sample_dir):
    edit_frontmatter(path_of(sample_dir, LISBON), pinned="true")
    bundle = build(sample_dir)
    [line] = lines_beneath(bundle, LISBON)
    assert line.startswith(f"    newer (2026-10-28, replaces this): {PORTO_TEXT}")


def test_a_newer_memory_that_is_retired_contests_nothing(sample_dir):
    edit_frontmatter(path_of(sample_dir, HELIX), status="retired")
    edit_frontmatter(path_of(sample_dir, PORTO), status="needs_review")
    assert lines_beneath(build(sample_dir, message=EDITOR), NEOVIM) == []
    assert lines_beneath(build(sample_dir, message=CITY), LISBON) == []


def test_a_newer_fact_with_the_same_value_replaces_nothing(sample_dir):
    edit_frontmatter(path_of(sample_dir, PORTO), value="Lisbon")
    assert lines_beneath(build(sample_dir, message="Lisbon Campo de Ourique"), LISBON) == []


# --- pending proposals -------------------------------------------------------------------------


def test_a_pending_proposal_about_a_memory_is_shown_beneath_it(sample_dir):
    coffee = "chvkhzhaq0"
    write_proposal(
        sample_dir,
        "decaf",
        action="retire",
        targets=f"[{coffee}]",
        reason="the user said they stopped drinking coffee",
        origin="{kind: agent, ref: session-42}",
        created="2026-11-20T10:00:00Z",
    )
    bundle = build(sample_dir, message="how do I take my coffee")
    assert lines_beneath(bundle, coffee) == [
        "    pending (2026-11-20): a proposal to retire this awaits the person's decision"
    ]
    [newer] = as_json(bundle)["recalled"][ids(bundle.recalled).index(coffee)]["newer"]
    assert newer["proposal"] == {
        "id": "decaf",
        "action": "retire",
        "created": "2026-11-20T10:00:00Z",
    }
    assert newer["id"] is None and newer["why"] == "proposed"


def test_a_declined_proposal_contests_nothing(sample_dir):
    coffee = "chvkhzhaq0"
    write_proposal(
        sample_dir,
        "decaf",
        action="retire",
        targets=f"[{coffee}]",
        origin="{kind: agent, ref: session-42}",
        state="declined",
    )
    assert lines_beneath(build(sample_dir, message="how do I take my coffee"), coffee) == []


def test_an_open_vault_shows_each_change_to_the_queue_in_its_next_bundle(sample_dir):
    """A process that builds a bundle for every message (the MCP server) lists the queue
    again only when it changed; each change still shows in the very next bundle."""
    coffee, message = "chvkhzhaq0", "how do I take my coffee"
    pending = "    pending (2026-11-20): a proposal to retire this awaits the person's decision"
    decaf = {
        "action": "retire",
        "targets": f"[{coffee}]",
        "origin": "{kind: agent, ref: session-42}",
        "created": "2026-11-20T10:00:00Z",
    }
    vault = Vault(sample_dir)
    try:

        def beneath() -> list[str]:
            return lines_beneath(context_bundle(vault, message=message), coffee)

        assert beneath() == []
        write_proposal(sample_dir, "decaf", **decaf)
        assert beneath() == [pending]
        decline(vault, "decaf", now=NOW)
        assert beneath() == []
        undo(vault, "decaf", now=NOW)
        assert beneath() == [pending]
        write_proposal(sample_dir, "decaf", **decaf, state="declined")  # by hand, in place
        assert beneath() == []
        (sample_dir / "proposals" / "decaf.md").unlink()
        write_proposal(sample_dir, "decaf-again", **decaf)
        assert beneath() == [pending]
        (sample_dir / "proposals" / "decaf-again.md").unlink()
        assert beneath() == []
    finally:
        vault.close()


def test_a_pending_proposal_names_the_newer_memory_behind_it(sample_dir):
    write_proposal(
        sample_dir,
        "by-rule",
        action="replace",
        targets=f"[{NEOVIM}]",
        origin=f"{{kind: explicit, ref: {PORTO}}}",
        created="2026-11-20T10:00:00Z",
    )
    # A replace proposal needs its new text as the body.
    path = sample_dir / "proposals" / "by-rule.md"
    path.write_text(path.read_text(encoding="utf-8") + "\nHelix.\n", encoding="utf-8")
    edit_frontmatter(path_of(sample_dir, HELIX), retires="[]")
    [line] = lines_beneath(build(sample_dir, message=EDITOR), NEOVIM)
    assert line.startswith(f"    newer (2026-10-28, proposed to replace this text): {PORTO_TEXT}")


# --- the profile's fences ---------------------------------------------------------------------


def test_the_newer_memory_never_leaks_across_namespaces(sample_dir):
    """Helix moves to the personal namespace and Porto to work: a work profile sees the
    Neovim preference with no line beneath it, and a personal profile sees Lisbon with
    none, in the text and in every field of the JSON; nor does a pending proposal whose
    newer memory the profile may not see."""
    edit_frontmatter(path_of(sample_dir, HELIX), namespace="personal")
    edit_frontmatter(path_of(sample_dir, PORTO), namespace="work")
    write_proposal(
        sample_dir,
        "by-rule",
        action="retire",
        targets=f"[{LISBON}]",
        origin=f"{{kind: rule, ref: {PORTO}}}",
    )
    add_profiles(
        sample_dir,
        '[profiles.coder]\nnamespaces = ["work"]\n\n[profiles.home]\nnamespaces = ["personal"]\n',
    )
    for profile, older, newer, text in (
        ("coder", NEOVIM, HELIX, HELIX_TEXT),
        ("home", LISBON, PORTO, PORTO_TEXT),
    ):
        bundle = build(sample_dir, profile=profile, message=f"{EDITOR} {CITY}")
        assert lines_beneath(bundle, older) == [], profile
        for fmt in ("markdown", "cursor-rules"):
            rendered = render(bundle, fmt)
            assert newer not in rendered and text not in rendered, (profile, fmt)
        # The person's report (`excluded`) may list it as outside the profile, as for any
        # memory the message matched; what the agent reads never names it.
        data = as_json(bundle)
        read = json.dumps([data[k] for k in ("pinned", "recalled", "conflicts", "text")])
        assert newer not in read and text not in read, profile
        # The person's own profile still sees both.
        everyone = build(sample_dir, message=f"{EDITOR} {CITY}")
        assert lines_beneath(everyone, older), profile


def test_a_newer_memory_derived_from_one_outside_the_profile_is_not_named(sample_dir):
    edit_frontmatter(path_of(sample_dir, HELIX), derived_from="[zj1d2pyve2]")  # a personal pin
    add_profiles(sample_dir, '[profiles.coder]\nnamespaces = ["work"]\n')
    bundle = build(sample_dir, profile="coder", message=EDITOR)
    assert lines_beneath(bundle, NEOVIM) == []
    assert HELIX_TEXT not in bundle.text


# --- no text twice ------------------------------------------------------------------------------


def test_a_recalled_correction_on_a_now_line_is_carried_once(sample_dir):
    head = "q0csfnqc07"
    bundle = build(sample_dir, message="ufo-ai/ufo-core metalcraftai/ufo core repository")
    head_text = "The UFO core repository is ufo-ai/ufo."
    assert bundle.text.count(head_text) >= 1
    shown_above = [e for e in bundle.recalled if any(c.id == head for c in e.now)]
    assert shown_above
    if head in reasons(bundle):
        assert reasons(bundle)[head].startswith(f"shown beneath {shown_above[0].memory.id}")
        assert head not in ids(bundle.recalled)
    else:  # recalled first: the now: lines beneath later entries point at it
        first = ids(bundle.recalled).index(head)
        for e in bundle.recalled[first + 1 :]:
            for line in e.beneath:
                if line.memory is not None and line.memory.id == head:
                    assert line.line.startswith("now: (recalled above) The UFO core")


def test_a_now_line_whose_correction_is_pinned_points_at_the_pin(sample_dir):
    head = "q0csfnqc07"
    edit_frontmatter(path_of(sample_dir, head), pinned="true", pin_order="0")
    bundle = build(sample_dir, message="Where do I file bugs for the core?")
    assert head in ids(bundle.pinned)
    pointed = [b for e in bundle.recalled for b in e.beneath if b.kind == "now"]
    assert pointed
    for line in pointed:
        assert line.above == "pinned"
        assert line.line == (
            "now: (pinned) The UFO core repository is ufo-ai/ufo. It was called "
            "ufo-ai/ufo-core for a …"
        )
    [pin] = [e for e in bundle.pinned if e.memory.id == head]
    assert pin.block == f"- {pin.memory.text}"  # the pin stays whole
    data = as_json(bundle)
    assert data["recalled"][0]["now"][0]["above"] == "pinned"


# --- the rules, as pure functions ----------------------------------------------------------------


def fact(mid: str, created: str, predicate: str, value: str, **extra) -> Memory:
    return Memory(
        id=mid,
        path=f"{mid}.md",
        title=mid,
        created=created,
        subject="user",
        predicate=predicate,
        value=value,
        **extra,
    )


def test_only_the_newest_single_valued_fact_contests_and_only_with_another_value():
    lisbon = fact("a", "2026-01-01", "lives_in", "Lisbon")
    porto = fact("b", "2026-02-01", "lives_in", "Porto")
    back = fact("c", "2026-03-01", "lives_in", " lisbon ")
    found = by_facts([lisbon, porto], [lisbon, porto, back], STARTER_REGISTRY)
    assert [(c.target, c.newer.id if c.newer else None) for c in found] == [("b", "c")]


def test_a_multi_valued_fact_is_not_replaced_by_another_value():
    mangoes = fact("a", "2026-01-01", "likes", "mangoes")
    papayas = fact("b", "2026-02-01", "likes", "papayas")
    assert by_facts([mangoes], [mangoes, papayas], STARTER_REGISTRY) == []


def test_a_memory_that_names_itself_in_retires_contests_nothing():
    selfish = Memory(id="a", path="a.md", title="a", retires=("a", "b"))
    other = Memory(id="b", path="b.md", title="b")
    assert [(c.target, c.why) for c in by_retires([selfish, other], [selfish])] == [
        ("b", "retires")
    ]


# --- an agent's recall over MCP ---------------------------------------------------------------


def test_an_agent_recalling_the_older_city_is_told_the_newer_one_within_its_profile(sample_dir):
    from memoryctl.mcp.view import Caller, recall_for
    from memoryctl.storage.vault import Vault

    vault = Vault(sample_dir)
    try:
        shelf = recall_for(vault, Caller("personal-agent", vault.config.profile(None)), "Lisbon")
        [lisbon] = [s for s in shelf.shown if s.memory.id == LISBON]
        assert f"    newer (2026-10-28, replaces this): {PORTO_TEXT}" in lisbon.block
        assert lisbon.as_json()["newer"][0]["id"] == PORTO
        neovim = recall_for(vault, Caller("coding-agent", vault.config.profile("work")), "Neovim")
        [shown] = [s for s in neovim.shown if s.memory.id == NEOVIM]
        assert HELIX_TEXT in shown.block  # same namespace: named
    finally:
        vault.close()
    edit_frontmatter(path_of(sample_dir, HELIX), namespace="personal")
    vault = Vault(sample_dir)
    try:
        neovim = recall_for(vault, Caller("coding-agent", vault.config.profile("work")), "Neovim")
        [shown] = [s for s in neovim.shown if s.memory.id == NEOVIM]
        assert HELIX_TEXT not in shown.text and HELIX not in json.dumps(shown.as_json())
    finally:
        vault.close()
