"""Search finds a word inside Thai, Lao, Khmer and Burmese text, which is written without
spaces between its words, through every face that searches; a vowel sign or a tone mark
stays with its letter, so a word is told from another that differs only in its marks."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from search_support import add, assert_found_inside, searched

from memoryctl import character_pairs
from memoryctl.context import context_bundle
from memoryctl.storage.vault import Vault

# "I really like eating shrimp fried rice."
THAI = "ฉันชอบกินข้าวผัดกุ้งมาก"
# "The white rice at home is running low, I must buy more."
THAI_WHITE_RICE = "ข้าวขาวที่บ้านเหลือน้อยแล้ว ต้องซื้อเพิ่ม"
# "I like eating sticky rice with grilled chicken."
LAO = "ຂ້ອຍມັກກິນເຂົ້າໜຽວກັບໄກ່ປີ້ງ"
# "I like eating fried rice with shrimp."
KHMER = "ខ្ញុំចូលចិត្តញ៉ាំបាយឆាជាមួយបង្គា"
# "My mother lives in Mandalay."
BURMESE = "အမေကမန္တလေးမြို့မှာနေတယ်"


def test_search_finds_a_word_inside_thai_lao_khmer_and_burmese_text(vault_dir, cli):
    thai, lao, khmer, burmese = (add(cli, vault_dir, t) for t in (THAI, LAO, KHMER, BURMESE))
    assert searched(cli, vault_dir, "ข้าวผัด") == [thai]  # fried rice
    assert searched(cli, vault_dir, "กุ้ง") == [thai]  # shrimp
    assert searched(cli, vault_dir, "ເຂົ້າໜຽວ") == [lao]  # sticky rice
    assert searched(cli, vault_dir, "ໄກ່") == [lao]  # chicken
    assert searched(cli, vault_dir, "បាយឆា") == [khmer]  # fried rice
    assert searched(cli, vault_dir, "ចូលចិត្ត") == [khmer]  # like
    assert searched(cli, vault_dir, "မန္တလေး") == [burmese]  # Mandalay
    assert searched(cli, vault_dir, "မြို့") == [burmese]  # town


def test_a_thai_word_is_told_from_one_that_differs_only_in_its_marks(vault_dir, cli):
    thai = add(cli, vault_dir, THAI)
    white = add(cli, vault_dir, THAI_WHITE_RICE)
    # ข้าว (rice) and ขาว (white) differ by a tone mark alone.
    assert sorted(searched(cli, vault_dir, "ข้าว")) == sorted([thai, white])
    assert searched(cli, vault_dir, "ขาว") == [white]
    assert searched(cli, vault_dir, "ปลา") == []  # fish: in neither


def test_a_whole_thai_phrase_ranks_its_own_memory_first(vault_dir, cli):
    add(cli, vault_dir, "ฉันชอบกินข้าวผัดหมู")
    add(cli, vault_dir, "ฉันชอบกินกุ้งเผา")
    add(cli, vault_dir, THAI_WHITE_RICE)
    exact = add(cli, vault_dir, THAI)
    assert searched(cli, vault_dir, THAI)[0] == exact
    assert searched(cli, vault_dir, "ชอบกินข้าวผัดกุ้ง")[0] == exact
    bundle = context_bundle(Vault(vault_dir), message=THAI)
    assert bundle.recalled[0].memory.id == exact


def test_a_thai_question_recalls_the_memory_it_shares_a_word_with(vault_dir, cli):
    thai = add(cli, vault_dir, THAI)
    add(cli, vault_dir, LAO)
    add(cli, vault_dir, "แมวที่บ้านชื่อส้มโอ เป็นแมวสีส้ม")
    bundle = context_bundle(Vault(vault_dir), message="ข้าวผัดแบบไหนที่ฉันชอบ")
    assert bundle.recalled[0].memory.id == thai


# --- any string of whole letters inside a run is found -----------------------------------

# Letters as a reader counts them: each with the vowel signs and tone marks written on
# it, and in Khmer and Burmese with the letter stacked below it.
_LETTERS = {
    "thai": ["ฉั", "น", "ช", "อ", "บ", "กิ", "ข้", "า", "ว", "ผั", "ด", "กุ้", "ง", "แ", "ม่", "น้", "ำ"],
    "lao": ["ຂ້", "ອ", "ຍ", "ມັ", "ກ", "ກິ", "ນ", "ເ", "ຂົ້", "າ", "ໜ", "ຽ", "ວ", "ໄ", "ກ່"],
    "khmer": ["ខ្ញុំ", "ចូ", "ល", "ចិ", "ត្ត", "ញ៉ាំ", "បា", "យ", "ឆា", "ប", "ង្គា"],
    "burmese": ["ကျွ", "န်", "တော်", "ထ", "မ", "င်း", "မ", "န္တ", "လေး", "မြို့", "မှာ"],
}


def test_a_letter_is_read_with_its_marks_and_the_letter_stacked_below_it():
    for letters in _LETTERS.values():
        assert character_pairs.characters("".join(letters)) == letters
    assert character_pairs.pairs("ข้าว") == ["ข้า", "าว"]
    assert character_pairs.indexed("ข้าว") == " ข้า าว ว "


_RUN = st.sampled_from(sorted(_LETTERS)).flatmap(
    lambda name: st.lists(st.sampled_from(_LETTERS[name]), min_size=1, max_size=12)
)
_AROUND = st.sampled_from(["", " ", "Berlin", "2025", "、", " ok. "])


@settings(max_examples=200, deadline=None)
@given(_AROUND, _RUN, _AROUND, st.data())
def test_every_string_of_whole_letters_inside_a_run_is_found(
    before: str, clusters: list[str], after: str, data: st.DataObject
) -> None:
    start = data.draw(st.integers(0, len(clusters) - 1))
    end = data.draw(st.integers(start + 1, len(clusters)))
    assert_found_inside(before + "".join(clusters) + after, "".join(clusters[start:end]))
