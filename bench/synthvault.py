"""A realistic synthetic vault for benchmarks, generated deterministically from a seed.

The vault is `n` memories under `root/memories/<first two chars of id>/<id>.md`, each a
Markdown body under YAML frontmatter in the exact layout memoryctl writes. Bodies are
prose over a vocabulary of ~150 English function words followed by 20,000 pronounceable
pseudo-words, with word frequencies following Zipf's law (s = 1.07), so searches see the
same skewed term distribution as real text.

Optionally the vault carries a deprecated string in a chosen set of memories (and, by
construction, nowhere else), pinned memories, and memories anchored to functions of a
generated git repository that `mutate_repo` can later edit, rename and delete.

Determinism: the same seed and spec give the same vault. Body words are drawn with
numpy when it is installed (faster) and with `random.choices` otherwise; the two
samplers draw different words, so set `SynthSpec.sampler` to pin one when vaults must
match across machines.

    python -m bench.synthvault .scratch/vault --n 1000 --seed 7
"""

from __future__ import annotations

import argparse
import bisect
import calendar
import hashlib
import itertools
import json
import os
import random
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Sampler = Literal["auto", "numpy", "python"]

ZIPF_S = 1.07
PSEUDO_WORDS = 20_000
BODY_WORDS = (60, 250)
SENTENCE_WORDS = (6, 18)
TITLE_WORDS = (3, 7)
FUNCTIONS_PER_FILE = (2, 5)
FILES_PER_PACKAGE = 40
MAX_RETRIES = 200

ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
ID_LENGTH = 10


