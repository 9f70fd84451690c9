"""Typed facts meet however their subject and predicate are cased: `User Lives_In` is
the same fact as `user lives_in`, and `Strauß` the same subject as `STRAUSS`, as the
rules say. The live checks, `check` and the bundle's `newer` lines give one answer.

Built on a copy of `sample_vault`, where `user lives_in: Porto` replaces `Lisbon` and
`user dislikes: mangoes` excludes `user likes: mangoes`.
"""

from __future__ import annotations

from pathlib import Path

from review_helpers import write_note

LISBON, PORTO = "hafbhwmj2s", "aghaak5xqn"
DISLIKES_MANGOES = "wbhh9dh72s"
BRAGA, MANGOES_AGAIN = "brag4c1ty0", "mang0es4ga"


def v(root: Path) -> tuple[str, str]:
    return ("--vault", str(root))


def pending(cli, root: Path) -> dict[str, dict]:
    """The pending proposals, by their first target."""
    result = cli(*v(root), "review", "--json")
    assert result.code == 0, result.err
    return {p["targets"][0]["id"]: p for p in result.json()["proposals"]}


def test_a_fact_written_with_other_case_is_judged_against_the_same_facts(sample_dir, cli):
    pending(cli, sample_dir)  # the first command checks the whole vault
    write_note(
        sample_dir,
        "memories/personal/home/lives-in-braga.md",
        BRAGA,
        "Lives in Braga",
        "I moved on to Braga.",
        created="2026-11-01T09:00:00Z",
        subject="User",
        predicate="Lives_In",
        value="Braga",
    )
    write_note(
        sample_dir,
        "memories/personal/food/likes-mangoes-again.md",
        MANGOES_AGAIN,
        "Likes mangoes again",
        "Mangoes are fine again.",
        created="2026-11-02T09:00:00Z",
        subject="USER",
        predicate="Likes",
        value="Mangoes",
    )
    live = pending(cli, sample_dir)  # the live checks, on what changed
    assert live[PORTO]["origin"] == {"kind": "rule", "ref": BRAGA}
    assert live[DISLIKES_MANGOES]["origin"] == {"kind": "rule", "ref": MANGOES_AGAIN}

    # `check` over the whole vault finds exactly what the live checks filed.
    checked = cli(*v(sample_dir), "check", "--json")
    assert checked.code == 0, checked.err
    assert checked.json()["proposed"] == []

    # And the bundle names the newer fact beneath the older one.
    shown = cli(*v(sample_dir), "preview", "--message", "what city do I live in now")
    assert shown.code == 0, shown.err
    porto = shown.out.index("I moved to Porto")
    assert shown.out[porto:].splitlines()[1] == (
        "    newer (2026-11-01, replaces this): (recalled above) I moved on to Braga."
    )


def test_subjects_meet_after_unicode_case_folding(vault_dir, cli):
    write_note(
        vault_dir,
        "memories/strauss-berlin.md",
        "str4ussber",
        "Strauß works at Berlin Labs",
        created="2026-01-01T00:00:00Z",
        subject="Strauß",
        predicate="works_at",
        value="Berlin Labs",
    )
    pending(cli, vault_dir)
    write_note(
        vault_dir,
        "memories/strauss-hamburg.md",
        "str4usshmb",
        "Strauss works at Hamburg Labs",
        created="2026-02-01T00:00:00Z",
        subject="STRAUSS",
        predicate="WORKS_AT",
        value="Hamburg Labs",
    )
    found = pending(cli, vault_dir)
    assert found["str4ussber"]["origin"] == {"kind": "rule", "ref": "str4usshmb"}
