"""Search finds a word inside Chinese, Japanese and Korean text, which is written without
spaces between its words, through every face that searches; Latin text is indexed and
searched as it always was."""

from __future__ import annotations

import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st
from search_support import add, assert_found_inside, searched

from memoryctl import character_pairs, search_query
from memoryctl.context import context_bundle
from memoryctl.matching import fold
from memoryctl.storage.index_format import FTS_DDL
from memoryctl.storage.parsing import fts_body
from memoryctl.storage.vault import Vault

COFFEE = "我每天早上喝咖啡，不加糖。"
KOHI = "毎朝コーヒーを飲む。ミルクは入れない。"
KEOPI = "나는 매일 아침 커피를 두 잔 마신다."
BERLIN = "I moved to Berlin in May. 我在Berlin的一家公司工作。"


def test_search_finds_a_word_inside_a_chinese_japanese_or_korean_sentence(vault_dir, cli):
    coffee, kohi, keopi = (add(cli, vault_dir, text) for text in (COFFEE, KOHI, KEOPI))
    assert searched(cli, vault_dir, "咖啡") == [coffee]
    assert searched(cli, vault_dir, "早上") == [coffee]
    assert searched(cli, vault_dir, "コーヒー") == [kohi]
    assert searched(cli, vault_dir, "커피") == [keopi]
    # One character is found too, wherever it stands in the run, and the whole run.
    assert searched(cli, vault_dir, "糖") == [coffee]
    assert searched(cli, vault_dir, "啡") == [coffee]
    assert searched(cli, vault_dir, "我每天早上喝咖啡") == [coffee]


def test_search_of_a_string_the_text_does_not_hold_finds_nothing(vault_dir, cli):
    add(cli, vault_dir, COFFEE)
    # Each pair is in the memory, but not the string: "喝咖" then "啡不" across the end.
    assert searched(cli, vault_dir, "早喝") == []
    assert searched(cli, vault_dir, "咖啡不") == []  # a comma stands between them
    assert searched(cli, vault_dir, "红茶") == []


def test_a_latin_word_written_against_chinese_is_found_and_so_is_the_chinese(vault_dir, cli):
    berlin = add(cli, vault_dir, BERLIN)
    assert searched(cli, vault_dir, "berlin") == [berlin]
    assert searched(cli, vault_dir, "公司") == [berlin]
    assert searched(cli, vault_dir, "berlin 工作") == [berlin]
    # The same words in a title are found as in the body.
    titled = add(cli, vault_dir, "TypeScriptでフロントエンドを書く")
    assert searched(cli, vault_dir, "typescript") == [titled]
    assert searched(cli, vault_dir, "フロント") == [titled]


def test_a_word_taken_out_of_an_edited_memory_is_no_longer_found(vault_dir, cli):
    coffee = add(cli, vault_dir, COFFEE)
    path = vault_dir / cli("--vault", str(vault_dir), "show", coffee, "--json").json()["path"]
    path.write_text(path.read_text(encoding="utf-8").replace("咖啡", "红茶"), encoding="utf-8")
    assert searched(cli, vault_dir, "咖啡") == []
    assert searched(cli, vault_dir, "红茶") == [coffee]


def test_a_message_in_chinese_recalls_the_memory_it_shares_a_word_with(vault_dir, cli):
    coffee, kohi, keopi = (add(cli, vault_dir, text) for text in (COFFEE, KOHI, KEOPI))
    add(cli, vault_dir, "公司年会定在十二月二十日。")

    def recalled(message: str) -> list[str]:
        bundle = context_bundle(Vault(vault_dir), message=message)
        return [entry.memory.id for entry in bundle.recalled]

    assert recalled("我早上一般喝什么？")[0] == coffee
    assert recalled("コーヒーにミルクは入れる？")[0] == kohi
    assert recalled("아침에 커피를 몇 잔 마셔?")[0] == keopi


def test_a_chinese_question_sent_to_search_is_asked_as_a_message(vault_dir, cli):
    coffee = add(cli, vault_dir, COFFEE)
    # A run of six characters or more is a sentence: any of its pairs may match, as
    # any word of a long English query may.
    assert searched(cli, vault_dir, "我早上一般喝什么") == [coffee]
    plan = search_query.plan("每天早上", lambda terms: dict.fromkeys(terms, 1), 10)
    assert plan is not None and plan.match == '"每天 天早 早上"'


