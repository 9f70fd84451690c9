"""What a message to an agent recalls: right in small vaults, exact for corrections,
and answered at once whatever the message looks like."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memoryctl import relations, search_query
from memoryctl.context import context_bundle
from memoryctl.storage.parsing import fts_body
from memoryctl.storage.vault import Vault


def write_notes(vault_dir: Path, texts: list[str], **extra: str) -> list[str]:
    """One memory per text, dated a day apart, oldest first; returns their ids."""
    ids = []
    for number, text in enumerate(texts):
        mid = f"m{number:09d}"
        head = "".join(f"{key}: {value}\n" for key, value in extra.items())
        (vault_dir / f"{mid}.md").write_text(
            f"---\nid: {mid}\ntitle: {text[:60]}\ncreated: 2026-03-{number + 1:02d}\n"
            f"{head}---\n{text}\n",
            encoding="utf-8",
        )
        ids.append(mid)
    return ids


def write_correction(vault_dir: Path, mid: str, deprecates: str, text: str) -> None:
    """A correction of the one string, newer than every memory `write_notes` writes."""
    (vault_dir / f"{mid}.md").write_text(
        f"---\nid: {mid}\ntitle: {text}\ncreated: 2026-04-01\n"
        f"deprecates: [{deprecates}]\n---\n{text}\n",
        encoding="utf-8",
    )


def recalled(vault: Vault, message: str) -> list[str]:
    return [entry.memory.id for entry in context_bundle(vault, message=message).recalled]


MUSEUM = [
    "The museum card costs 45 euros a year and opens all twelve city museums.",
    "Lost your museum card? A replacement card can be ordered at any ticket desk.",
    "A replacement card costs a fee of 7.50 euros, paid at the desk.",
    "Children under thirteen get a museum card for free.",
    "The museum app shows your card as a QR code at the entrance.",
    "If the card is damaged, the replacement fee is waived once.",
    "Card holders may bring one guest at half price on Sundays.",
]


def test_a_small_vault_recalls_every_memory_about_the_replacement_card_fee(vault_dir):
    ids = write_notes(vault_dir, MUSEUM)
    found = recalled(Vault(vault_dir), "what is the replacement card fee")
    assert {ids[1], ids[2], ids[5]} <= set(found)
    # Those that name the replacement card and its fee come first.
    assert set(found[:3]) == {ids[1], ids[2], ids[5]}


TEN_FACTS = [
    ("Oskar Lindqvist repairs antique clocks in a workshop in Malmö.", "Who repairs old clocks?"),
    ("Mirela Dragan teaches the violin at the conservatory.", "What instrument does Mirela teach?"),
    ("Oskar and Mirela met at a flea market in Vienna.", "Where did Oskar and Mirela meet?"),
    ("Tamsin Okoye grows heirloom tomatoes on her roof.", "What does Tamsin grow?"),
    ("Tamsin's brother Kwame is a lighthouse keeper.", "What is Kwame's job?"),
    ("Mirela's cat is called Paprika.", "What is the name of Mirela's cat?"),
    ("Kwame once rowed across the North Sea for charity.", "Which sea did Kwame row across?"),
    ("Oskar is allergic to walnuts.", "Is Oskar allergic to anything?"),
    ("Tamsin and Oskar run a podcast about forgotten inventions.", "Who hosts the podcast?"),
    ("Mirela was born in Cluj in 1988.", "Where was Mirela born?"),
]


def test_a_vault_of_ten_facts_recalls_the_fact_each_question_is_about(vault_dir):
    ids = write_notes(vault_dir, [fact for fact, _ in TEN_FACTS])
    vault = Vault(vault_dir)
    for mid, (fact, question) in zip(ids, TEN_FACTS, strict=True):
        assert mid in recalled(vault, question), (question, fact)


def test_a_correction_reaches_only_the_exact_string_while_search_looks_past_endings(vault_dir):
    ids = write_notes(
        vault_dir,
        [
            "Log in to the old portal with your staff number.",
            "The old portals of every team are listed on the wiki.",
            "Portal access is reviewed in March.",
        ],
    )
    write_correction(
        vault_dir, "fixportal1", "old portal", "Use the new staff site instead of the old portal."
    )
    vault = Vault(vault_dir)
    assert [m.id for m, _ in vault.index.reach_of("fixportal1")] == [ids[0]]
    searched = {m.id for m in vault.index.search("old portals")}
    assert {ids[0], ids[1]} <= searched
    bundle = context_bundle(vault, message="how do I log in to the old portal")
    shown = {e.memory.id: [c.id for c in e.now] for e in bundle.recalled}
    assert shown[ids[0]] == ["fixportal1"]
    assert shown.get(ids[1], []) == []


def test_a_term_is_common_by_the_length_of_its_posting_list_not_its_share():
    mango, chutney, recipe = (search_query.search_form(w) for w in ("mango", "chutney", "recipe"))
    df = {mango: 4500, chutney: 12, recipe: 300}

    def frequency(terms):
        return {t: df.get(t, 0) for t in terms}

    message = "any mango chutney recipe"
    large = search_query.plan(message, frequency, 2_000_000, message=True)
    assert large is not None and large.terms == (chutney, recipe)
    # The same counts in a vault small enough to rank every match: nothing is dropped.
    small = search_query.plan(message, frequency, 3000, message=True)
    assert small is not None and set(small.terms) == {mango, chutney, recipe}
    assert not small.by_recency


def test_a_vault_smaller_than_the_ranking_limit_ranks_every_word_of_a_message():
    # Every word is in a fifth or more of a 20-memory vault: once "common", now ranked.
    def frequency(terms):
        return {t: 4 + len(t) % 5 for t in terms}

    found = search_query.plan("what is the replacement card fee", frequency, 20, message=True)
    assert found is not None and not found.by_recency
    assert set(found.terms) == {search_query.search_form(w) for w in ("replacement", "card", "fee")}


# --- bad input -----------------------------------------------------------------------------


def test_a_message_of_only_stop_words_recalls_nothing_and_builds_the_bundle(vault_dir):
    write_notes(vault_dir, MUSEUM)
    vault = Vault(vault_dir)
    bundle = context_bundle(vault, message="what is it that you would have been doing?")
    assert bundle.recalled == () and bundle.text.startswith("# Memory")


def test_a_message_of_100000_characters_is_planned_from_its_first_and_last_words(vault_dir):
    ids = write_notes(vault_dir, [*MUSEUM, "The quokka enclosure reopens in spring."])
    vault = Vault(vault_dir)
    words = " ".join(f"filler{n}" for n in range(12_000))
    message = (words + " and finally: when does the quokka enclosure reopen?")[-100_000:]
    assert len(message) == 100_000
    assert ids[-1] in recalled(vault, message)
    plan = search_query.plan(message, lambda ts: dict.fromkeys(ts, 1), 10, message=True)
    assert plan is not None and len(plan.terms) <= search_query.MAX_TERMS


def test_messages_in_greek_cyrillic_devanagari_and_japanese_find_their_memories(vault_dir):
    texts = [
        "Η Μαρία μένει στη Θεσσαλονίκη με τον σκύλο της.",
        "Мой брат любит йогурт с мёдом.",
        "मेरी बहन दिल्ली में रहती है।",
        "東京に住んでいます",
        "Die Straße vor dem Café ist gesperrt.",
    ]
    ids = write_notes(vault_dir, texts)
    vault = Vault(vault_dir)
    assert ids[0] in recalled(vault, "Πού μένει η Μαρία;")
    assert ids[1] in recalled(vault, "Что любит мой брат? йогурт?")
    assert ids[2] in recalled(vault, "मेरी बहन कहाँ रहती है?")
    assert ids[3] in recalled(vault, "東京に住んでいます")
    assert ids[3] in recalled(vault, "東京はどう？")
    assert ids[4] in recalled(vault, "welche strasse ist gesperrt")
    # A sentence of Chinese that shares no word with any memory recalls nothing.
    assert recalled(vault, "我的妹妹住在哪里") == []


def test_a_message_that_is_only_a_url_or_a_path_recalls_the_memory_naming_it(vault_dir):
    ids = write_notes(
        vault_dir,
        [
            "The setup guide is at https://docs.example.org/ufo/setup-guide.",
            "Registry code lives in ~/src/ufo_hosted/registry.py.",
            *MUSEUM,
        ],
    )
    vault = Vault(vault_dir)
    assert recalled(vault, "https://docs.example.org/ufo/setup-guide")[0] == ids[0]
    assert recalled(vault, "~/src/ufo_hosted/registry.py")[0] == ids[1]


# --- the query's terms are the index's terms ------------------------------------------------

_LETTERS = st.sampled_from(
    list("abcdefghijklmnopqrstuvwxyzéèêëçñøåæœßÆÉ")
    + list("αβγδεζηθικλμνξοπρστυφχψωάέήίόύώϊϋΐΰΆΈΉΊΌΎΏς")
    + list("абвгдеёжзийклмнопрстуфхцчшщъыьэюяЙЁ")
    + list("कखगघचछजझटठडढतथदधनपफबभमयरलवशसह")
    + ["\u093e", "\u093f", "\u0947", "\u094d"]
    + list("ăâđêôơưạảấầẩẫậ")
    + ["e\u0301", "a\u0308", "o\u0302", " ", " ", "-", "'", "."]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LETTERS, min_size=1, max_size=30).map("".join))
def test_query_terms_are_the_terms_the_index_keeps(text: str) -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='unicode61 remove_diacritics 2')")
    db.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, t, row)")
    db.execute("INSERT INTO t(x) VALUES (?)", (fts_body(text),))
    stored = {term for (term,) in db.execute("SELECT term FROM temp.v")}
    assert set(search_query.tokens(text)) == stored


def chat_turn(vault_dir: Path, mid: str, minute: int, text: str, chat: str) -> None:
    (vault_dir / f"{mid}.md").write_text(
        f"---\nid: {mid}\ntitle: {json.dumps(text)}\ncreated: 2026-03-02T18:{minute:02d}:00Z\n"
        f"source:\n  kind: user\n  ref: {chat}\n---\n{text}\n",
        encoding="utf-8",
    )


def chat(vault_dir: Path, *turns: tuple[str, str]) -> None:
    """Turns (text, chat) a minute apart, `turn000001` first, among the museum's notes."""
    for number, (text, ref) in enumerate(turns, 1):
        chat_turn(vault_dir, f"turn{number:06d}", number, text, ref)
    write_notes(vault_dir, MUSEUM)