def _split(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# Real English function words, most frequent first; they take the top ranks.
FUNCTION_WORDS = _split(
    """
    the of and to a in is it that for you was with on as have but be they at not this
    are we from or by he she his her had an were which one all there their what so up
    out if about who get them me would can my when make like no just him know take into
    your some could than then now only its over also back after use two how our first
    well way even new want because any these give most us should did does do has been
    may might must shall will very more much many such here where why each few both
    other same own too again still before under between through during without within
    upon against among around across off down since until while though although yet
    nor either neither every whose whom those am being having least less per via onto
    toward above below near once ever never always often soon already almost
    """
)

# Pseudo-words never take a form that YAML 1.1 reads as anything but a string.
_YAML_WORDS = frozenset(_split("y n yes no on off true false null nan inf"))

_ONSETS = (
    _split(
        "b c d f g h j k l m n p r s t v w z "
        "b d f g k l m n p r s t v "
        "bl br ch cl cr dr fl fr gl gr kl kr pl pr sc sh sk sl sm sn sp st sw th tr vr"
    )
    + ("",) * 6
)
_MID_ONSETS = _split("b d f g k l m n p r s t v z l n r s t ch sh th")
_VOWELS = _split("a e i o u a e i o u a e o ai ea ee io oa oo ou")
_CODAS = _split("n r l s m t k x nd nt rd rk rn st sk ld lm mp ng sh th") + ("",) * 16

KINDS: tuple[tuple[str, float], ...] = (
    ("fact", 34),
    ("event", 24),
    ("preference", 10),
    ("constraint", 8),
    ("plan", 9),
    ("procedure", 8),
    ("summary", 7),
)
STATUSES: tuple[tuple[str, float], ...] = (("active", 94), ("needs_review", 4), ("retired", 2))
VISIBILITIES: tuple[tuple[str, float], ...] = (("private", 80), ("shared", 15), ("public", 5))
SOURCE_KINDS: tuple[tuple[str, float], ...] = (
    ("user", 45),
    ("tool", 20),
    ("document", 20),
    ("inference", 15),
)
TAGS = _split(
    "api billing deploy design docs family finance fitness food health hiring home infra "
    "meeting music onboarding planning reading release research security testing travel "
    "writing"
)
TOOL_REFS = ("shell session", "pytest run", "web search", "calendar sync", "issue tracker")
INFERENCE_REFS = ("session summary", "pattern across chats", "agent reflection")
PREDICATES = ("likes", "dislikes", "owns", "lives_in", "works_at")
SUBJECTS = ("user", "user", "user", "team", "manager", "partner")
TITLE_LINKS = ("for", "of", "and", "in", "on", "with", "to", "about", "after", "before")
CONFIDENCES = ("0.5", "0.6", "0.7", "0.75", "0.8", "0.85", "0.9", "0.95", "1.0")
MESSAGE_OPENERS = (
    ("can", "you"),
    ("what", "do", "we"),
    ("how", "should", "we"),
    ("where", "did", "we"),
    ("do", "you", "know"),
    ("please",),
    ("why", "does", "the"),
    (),
)

_START = calendar.timegm((2025, 1, 1, 0, 0, 0))
_END = calendar.timegm((2026, 11, 28, 23, 59, 59))
_GIT_ENV = {
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
}
_GIT_IDENTITY = ("-c", "user.name=bench", "-c", "user.email=bench@localhost")


@dataclass
class SynthSpec:
    n: int
    seed: int = 7
    deprecated_string: str | None = None  # e.g. "metalcraftai/ufo"
    deprecated_count: int = 0  # how many memories name that string in their body
    pins: int = 0  # how many memories are pinned (pin_order 1..pins)
    anchored: int = 0  # how many memories carry an anchor into a generated repo
    repo_files: int = 0  # size of the generated code repo
    sampler: Sampler = "auto"  # body-word sampler; "auto" uses numpy when installed


@dataclass
class SynthInfo:
    root: Path
    ids: list[str]  # in generation order
    vocabulary: list[str]  # by frequency rank, function words first
    deprecated_ids: list[str]  # in vault order
    pinned_ids: list[str]  # by pin_order
    anchored_ids: list[str]  # in vault order
    repo: Path | None
    function_words: int = len(FUNCTION_WORDS)  # vocabulary[:function_words] are real words
    anchors: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (path, symbol)
    repo_functions: dict[str, list[str]] = field(default_factory=dict)  # live path -> symbols
    mutations: dict[str, str] = field(default_factory=dict)  # path -> edited/renamed/deleted
    sampler: str = "python"
    bytes: int = 0  # total size of the memory files
    cum_weights: list[float] = field(default_factory=list, repr=False)


# --- vocabulary ------------------------------------------------------------------------


def _pseudo_word(rng: random.Random) -> tuple[str, int]:
    syllables = rng.choices((1, 2, 3, 4), weights=(18, 44, 28, 10))[0]
    parts = [rng.choice(_ONSETS)]
    for index in range(syllables):
        if index:
            parts.append(rng.choice(_MID_ONSETS))
        parts.append(rng.choice(_VOWELS))
    parts.append(rng.choice(_CODAS))
    return "".join(parts), syllables


def build_vocabulary(seed: int, avoid: str | None = None) -> list[str]:
    """Function words, then PSEUDO_WORDS pseudo-words with shorter ones ranked higher.

    Words containing `avoid` (case-insensitively) are left out, so the vocabulary alone
    can never spell a deprecated string.
    """
    rng = random.Random(f"synthvault/{seed}/vocabulary")
    needle = avoid.casefold() if avoid else None
    function_words = [w for w in FUNCTION_WORDS if not needle or needle not in w]
    seen = set(FUNCTION_WORDS) | _YAML_WORDS
    ranked: list[tuple[float, str]] = []
    while len(ranked) < PSEUDO_WORDS:
        word, syllables = _pseudo_word(rng)
        if len(word) < 2 or word in seen or (needle and needle in word):
            continue
        seen.add(word)
        # Zipf's law of abbreviation: frequent words are short, with plenty of noise.
        ranked.append((syllables + 2.5 * rng.random(), word))
    ranked.sort()
    return function_words + [word for _, word in ranked]


def zipf_cum_weights(size: int, s: float = ZIPF_S) -> list[float]:
    return list(itertools.accumulate(rank**-s for rank in range(1, size + 1)))


# --- sampling body words ---------------------------------------------------------------


class _WordSampler:
    """Draws words by Zipf frequency, with numpy in large buffered batches if available."""

    def __init__(
        self, vocabulary: list[str], cum_weights: list[float], seed: int, kind: Sampler
    ) -> None:
        self._vocabulary = vocabulary
        self._cum_weights = cum_weights
        self._rng = random.Random(f"synthvault/{seed}/words")
        self._buffer: list[str] = []
        self._pos = 0
        self._np_draw: Callable[[], list[str]] | None = None
        self.kind = "python"
        if kind != "python":
            try:
                import numpy as np
            except ImportError:
                if kind == "numpy":
                    raise
            else:
                digest = hashlib.sha256(f"synthvault/{seed}/words".encode()).digest()
                generator = np.random.default_rng(int.from_bytes(digest[:8], "big"))
                cdf = np.asarray(cum_weights, dtype=np.float64)
                cdf /= cdf[-1]
                words = np.asarray(vocabulary, dtype=object)
                last = len(vocabulary) - 1

                def draw() -> list[str]:
                    ranks = np.searchsorted(cdf, generator.random(1 << 18), side="right")
                    return words[np.minimum(ranks, last)].tolist()

                self._np_draw = draw
                self.kind = "numpy"

    def take(self, count: int) -> list[str]:
        if self._np_draw is None:
            return self._rng.choices(self._vocabulary, cum_weights=self._cum_weights, k=count)
        if self._pos + count > len(self._buffer):
            self._buffer = self._buffer[self._pos :] + self._np_draw()
            self._pos = 0
        words = self._buffer[self._pos : self._pos + count]
        self._pos += count
        return words


# --- text ------------------------------------------------------------------------------


def _sentence_lengths(rng: random.Random, total: int) -> list[int]:
    """Split `total` (at least SENTENCE_WORDS[0]) words into sentences of allowed length."""
    low, high = SENTENCE_WORDS
    lengths = []
    while total > high:
        length = low + int(rng.random() * (min(high, total - low) - low + 1))
        lengths.append(length)
        total -= length
    lengths.append(total)
    return lengths


def _capital(word: str) -> str:
    return word[:1].upper() + word[1:]


def _sentence(words: list[str], rng: random.Random) -> str:
    words[0] = _capital(words[0])
    if len(words) > 10 and rng.random() < 0.3:
        comma = rng.randrange(3, len(words) - 3)
        words[comma] += ","
    return " ".join(words) + "."


def _paragraphs(sentences: list[str], rng: random.Random) -> str:
    paragraphs = []
    start = 0
    while start < len(sentences):
        size = rng.randint(2, 5)
        paragraphs.append(" ".join(sentences[start : start + size]))
        start += size
    return "\n\n".join(paragraphs)


def _deprecated_form(string: str, rng: random.Random) -> tuple[str, bool]:
    """One way of naming the string in a sentence, and whether it must end the sentence."""
    form = rng.randrange(4)
    if form == 0:
        return string, False
    if form == 1:
        return f"https://github.com/{string}/pull/{rng.randint(1, 4000)}", False
    if form == 2:
        return f"({string})", False
    return string, True


# --- memories --------------------------------------------------------------------------


def _encode_id(number: int) -> str:
    chars = []
    for _ in range(ID_LENGTH):
        number, rest = divmod(number, 32)
        chars.append(ID_ALPHABET[rest])
    return "".join(chars)


def _picker(table: tuple[tuple[str, float], ...]) -> Callable[[random.Random], str]:
    names = [name for name, _ in table]
    cum = list(itertools.accumulate(weight for _, weight in table))
    total = cum[-1]

    def pick(rng: random.Random) -> str:
        return names[bisect.bisect(cum, rng.random() * total)]

    return pick


_pick_kind = _picker(KINDS)
_pick_status = _picker(STATUSES)
_pick_visibility = _picker(VISIBILITIES)
_pick_source = _picker(SOURCE_KINDS)


class _Writer:
    """Builds memories one at a time from the shared random streams."""

    def __init__(self, spec: SynthSpec, vocabulary: list[str], cum_weights: list[float]):
        self.spec = spec
        self.rng = random.Random(f"synthvault/{spec.seed}/vault")
        self.words = _WordSampler(vocabulary, cum_weights, spec.seed, spec.sampler)
        first_content = len(vocabulary) - PSEUDO_WORDS
        self.content = vocabulary[first_content:]
        content_weights = [rank**-ZIPF_S for rank in range(first_content + 1, len(vocabulary) + 1)]
        self.content_cum = list(itertools.accumulate(content_weights))
        self.needle = spec.deprecated_string.casefold() if spec.deprecated_string else None

    def content_words(self, count: int) -> list[str]:
        return self.rng.choices(self.content, cum_weights=self.content_cum, k=count)

    def title(self) -> str:
        rng = self.rng
        words = self.content_words(rng.randint(*TITLE_WORDS))
        if len(words) > 3 and rng.random() < 0.4:
            words.insert(rng.randrange(1, len(words) - 1), rng.choice(TITLE_LINKS))
            words.pop()
        words[0] = _capital(words[0])
        return " ".join(words)

    def body(self, deprecated: bool) -> str:
        rng = self.rng
        low, high = BODY_WORDS
        form, at_end, extra = "", False, 0
        if deprecated:
            assert self.spec.deprecated_string is not None
            form, at_end = _deprecated_form(self.spec.deprecated_string, rng)
            # A string with spaces is several words; keep the body within bounds.
            extra = max(0, len(form.split()) + 1 - SENTENCE_WORDS[0])
        total = rng.randint(low, high - extra)
        lengths = _sentence_lengths(rng, total)
        words = self.words.take(total)
        sentences = []
        start = 0
        for length in lengths:
            sentences.append(_sentence(words[start : start + length], rng))
            start += length
        if deprecated:
            index = rng.randrange(len(sentences))
            named = self.words.take(max(1, lengths[index] - len(form.split())))
            position = len(named) if at_end else rng.randint(1, len(named))
            named[0] = _capital(named[0])
            named.insert(position, form)
            sentences[index] = " ".join(named) + "."
        return _paragraphs(sentences, rng)

    def frontmatter(
        self, memory_id: str, pin_order: int | None, anchor: tuple[str, str] | None
    ) -> list[str]:
        rng = self.rng
        moment = _START + int((_END - _START) * rng.random() ** 0.7)
        created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))
        typed = rng.random() < 0.1
        predicate = rng.choice(PREDICATES) if typed else ""
        if typed:
            kind = "preference" if predicate in ("likes", "dislikes") else "fact"
        else:
            kind = _pick_kind(rng)
        special = pin_order is not None or anchor is not None
        status = "active" if special else _pick_status(rng)
        lines = [
            "---",
            f"id: {memory_id}",
            f"title: {self.title()}",
            f"kind: {kind}",
            f"status: {status}",
        ]
        if pin_order is not None:
            lines += ["pinned: true", f"pin_order: {pin_order}"]
        lines.append(f"created: {created}")
        tag_count = rng.choices((0, 1, 2, 3), weights=(30, 35, 25, 10))[0]
        if tag_count:
            lines.append(f"tags: [{', '.join(rng.sample(TAGS, tag_count))}]")
        lines.append(f"namespace: {'work' if rng.random() < 0.7 else 'personal'}")
        lines.append(f"visibility: {_pick_visibility(rng)}")
        source = _pick_source(rng)
        if source == "user":
            ref = f"chat {created[:10]}"
        elif source == "tool":
            ref = rng.choice(TOOL_REFS)
        elif source == "document":
            ref = f"docs/{'-'.join(self.content_words(rng.randint(1, 2)))}.md"
        else:
            ref = rng.choice(INFERENCE_REFS)
        lines += ["source:", f"  kind: {source}", f"  ref: {ref}"]
        if rng.random() < 0.7:
            lines.append(f"confidence: {rng.choice(CONFIDENCES)}")
        if anchor is not None:
            lines += ["anchors:", f"  - path: {anchor[0]}", f"    symbol: {anchor[1]}"]
        if typed:
            subject = rng.choice(SUBJECTS)
            value = " ".join(self.content_words(2 if predicate == "works_at" else 1))
            lines += [f"subject: {subject}", f"predicate: {predicate}", f"value: {value}"]
        lines.append("---")
        return lines

    def memory(
        self,
        memory_id: str,
        pin_order: int | None,
        anchor: tuple[str, str] | None,
        deprecated: bool,
    ) -> str:
        """The file's text; only a deprecated memory names the deprecated string."""
        for _ in range(MAX_RETRIES):
            lines = self.frontmatter(memory_id, pin_order, anchor)
            if not self.needle:
                lines.append(self.body(deprecated))
                return "\n".join(lines) + "\n"
            header = "\n".join(lines)
            if self.needle in header.casefold():
                continue
            body = self.body(deprecated)
            if deprecated:
                # The string must appear only in the sentence that names it on purpose.
                rest = body.casefold().replace(self.needle, "\0", 1)
                if self.needle in rest:
                    continue
            elif self.needle in body.casefold():
                continue
            return f"{header}\n{body}\n"
        raise ValueError(
            f"cannot avoid the deprecated string {self.spec.deprecated_string!r} in "
            "generated text; choose a longer or less common string"
        )