def test_latin_text_is_given_to_the_index_exactly_as_before():
    for text in ("The staging database lives in Frankfurt", "Die Straße vor dem Café", "μένει"):
        assert character_pairs.indexed(fold(text)) == fold(text)
        assert fts_body(text) == fold(text)
    plan = search_query.plan("staging databases", lambda terms: dict.fromkeys(terms, 1), 10)
    assert plan is not None and plan.match == '"database"* AND "stag"*'
    assert search_query.prefix_query("staging datab") == '"staging" AND "datab"*'


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_text_without_chinese_japanese_or_korean_is_indexed_unchanged(text: str) -> None:
    """Nor Thai, Lao, Khmer or Burmese: text without any script written without spaces
    reaches the index as it is, and the index splits it into the terms it always did."""
    kept = "".join(
        c for c in text if not character_pairs.is_run(c) and not character_pairs.is_width_form(c)
    )
    assert character_pairs.indexed(kept) == kept
    assert character_pairs.runs_apart(kept) == kept
    assert _terms(FTS_DDL[0], kept) == _terms(_PLAIN_FTS, kept)


# The full-text table as it was before Thai, Lao, Khmer and Burmese were indexed.
_PLAIN_FTS = FTS_DDL[0].split("tokenize=")[0] + "tokenize='unicode61 remove_diacritics 2')"


def _terms(ddl: str, text: str) -> list[tuple[str, str, int]]:
    db = sqlite3.connect(":memory:")
    db.execute(ddl)
    db.execute("CREATE VIRTUAL TABLE terms USING fts5vocab(note_fts, 'instance')")
    db.execute("INSERT INTO note_fts(rowid, title, body) VALUES (1, '', ?)", (text,))
    return db.execute("SELECT term, col, offset FROM terms").fetchall()


def test_full_and_half_width_forms_find_each_other(vault_dir, cli):
    """Japanese text mixes widths: half-width katakana (ｶﾀｶﾅ, from older systems and
    forms) is the katakana カタカナ, and full-width Latin letters and digits (ＡＢＣ１２３,
    typed with a Japanese input method) are ABC123. Either form finds the other."""
    half = add(cli, vault_dir, "ｺｰﾋｰは毎朝ｶﾞﾗｽのｶｯﾌﾟで飲む。")
    wide = add(cli, vault_dir, "会議室はＢ２０１、パスワードはＡＢＣ１２３です。")
    assert searched(cli, vault_dir, "コーヒー") == [half]
    assert searched(cli, vault_dir, "ガラス") == [half]
    assert searched(cli, vault_dir, "ｺｰﾋｰ") == [half]
    assert searched(cli, vault_dir, "abc123") == [wide]
    assert searched(cli, vault_dir, "Ｂ２０１") == [wide]
    assert searched(cli, vault_dir, "b201") == [wide]
    assert character_pairs.indexed("ＡＢＣ１２３") == "ABC123"


# --- any string inside a run is found --------------------------------------------------

_RUN_CHARACTERS = st.sampled_from(
    list("我每天早上喝咖啡不加糖的一是人有在他这中大来")
    + list("のをにはがでとしたいるコーヒーミルクアレギ")
    + list("나는매일아침커피를두잔마신다")
    + ["々", "ー", "𠀀"]
)
_RUN = st.lists(_RUN_CHARACTERS, min_size=1, max_size=16).map("".join)
_AROUND = st.sampled_from(["", " ", "Berlin", "2025年", "、", "。 ok "])


@settings(max_examples=200, deadline=None)
@given(_AROUND, _RUN, _AROUND, st.data())
def test_every_string_inside_a_run_is_found_by_search_and_as_typed(
    before: str, run: str, after: str, data: st.DataObject
) -> None:
    start = data.draw(st.integers(0, len(run) - 1))
    end = data.draw(st.integers(start + 1, len(run)))
    assert_found_inside(before + run + after, run[start:end])