def test_a_recalled_question_in_a_chat_brings_the_turn_that_answered_it(vault_dir):
    chat(
        vault_dir,
        ("Marek: We adopted a greyhound on Saturday.", "chat A"),
        ("Lena: No way! What is the dog called?", "chat A"),
        ("Marek: Biscuit. About four years old.", "chat A"),
        ("Lena: Biscuit is a great name.", "chat B"),
    )
    vault = Vault(vault_dir)
    found = recalled(vault, "what is the dog called that was adopted")
    assert found[0] == "turn000002" and "turn000001" in found
    # The answer, which names nothing the message asks, follows its question in the same
    # chat, and comes with it; a turn of another chat does not.
    assert "turn000003" in found[:3]
    assert "turn000004" not in found


def test_the_answer_a_few_turns_after_the_matching_turn_is_recalled_with_it(vault_dir):
    chat(
        vault_dir,
        ("Samira: We tried Casa Lume last night.", "chat A"),
        ("Lena: I walk past it every day. Worth it?", "chat A"),
        ("Samira: Absolutely.", "chat A"),
        ("Samira: Get the octopus rice, skip dessert.", "chat A"),
        ("Samira: Anyway, how is work?", "chat A"),
    )
    found = recalled(Vault(vault_dir), "what should I order at Casa Lume")
    assert found[0] == "turn000001"
    # The three next turns come with it, Samira's own before Lena's (the message is asked
    # again of Samira, whose turn it found); the chat's fourth comes only as one of
    # Samira's turns, after the memory that matched the message's words.
    assert found[1:4] == ["turn000003", "turn000002", "turn000004"]
    assert found.index("turn000005") > found.index("m000000001")