# --- code repository -------------------------------------------------------------------


def _repo_path(index: int, width: int) -> str:
    return f"src/pkg{index // FILES_PER_PACKAGE:02d}/mod_{index:0{width}d}.py"


def _module_text(number: str, functions: list[str], rng: random.Random, words: list[str]) -> str:
    def phrase(count: int) -> str:
        return _capital(" ".join(rng.choice(words) for _ in range(count))) + "."

    parts = [
        f'"""{phrase(rng.randint(4, 9))}"""\n',
        "from __future__ import annotations\n",
        f"CONSTANT_{number} = {rng.randint(2, 99)}\n",
    ]
    for name in functions:
        parts.append(
            f"\ndef {name}(value: int, factor: int = {rng.randint(2, 9)}) -> int:\n"
            f'    """{phrase(rng.randint(5, 12))}"""\n'
            f"    result = value * factor + {rng.randint(1, 50)}\n"
            f"    return result - CONSTANT_{number}\n"
        )
    return "\n".join(parts)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", *_GIT_IDENTITY, "-c", "commit.gpgsign=false", *args],
        cwd=repo,
        check=True,
        env={**os.environ, **_GIT_ENV},
        stdout=subprocess.DEVNULL,
    )


def _commit_all(repo: Path, message: str) -> None:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", message)


