"""Merging two versions of a memory file key by key, and sealing secret ones."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memoryctl.storage import seal
from memoryctl.storage.merge import BODY, merge_note

BASE = (
    b"---\n"
    b"id: a1b2c3\n"
    b"title: Milk\n"
    b"# kept as written\n"
    b"pinned: false\n"
    b"status: active\n"
    b"updated: 2026-01-01T00:00:00Z\n"
    b"tags: [food,  home]\n"
    b"---\n"
    b"\n"
    b"Buy oat milk.\n"
    b"Second line.\n"
    b"Third line.\n"
)


def test_pin_on_one_side_and_retire_on_the_other_both_hold():
    ours = BASE.replace(b"pinned: false", b"pinned: true")
    theirs = BASE.replace(
        b"status: active\n", b"status: retired\nretired:\n  at: 2026-01-02T00:00:00Z\n"
    )
    merged = merge_note(BASE, ours, theirs)
    assert merged.clean
    assert b"pinned: true\n" in merged.text
    assert b"status: retired\nretired:\n  at: 2026-01-02T00:00:00Z\n" in merged.text
    # Keys nobody changed keep their bytes, comment and odd spacing included.
    assert b"# kept as written\n" in merged.text
    assert b"tags: [food,  home]\n" in merged.text


def test_different_lines_of_the_body_merge_by_git():
    ours = BASE.replace(b"Buy oat milk.", b"Buy soy milk.")
    theirs = BASE.replace(b"Third line.", b"Third line, changed.")
    merged = merge_note(BASE, ours, theirs)
    assert merged.clean
    assert merged.text.endswith(b"Buy soy milk.\nSecond line.\nThird line, changed.\n")


def test_the_same_line_changed_twice_keeps_ours_and_offers_theirs():
    ours = BASE.replace(b"Buy oat milk.", b"Buy soy milk.")
    theirs = BASE.replace(b"Buy oat milk.", b"Buy rice milk.").replace(
        b"pinned: false", b"pinned: true"
    )
    merged = merge_note(BASE, ours, theirs)
    assert merged.conflicts == (BODY,)
    assert b"Buy soy milk." in merged.text and b"<<<<<<<" not in merged.text
    # The pin does not conflict, so both versions carry it.
    assert b"pinned: true" in merged.text
    assert merged.other is not None and b"Buy rice milk." in merged.other
    assert b"pinned: true" in merged.other


def test_the_same_key_set_to_two_values_is_a_conflict():
    ours = BASE.replace(b"title: Milk", b"title: Oat milk")
    theirs = BASE.replace(b"title: Milk", b"title: Rice milk")
    merged = merge_note(BASE, ours, theirs)
    assert merged.conflicts == ("title",)
    assert b"title: Oat milk" in merged.text
    assert merged.other is not None and b"title: Rice milk" in merged.other


def test_the_later_updated_moment_wins_without_a_conflict():
    ours = BASE.replace(b"2026-01-01T00:00:00Z", b"2026-01-03T00:00:00Z")
    theirs = BASE.replace(b"2026-01-01T00:00:00Z", b"2026-01-02T00:00:00Z").replace(
        b"pinned: false", b"pinned: true"
    )
    merged = merge_note(BASE, ours, theirs)
    assert merged.clean
    assert b"updated: 2026-01-03T00:00:00Z" in merged.text and b"pinned: true" in merged.text


def test_a_key_removed_on_one_side_and_another_added_on_the_other():
    ours = BASE.replace(b"tags: [food,  home]\n", b"")
    theirs = BASE.replace(b"---\n\n", b"expires: 2027-01-01\n---\n\n")
    merged = merge_note(BASE, ours, theirs)
    assert merged.clean
    assert b"tags:" not in merged.text
    assert b"expires: 2027-01-01\n---\n" in merged.text


def test_crlf_files_keep_their_line_endings():
    base = BASE.replace(b"\n", b"\r\n")
    ours = base.replace(b"pinned: false", b"pinned: true")
    theirs = base.replace(b"Third line.", b"Third line, changed.")
    merged = merge_note(base, ours, theirs)
    assert merged.clean
    assert b"\n" not in merged.text.replace(b"\r\n", b"")


_lines = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", ""]), max_size=6)


@settings(max_examples=40, deadline=None)
@given(body=_lines, pinned=st.booleans(), title=st.sampled_from(["Milk", "Tea: green", "x"]))
def test_a_change_on_one_side_only_is_taken_byte_for_byte(body, pinned, title):
    ours = BASE
    theirs = (
        BASE.replace(b"title: Milk", f"title: {title!r}".encode())
        .replace(b"pinned: false", b"pinned: " + (b"true" if pinned else b"false"))
        .replace(b"Second line.\n", "".join(f"{line}\n" for line in body).encode())
    )
    assert merge_note(BASE, ours, theirs).text == theirs
    assert merge_note(BASE, theirs, ours).text == theirs
    assert merge_note(BASE, theirs, theirs).text == theirs


KEY = os.urandom(seal.KEY_BYTES)
SECRET = BASE.replace(b"status: active", b"status: active\nvisibility: secret")


def test_sealing_is_deterministic_so_git_sees_no_phantom_change():
    assert seal.is_secret(SECRET) and not seal.is_secret(BASE)
    sealed = seal.seal(SECRET, KEY)
    assert sealed == seal.seal(SECRET, KEY)
    assert b"Milk" not in sealed and b"oat" not in sealed
    assert seal.unseal(sealed, KEY) == SECRET


def test_a_wrong_key_is_named_and_nothing_is_decrypted():
    sealed = seal.seal(SECRET, KEY)
    with pytest.raises(seal.WrongKey) as caught:
        seal.unseal(sealed, os.urandom(seal.KEY_BYTES))
    assert caught.value.sealed_with == seal.key_id(KEY)


def test_a_corrupt_ciphertext_is_reported_never_decrypted_to_garbage():
    sealed = bytearray(seal.seal(SECRET, KEY))
    sealed[-10] = ord("A") if sealed[-10] != ord("A") else ord("B")
    with pytest.raises(seal.Corrupt):
        seal.unseal(bytes(sealed), KEY)
    with pytest.raises(seal.Corrupt):
        seal.unseal(seal.seal(SECRET, KEY)[:-30], KEY)