def test_a_message_naming_a_person_favours_the_turns_that_person_spoke(vault_dir):
    # Ines speaks most turns, so her name alone weighs nothing; Lena's turn names the
    # concert twice, so it would rank first on its words.
    chat_turn(vault_dir, "turn000001", 1, "Lena: The concert! The concert was so loud.", "chat")
    chat_turn(vault_dir, "turn000002", 2, "Ines: That concert was my night of the year.", "chat")
    for minute in range(3, 9):
        chat_turn(vault_dir, f"turn00000{minute}", minute, f"Ines: small talk {minute}.", "x")
    found = recalled(Vault(vault_dir), "What did Ines think of the concert?")
    assert found[:2] == ["turn000002", "turn000001"]
    assert search_query.speaker("Ines: That concert") == "ines"
    assert search_query.speaker("Ines said the concert was loud") is None


def test_a_chinese_turn_with_a_full_width_colon_is_spoken_by_its_speaker(vault_dir):
    """Chinese and Japanese write a turn's speaker with a full-width colon and no space
    ("小明：…"); the message that names 小明 favours his turns as "Ines: …" favours hers."""
    chat_turn(vault_dir, "turn000001", 1, "小红：音乐会！那场音乐会真吵，音乐会太长了。", "chat")
    chat_turn(vault_dir, "turn000002", 2, "小明：那场音乐会是我今年最好的一晚。", "chat")
    for minute in range(3, 9):
        chat_turn(vault_dir, f"turn00000{minute}", minute, f"小明：闲聊{minute}。", "x")
    found = recalled(Vault(vault_dir), "小明觉得音乐会怎么样？")
    assert found[:2] == ["turn000002", "turn000001"]
    assert search_query.speaker("小明：那场音乐会") == "小明"
    assert search_query.speaker("田中さん：コーヒーを飲む") == "田中さん"
    assert search_query.speaker("小明说音乐会很吵") is None