def _build_repo(repo: Path, files: int, seed: int, words: list[str]) -> dict[str, list[str]]:
    rng = random.Random(f"synthvault/{seed}/repo")
    width = max(4, len(str(files - 1)))
    functions: dict[str, list[str]] = {}
    for index in range(files):
        number = f"{index:0{width}d}"
        names = [f"func_{number}_{k}" for k in range(rng.randint(*FUNCTIONS_PER_FILE))]
        relpath = _repo_path(index, width)
        path = repo / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_module_text(number, names, rng, words), encoding="utf-8")
        functions[relpath] = names
    _git(repo, "-c", "init.defaultBranch=main", "init", "-q")
    _commit_all(repo, "synthetic repository")
    return functions


def mutate_repo(
    info: SynthInfo, changed: int, rng: random.Random, *, commit: bool = True
) -> list[str]:
    """Change `changed` repo files, about a third each edited, renamed and deleted.

    Edited files keep every function. A renamed file loses one function name (an
    anchored one when the file has any). Deleted files are gone. The changes are
    committed unless `commit` is false. Returns the changed paths, relative to the repo;
    `info.repo_functions` and `info.mutations` are updated.
    """
    if info.repo is None:
        raise ValueError("this vault has no generated repository")
    live = list(info.repo_functions)
    if not 0 <= changed <= len(live):
        raise ValueError(f"cannot change {changed} of {len(live)} files")
    chosen = rng.sample(live, changed)
    anchored: dict[str, list[str]] = {}
    for path, symbol in info.anchors.values():
        anchored.setdefault(path, []).append(symbol)
    deleted, renamed = changed // 3, (changed + 1) // 3
    for position, relpath in enumerate(chosen):
        path = info.repo / relpath
        names = info.repo_functions[relpath]
        if position < deleted:
            path.unlink()
            del info.repo_functions[relpath]
            info.mutations[relpath] = "deleted"
            continue
        text = path.read_text(encoding="utf-8")
        if position < deleted + renamed and names:
            targets = [name for name in names if name in anchored.get(relpath, ())]
            old = rng.choice(targets or names)
            new = old.replace("func_", "renamed_", 1)
            text = re.sub(rf"\b{old}\b", new, text)
            names[names.index(old)] = new
            info.mutations[relpath] = "renamed"
        else:
            text = re.sub(
                r"^(CONSTANT_\w+ = )(\d+)$",
                lambda m: f"{m.group(1)}{int(m.group(2)) + rng.randint(1, 9)}",
                text,
                count=1,
                flags=re.MULTILINE,
            )
            text += f"\n# revised: {' '.join(rng.choice(info.vocabulary) for _ in range(5))}\n"
            info.mutations.setdefault(relpath, "edited")
        path.write_text(text, encoding="utf-8")
    if commit and chosen:
        _commit_all(info.repo, f"mutate {changed} files")
    return chosen