def test_a_message_naming_a_person_puts_their_chats_above_another_persons_turn(vault_dir):
    chat(
        vault_dir,
        ("Priya: The gig last night! What a gig, the best gig of the year.", "chat with Priya"),
        ("Lena: How was the gig?", "chat with Ines"),
        ("Ines: Loud, and the gig ran late.", "chat with Ines"),
    )
    found = recalled(Vault(vault_dir), "What did Ines say about the gig?")
    # Priya's turn names the gig three times, but the message asks about Ines: her turn
    # and Lena's question in their chat come first, Priya's after them.
    assert found[:2] == ["turn000003", "turn000002"]
    assert found.index("turn000001") > 1


def test_a_message_about_whoever_did_something_asks_the_next_question_of_them(vault_dir):
    chat(
        vault_dir,
        ("Felix: My courgettes are enormous this year.", "chat with Felix, June"),
        ("Samira: The wedding! The wedding was a dream.", "chat with Samira"),
        ("Felix: Family news: my cousin's wedding is in May.", "chat with Felix, March"),
    )
    found = recalled(Vault(vault_dir), "The person who grows courgettes: what about the wedding?")
    # The courgettes are Felix's, so the wedding asked about is the one he spoke of.
    assert found[0] == "turn000001"
    assert found.index("turn000003") < found.index("turn000002")


def test_a_question_finds_its_memory_in_another_form_of_its_words(vault_dir):
    ids = write_notes(
        vault_dir,
        [
            "Felix bought an old Volvo estate, dark blue.",
            "Marek fixed the leaking tap himself.",
            "Ines is moving to a village outside Gent.",
            "Rut went to the sauna competition in Tampere.",
            *MUSEUM,
        ],
    )
    vault = Vault(vault_dir)
    asked = {
        ids[0]: "what car did Felix buy",
        ids[1]: "who can fix a leaking tap",
        ids[2]: "where will Ines move",
        ids[3]: "did Rut go to Tampere",
    }
    for mid, question in asked.items():
        assert recalled(vault, question)[0] == mid, question
        assert vault.index.search(question.split(" ", 2)[2])[0].id == mid, question


def test_reach_stays_exact_for_the_forms_search_looks_for(vault_dir):
    ids = write_notes(
        vault_dir,
        ["Felix bought an old Volvo estate.", "Felix will buy an old Volvo estate."],
    )
    write_correction(vault_dir, "fixvolvo01", "bought an old Volvo", "Felix bought a Saab.")
    vault = Vault(vault_dir)
    assert [m.id for m, _ in vault.index.reach_of("fixvolvo01")] == [ids[0]]
    assert {ids[0], ids[1]} <= {m.id for m in vault.index.search("bought old Volvo")}


def test_a_note_about_a_person_ranks_above_their_small_talk(vault_dir):
    for minute, text in enumerate(["Mum called, she says hi.", "Ha, classic.", "Call you?"], 1):
        chat_turn(vault_dir, f"turn00000{minute}", minute, f"Samira: {text}", "chat")
    (vault_dir / "note.md").write_text(
        "---\nid: samiraveg1\ntitle: Samira is vegetarian\ncreated: 2026-03-01\n---\n"
        "Samira is vegetarian but eats fish at her parents' house.\n",
        encoding="utf-8",
    )
    write_notes(vault_dir, MUSEUM)
    assert recalled(Vault(vault_dir), "Does Samira eat meat?")[0] == "samiraveg1"


def test_what_a_person_told_comes_before_their_small_talk_when_only_their_name_matches(
    vault_dir,
):
    small_talk = ["Ha, classic.", "Lol, yes exactly.", "Call you on Sunday?", "Mum says hi."]
    told = "Joost: Ugh. Did something to my ankle at bouldering, it's swollen like a melon."
    for minute, text in enumerate(small_talk, 1):
        chat_turn(vault_dir, f"turn00000{minute}", minute, f"Joost: {text}", "chat")
    chat_turn(vault_dir, "turn000009", 9, told, "chat")
    chat_turn(vault_dir, "turn000010", 10, "Joost: The climbing gym is shut on Mondays.", "x")
    write_notes(vault_dir, MUSEUM)
    found = recalled(Vault(vault_dir), "When did Joost get injured at the climbing gym?")
    # The turn on the message's topic stays first; of those that matched only the name,
    # the longest, which tells something, comes before the small talk BM25 prefers.
    assert found[:2] == ["turn000010", "turn000009"]
    assert set(found[2:6]) == {f"turn00000{m}" for m in range(1, 5)}


def test_matches_on_nothing_but_a_name_are_reordered_longest_first_and_keep_their_scores():
    scored = [(1, -9.0), (2, -5.0), (3, -4.0), (4, -3.0), (5, -1.0)]
    reordered = search_query.longest_first(scored, {2: 10, 3: 80, 5: 40})
    assert reordered == [(1, -9.0), (3, -5.0), (5, -4.0), (4, -3.0), (2, -1.0)]
    assert search_query.longest_first(scored, {}) == scored


def test_a_message_about_my_sister_recalls_what_the_vault_says_she_said(vault_dir):
    for mid, text in {
        "sisterines": "Ines is my older sister; she has a five-year-old daughter, Noor.",
        "priyaclimb": "Priya is my climbing partner; we go bouldering on Tuesdays.",
    }.items():
        (vault_dir / f"{mid}.md").write_text(
            f"---\nid: {mid}\ntitle: {text}\ncreated: 2026-01-01\n---\n{text}\n",
            encoding="utf-8",
        )
    chat(
        vault_dir,
        ("Ines: Big news, the bakery offered me the job!", "chat with Ines"),
        ("Priya: The ferry company offered me the job!", "chat with Priya"),
    )
    found = recalled(Vault(vault_dir), "Where is my sister working now?")
    # Nothing but the name the note gives "my sister" leads to her turn.
    assert "turn000001" in found and "turn000002" not in found


def test_a_relation_is_named_by_the_memories_that_state_it_exactly_first():
    stop = search_query.STOPWORDS
    notes = ["Felix is my partner. He cannot eat peanuts.", "Priya is my climbing partner."]
    assert relations.named(("partner",), notes, stop) == "Felix"
    assert relations.named(("climbing", "partner"), notes, stop) == "Priya"
    assert relations.named(("sister",), ["Oma Rut is my grandmother."], stop) is None
    assert relations.named(("grandmother",), ["Oma Rut is my grandmother on Mum's side"], stop) == (
        "Oma Rut"
    )
    assert relations.named(("brother",), ["Lena: my brother Marek says hi"], stop) == "Marek"
    # Two names stated as often name no one; capitals that are not a name are none.
    assert relations.named(("boss",), ["Ada is my boss.", "Bea is my boss."], stop) is None
    assert relations.named(("car",), ["Lena: is my car OK?"], stop) is None
    assert relations.asked("my best friend's teacher", stop) == [("best", "friend"), ("best",)]
    assert len(relations.asked("my cat " * 50_000, stop)) <= 2 * relations.MOST_RELATIONS