# --- the vault -------------------------------------------------------------------------


def _check(spec: SynthSpec) -> None:
    if spec.n < 0:
        raise ValueError("n must not be negative")
    for name in ("deprecated_count", "pins", "anchored"):
        value = getattr(spec, name)
        if not 0 <= value <= spec.n:
            raise ValueError(f"{name} must be between 0 and n")
    string = spec.deprecated_string
    if spec.deprecated_count and not string:
        raise ValueError("deprecated_count needs a deprecated_string")
    if string is not None:
        # Even with deprecated_count = 0 the string is kept out of every memory.
        if len(string.strip()) < 3 or string != string.strip():
            raise ValueError("the deprecated string needs 3+ characters and no outer spaces")
        if "\n" in string or "\0" in string:
            raise ValueError("the deprecated string must be one line")
    if spec.anchored and spec.repo_files <= 0:
        raise ValueError("anchored memories need repo_files > 0")
    if spec.repo_files < 0:
        raise ValueError("repo_files must not be negative")


def _fresh_dir(path: Path) -> None:
    if path.exists() and any(path.iterdir()):
        raise FileExistsError(f"{path} exists and is not empty")
    path.mkdir(parents=True, exist_ok=True)


def generate(root: Path, spec: SynthSpec) -> SynthInfo:
    """Write the vault for `spec` under `root` (which must be empty or missing)."""
    _check(spec)
    root = Path(root).resolve()
    repo = root.parent / f"{root.name}-repo" if spec.repo_files else None
    _fresh_dir(root)
    if repo is not None:
        _fresh_dir(repo)
    (root / "memoryctl.toml").write_text("[git]\nautocommit = false\n", encoding="utf-8")
    vocabulary = build_vocabulary(spec.seed, spec.deprecated_string)
    cum_weights = zipf_cum_weights(len(vocabulary))
    writer = _Writer(spec, vocabulary, cum_weights)

    ids_rng = random.Random(f"synthvault/{spec.seed}/ids")
    ids: list[str] = []
    taken: set[str] = set()
    while len(ids) < spec.n:
        memory_id = _encode_id(ids_rng.getrandbits(5 * ID_LENGTH))
        # An all-digit id would read as a number in YAML (about 1 id in 100,000).
        if memory_id not in taken and not memory_id.isdigit():
            taken.add(memory_id)
            ids.append(memory_id)

    select = random.Random(f"synthvault/{spec.seed}/select")
    deprecated = set(select.sample(range(spec.n), spec.deprecated_count))
    pin_orders = {
        index: order for order, index in enumerate(select.sample(range(spec.n), spec.pins), 1)
    }
    anchored = sorted(select.sample(range(spec.n), spec.anchored))

    repo_functions: dict[str, list[str]] = {}
    anchors: dict[int, tuple[str, str]] = {}
    if repo is not None:
        repo_functions = _build_repo(repo, spec.repo_files, spec.seed, vocabulary[-PSEUDO_WORDS:])
        paths = list(repo_functions)
        for index in anchored:
            path = select.choice(paths)
            anchors[index] = (path, select.choice(repo_functions[path]))

    memories = root / "memories"
    for folder in sorted({memory_id[:2] for memory_id in ids}):
        (memories / folder).mkdir(parents=True, exist_ok=True)
    total_bytes = 0
    for index, memory_id in enumerate(ids):
        text = writer.memory(
            memory_id, pin_orders.get(index), anchors.get(index), index in deprecated
        )
        data = text.encode("utf-8")
        with open(memories / memory_id[:2] / f"{memory_id}.md", "wb") as handle:
            handle.write(data)
        total_bytes += len(data)

    return SynthInfo(
        root=root,
        ids=ids,
        vocabulary=vocabulary,
        deprecated_ids=[ids[i] for i in sorted(deprecated)],
        pinned_ids=[ids[i] for i in sorted(pin_orders, key=pin_orders.__getitem__)],
        anchored_ids=[ids[i] for i in anchored],
        repo=repo,
        function_words=len(vocabulary) - PSEUDO_WORDS,
        anchors={ids[i]: anchor for i, anchor in anchors.items()},
        repo_functions=repo_functions,
        sampler=writer.words.kind,
        bytes=total_bytes,
        cum_weights=cum_weights,
    )


# --- queries ---------------------------------------------------------------------------


def _by_frequency(info: SynthInfo, rng: random.Random, count: int) -> list[str]:
    return rng.choices(info.vocabulary, cum_weights=info.cum_weights, k=count)


def keyword_queries(info: SynthInfo, count: int, rng: random.Random) -> list[str]:
    """Queries of 1 to 3 distinct words, drawn by frequency (common words included)."""
    queries = []
    for _ in range(count):
        size = rng.randint(1, 3)
        words: list[str] = []
        while len(words) < size:
            word = _by_frequency(info, rng, 1)[0]
            if word not in words:
                words.append(word)
        queries.append(" ".join(words))
    return queries


def message_queries(info: SynthInfo, count: int, rng: random.Random) -> list[str]:
    """Messages of 8 to 20 words, like a user's request to an agent."""
    function_words = set(info.vocabulary[: info.function_words])
    content = info.vocabulary[info.function_words :]
    messages = []
    for _ in range(count):
        size = rng.randint(8, 20)
        opener = list(rng.choice(MESSAGE_OPENERS))
        words = opener + _by_frequency(info, rng, size - len(opener))
        if all(word in function_words for word in words[len(opener) :]):
            words[-1] = rng.choice(content[:2000])  # name at least one real topic
        words[0] = _capital(words[0])
        question = bool(opener) and opener[0] != "please"
        messages.append(" ".join(words) + ("?" if question else "."))
    return messages


# --- command line ----------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.synthvault", description=__doc__)
    parser.add_argument("path", type=Path)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--deprecated", default=None, help="deprecated string to plant")
    parser.add_argument("--deprecated-count", type=int, default=0)
    parser.add_argument("--pins", type=int, default=0)
    parser.add_argument("--anchored", type=int, default=0)
    parser.add_argument("--repo-files", type=int, default=0)
    parser.add_argument("--sampler", choices=("auto", "numpy", "python"), default="auto")
    args = parser.parse_args(argv)
    spec = SynthSpec(
        n=args.n,
        seed=args.seed,
        deprecated_string=args.deprecated,
        deprecated_count=args.deprecated_count,
        pins=args.pins,
        anchored=args.anchored,
        repo_files=args.repo_files,
        sampler=args.sampler,
    )
    started = time.perf_counter()
    try:
        info = generate(args.path, spec)
    except (ValueError, FileExistsError) as error:
        print(f"synthvault: {error}", file=sys.stderr)
        return 2
    seconds = time.perf_counter() - started
    summary = {
        "n": spec.n,
        "seed": spec.seed,
        "seconds": round(seconds, 3),
        "bytes": info.bytes,
        "sampler": info.sampler,
        "path": str(info.root),
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
