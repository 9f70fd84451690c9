"""Recall quality: does the bundle carry the memories that answer a question?

For each question the bundle is built through `context_bundle`, the one entry point
every face uses, and its recalled memories are read in order. A memory counts as found
at rank r when it is the r-th recalled memory or is on a `now:` line beneath it (a
correction) or a `newer` line (a newer memory that contests it, shown in full there and
held out of the list below); a pinned memory is always in context, so it counts at rank 1. Per
question, recall@k is the share of its answer memories found within rank k; MRR is one
over the rank of the first one found (0 when none is within 20). The figures are the
means over the questions, overall and by kind of question.

Two baselines rank the same memories with a plain SQLite FTS5 table of their text: the
OR of the question's non-stop words, top 20 by BM25, with the `unicode61` tokenizer
("naive") and with `porter unicode61`. They know nothing of pins or corrections.

Data sets:
- the conversational set in `bench/data/conversations.json` (chats and notes, with
  questions of five kinds; see `bench/data/make_conversations.py`);
- the Chinese, Japanese and Korean set in `bench/data/cjk.json` (facts a person told in
  those languages and questions in the same language; written for this benchmark), with
  a third baseline beside the two: FTS5's `trigram` tokenizer, asked the OR of the
  question's three-character strings (so it cannot find a word of two characters);
- the Thai, Lao, Khmer and Burmese set in `bench/data/southeast_asian.json` (the same
  kind of facts and questions, written for this benchmark), with the same baselines;
- Letta's core-memory-update set, read where it lies (`../shared/data/
  letta-core-memory-update/` beside the project, or `$MEMORYCTL_LETTA_DIR`), at vault
  sizes of 10, 100 and 2,000 facts. Without the folder the set is skipped, and said so.

With `--n` of 100,000 or more, every set is also asked in one vault filled up to N
memories with synthetic ones from `bench/synthvault.py`.

    python -m bench.recall_quality --n 1000
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.common import bench_main, fresh_cache, log, machine, percentiles, synth_vault
from bench.synthvault import SynthSpec
from memoryctl.context import context_bundle
from memoryctl.search_query import STOPWORDS, tokens
from memoryctl.storage import notefile
from memoryctl.storage.vault import Vault

ROOT = Path(__file__).resolve().parents[1]
CONVERSATIONS = ROOT / "bench" / "data" / "conversations.json"
CJK = ROOT / "bench" / "data" / "cjk.json"
SOUTHEAST_ASIAN = ROOT / "bench" / "data" / "southeast_asian.json"
LETTA_DIR = ROOT.parent / "shared" / "data" / "letta-core-memory-update"
LETTA_SIZES = (10, 100, 2000)
# The 100,000-memory vault is built only when asked for that many.
LARGE = 100_000
# Below this N (the CI smoke run), Letta's questions are asked of every fourth fact set
# only, so the run stays well under a minute; the vaults keep their full sizes.
EVERY_SET_FROM = 10_000
SMOKE_STRIDE = 4
KS = (5, 10, 20)
ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
# The bench profile recalls 20 memories with room for all of them, so the figures
# measure the ranking rather than the token budget.
CONFIG = """[git]
autocommit = false

[profiles.bench]
recall = 20
budget = 1000000
"""


@dataclass(frozen=True)
class Case:
    question: str
    kind: str
    answers: frozenset[str]
    # The conversational questions are split in two by the parity of their number ("q001"
    # is odd), a split chosen before the steps it judges were measured: a ranking step is
    # tuned on the even half and kept only if it helps the odd one too.
    half: str = ""


@dataclass(frozen=True)
class Note:
    id: str
    body: str
    created: str
    kind: str = "fact"
    pinned: bool = False
    tags: tuple[str, ...] = ()
    deprecates: tuple[str, ...] = ()
    source: str = ""


@dataclass(frozen=True)
class Corpus:
    name: str
    notes: tuple[Note, ...]
    cases: tuple[Case, ...]


# --- data sets ------------------------------------------------------------------------


def conversations() -> Corpus:
    data = json.loads(CONVERSATIONS.read_text(encoding="utf-8"))
    notes = tuple(
        Note(
            m["id"],
            m["body"],
            m["created"],
            m["kind"],
            m["pinned"],
            tuple(m["tags"]),
            tuple(m["deprecates"]),
            m["source"],
        )
        for m in data["memories"]
    )
    cases = tuple(
        Case(q["question"], q["kind"], frozenset(q["answers"]), _half(q["id"]))
        for q in data["questions"]
    )
    return Corpus("conversations", notes, cases)


def unspaced(name: str, path: Path) -> Corpus:
    """A set of memories and questions in languages written without spaces."""
    data = json.loads(path.read_text(encoding="utf-8"))
    notes = tuple(Note(m["id"], m["body"], m["created"]) for m in data["memories"])
    cases = tuple(
        Case(q["question"], q["kind"], frozenset(q["answers"])) for q in data["questions"]
    )
    return Corpus(name, notes, cases)


def unspaced_sets() -> list[tuple[str, Corpus]]:
    """Each set written without spaces, with the label its figures are logged under."""
    return [
        ("Chinese, Japanese, Korean", unspaced("cjk", CJK)),
        ("Thai, Lao, Khmer, Burmese", unspaced("southeast_asian", SOUTHEAST_ASIAN)),
    ]


def _half(question_id: str) -> str:
    return "even" if int(question_id.lstrip("q")) % 2 == 0 else "odd"


def letta_dir() -> Path:
    return Path(os.environ.get("MEMORYCTL_LETTA_DIR") or LETTA_DIR)


def letta_sets() -> list[Corpus] | None:
    """One corpus per fact set of ten, in the file's order; None when the data is absent."""
    path = letta_dir() / "core_memory_update.jsonl"
    if not path.is_file():
        return None
    sets: dict[tuple[str, ...], list[Case]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        extra = row["agent_args"]["extra"]
        facts = tuple(extra["facts"])
        answers = frozenset(_fact_id(facts[i]) for i in extra["supporting_fact_indices"])
        sets.setdefault(facts, []).append(Case(row["input"], "fact", answers))
    corpora = []
    for number, (facts, cases) in enumerate(sets.items()):
        notes = tuple(
            Note(_fact_id(fact), fact, f"2025-01-{1 + number % 28:02d}T09:{i:02d}:00Z")
            for i, fact in enumerate(facts)
        )
        corpora.append(Corpus(f"letta-{number}", notes, tuple(cases)))
    return corpora


def _fact_id(fact: str) -> str:
    number = int.from_bytes(hashlib.sha1(fact.encode("utf-8")).digest()[:7], "big")
    return "".join(ID_ALPHABET[(number >> (5 * i)) & 31] for i in reversed(range(10)))


def merged(name: str, corpora: Sequence[Corpus]) -> Corpus:
    return Corpus(
        name,
        tuple(n for c in corpora for n in c.notes),
        tuple(q for c in corpora for q in c.cases),
    )


# --- a vault of a corpus -------------------------------------------------------------------


def write_notes(root: Path, notes: Iterable[Note], folder: str = "memories") -> None:
    """Each note as a file in the layout `memoryctl add` writes."""
    target = root / folder
    target.mkdir(parents=True, exist_ok=True)
    pin_order = 0
    for note in notes:
        first = note.body.splitlines()[0].strip(" #")
        title = first if len(first) <= 72 else first[:72].rsplit(" ", 1)[0] + "…"
        data: dict[str, object] = {
            "id": note.id,
            "title": title,
            "kind": note.kind,
            "status": "active",
        }
        if note.pinned:
            pin_order += 1
            data["pinned"] = True
            data["pin_order"] = pin_order
        data["created"] = note.created
        if note.tags:
            data["tags"] = list(note.tags)
        data["namespace"] = "default"
        if note.source:
            kind, _, ref = note.source.partition(":")
            data["source"] = {"kind": kind, "ref": ref} if ref else {"kind": kind}
        if note.deprecates:
            data["deprecates"] = list(note.deprecates)
        (target / f"{note.id}.md").write_bytes(notefile.new_note(data, note.body).to_bytes())


def fresh_vault(root: Path, notes: Iterable[Note]) -> Path:
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    (root / "memoryctl.toml").write_text(CONFIG, encoding="utf-8")
    write_notes(root, notes)
    return root


# --- scoring -----------------------------------------------------------------------------


def bundle_ranks(vault: Vault, question: str) -> dict[str, int]:
    """Each memory the bundle carries, with its rank (a pin is always in context: rank 1)."""
    bundle = context_bundle(vault, profile="bench", message=question)
    ranks: dict[str, int] = {}
    for position, entry in [(1, e) for e in bundle.pinned] + list(enumerate(bundle.recalled, 1)):
        newer = (b.memory.id for b in entry.newer if b.memory is not None)
        for mid in (entry.memory.id, *(c.id for c in entry.now), *newer):
            ranks.setdefault(mid, position)
    return ranks


class Scores:
    """Recall@k and MRR, summed over questions, overall and by kind."""

    def __init__(self) -> None:
        self.sums: dict[str, list[float]] = {}

    def add(self, case: Case, ranks: dict[str, int]) -> None:
        found = [ranks[a] for a in case.answers if a in ranks]
        row = [sum(1 for r in found if r <= k) / len(case.answers) for k in KS]
        best = min((r for r in found if r <= KS[-1]), default=None)
        row.append(1 / best if best else 0.0)
        for key in ("all", case.kind, *([f"half:{case.half}"] if case.half else [])):
            total = self.sums.setdefault(key, [0.0] * (len(KS) + 2))
            for i, value in enumerate(row):
                total[i] += value
            total[-1] += 1

    def figures(self) -> dict[str, dict[str, float]]:
        result = {}
        for key, total in sorted(self.sums.items(), key=lambda kv: (kv[0] != "all", kv[0])):
            count = total[-1]
            row = {f"recall@{k}": round(100 * total[i] / count, 1) for i, k in enumerate(KS)}
            row["mrr"] = round(total[len(KS)] / count, 3)
            row["questions"] = int(count)
            result[key] = row
        return result


def baseline(texts: Sequence[tuple[str, str]], tokenizer: str) -> sqlite3.Connection:
    """A plain FTS5 table of (id, text) pairs."""
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE t USING fts5(mid UNINDEXED, text, tokenize='{tokenizer}')")
    db.executemany("INSERT INTO t(mid, text) VALUES (?, ?)", texts)
    return db


def baseline_ranks(
    db: sqlite3.Connection, question: str, *, trigrams: bool = False
) -> dict[str, int]:
    words = list(dict.fromkeys(t for t in tokens(question) if t not in STOPWORDS))
    # Split as `unicode61` splits (at a mark: a Thai vowel sign ends its term there),
    # which `tokens` does not for the scripts the index keeps whole.
    words = list(dict.fromkeys(part for word in words for part in _UNICODE61.findall(word)))
    if trigrams:
        words = list(dict.fromkeys(w[i : i + 3] for w in words for i in range(len(w) - 2)))
    if not words:
        return {}
    match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
    rows = db.execute(
        "SELECT mid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (match, KS[-1])
    ).fetchall()
    return {mid: rank for rank, (mid,) in enumerate(rows, 1)}


_UNICODE61 = re.compile(r"[^\W_]+")
BASELINES = {"bm25_naive": "unicode61", "bm25_porter": "porter unicode61"}
# Only beside the Chinese, Japanese and Korean set: what a side table of trigrams finds.
TRIGRAM = {"bm25_trigram": "trigram"}


@dataclass
class Run:
    """The scores of the bundle and the baselines over several vaults of one size."""

    bundle: Scores
    baselines: dict[str, Scores]
    times: list[float]
    # Each baseline's tokenizer, by name.
    tokenizers: dict[str, str]
    vaults: int = 0
    memories: int = 0

    @classmethod
    def new(cls, baselines: dict[str, str] = BASELINES) -> Run:
        return cls(Scores(), {name: Scores() for name in baselines}, [], dict(baselines))

    def ask(self, vault: Vault, corpus: Corpus) -> None:
        """Ask the corpus's questions of the vault, and of the baselines over its memories."""
        self.vaults += 1
        texts = vault.index.ids_and_bodies()
        self.memories = max(self.memories, len(texts))
        dbs = {name: baseline(texts, tok) for name, tok in self.tokenizers.items()}
        for case in corpus.cases:
            started = time.perf_counter()
            ranks = bundle_ranks(vault, case.question)
            self.times.append(time.perf_counter() - started)
            self.bundle.add(case, ranks)
            for name, db in dbs.items():
                trigrams = self.tokenizers[name] == "trigram"
                self.baselines[name].add(case, baseline_ranks(db, case.question, trigrams=trigrams))

    def figures(self) -> dict[str, object]:
        return {
            "vaults": self.vaults,
            "memories_per_vault": self.memories,
            "bundle": self.bundle.figures(),
            **{name: scores.figures()["all"] for name, scores in self.baselines.items()},
            "bundle_latency": percentiles(self.times),
        }


def ask_in_fresh_vaults(
    workdir: Path, name: str, corpora: Sequence[Corpus], baselines: dict[str, str] = BASELINES
) -> Run:
    """A vault for each corpus, built cold, asked its questions, then removed."""
    run = Run.new(baselines)
    for number, corpus in enumerate(corpora):
        root = fresh_vault(workdir / "recall" / f"{name}-{number}", corpus.notes)
        fresh_cache(workdir, f"recall-{name}-{number}")
        vault = Vault(root)
        try:
            run.ask(vault, corpus)
        finally:
            vault.close()
            shutil.rmtree(root, ignore_errors=True)
            fresh_cache(workdir, f"recall-{name}-{number}")
    return run


def _log_line(label: str, figures: dict[str, object]) -> None:
    bundle = figures["bundle"]["all"]  # type: ignore[index]
    naive = figures["bm25_naive"]  # type: ignore[index]
    porter = figures["bm25_porter"]  # type: ignore[index]
    trigram = figures.get("bm25_trigram")
    log(
        f"{label}: bundle R@5/10/20 {bundle['recall@5']}/{bundle['recall@10']}/"
        f"{bundle['recall@20']} MRR {bundle['mrr']}; naive R@20 {naive['recall@20']}, "
        f"porter R@20 {porter['recall@20']}"
        + (f", trigram R@20 {trigram['recall@20']}" if trigram else "")  # type: ignore[index]
        + "".join(
            f"; {key[5:]} half R@20 {row['recall@20']}"  # type: ignore[index]
            for key, row in figures["bundle"].items()  # type: ignore[attr-defined]
            if key.startswith("half:")
        )
    )


def run(n: int, workdir: Path) -> dict[str, object]:
    started = time.perf_counter()
    chats = conversations()
    figures: dict[str, object] = {
        "benchmark": "recall_quality",
        "memories": n,
        "machine": machine(),
        "targets": {
            "conversations_recall@20": 80,
            "cjk_recall@20": 80,
            "southeast_asian_recall@20": 80,
            "letta_recall@20_every_size": 99,
        },
    }
    conv = ask_in_fresh_vaults(workdir, "conversations", [chats]).figures()
    _log_line(f"conversations ({len(chats.notes)} memories)", conv)
    figures["conversations"] = {str(len(chats.notes)): conv}
    written = []
    for label, words in unspaced_sets():
        found = ask_in_fresh_vaults(workdir, words.name, [words], BASELINES | TRIGRAM).figures()
        _log_line(f"{label} ({len(words.notes)} memories)", found)
        figures[words.name] = {str(len(words.notes)): found}
        written.append(words)

    sets = letta_sets()
    if sets is None:
        log(f"Letta's core-memory-update set is not at {letta_dir()}; skipped")
        figures["letta"] = {"skipped": f"no data at {letta_dir()}"}
    else:
        stride = 1 if n >= EVERY_SET_FROM else SMOKE_STRIDE
        letta: dict[str, object] = {"fact_sets_asked": f"{len(sets[::stride])} of {len(sets)}"}
        for size in LETTA_SIZES:
            per = max(1, size // len(sets[0].notes))
            groups = []
            for start in range(0, len(sets), per):
                group = sets[start : start + per]
                asked = [c for i, c in enumerate(group, start) if i % stride == 0]
                if asked:
                    notes = merged("", group).notes
                    groups.append(Corpus(f"{size}", notes, merged("", asked).cases))
            result = ask_in_fresh_vaults(workdir, f"letta-{size}", groups).figures()
            _log_line(f"letta at {size}", result)
            letta[str(size)] = result
        figures["letta"] = letta

    if n >= LARGE:
        large = _large_vault(workdir, n, chats, written, sets)
        for corpus in (chats, *written):
            figures[corpus.name][str(n)] = large[corpus.name]  # type: ignore[index]
        if sets is not None:
            figures["letta"][str(n)] = large["letta"]  # type: ignore[index]
    figures["seconds"] = round(time.perf_counter() - started, 1)
    return figures


def _large_vault(
    workdir: Path,
    n: int,
    chats: Corpus,
    written: Sequence[Corpus],
    sets: list[Corpus] | None,
) -> dict[str, dict[str, object]]:
    """Every set in one vault filled with synthetic memories up to `n`."""
    facts = merged("letta", sets) if sets else Corpus("letta", (), ())
    filler = n - sum(len(c.notes) for c in (chats, *written, facts))
    info = synth_vault(workdir, f"recall-large-{n}", SynthSpec(n=filler))
    (info.root / "memoryctl.toml").write_text(CONFIG, encoding="utf-8")
    write_notes(info.root, chats.notes, "chats")
    for words in written:
        write_notes(info.root, words.notes, words.name)
    write_notes(info.root, facts.notes, "facts")
    fresh_cache(workdir, f"recall-large-{n}")
    vault = Vault(info.root)
    result: dict[str, dict[str, object]] = {}
    try:
        for corpus in (chats, *written, facts):
            if not corpus.cases:
                continue
            one = Run.new(BASELINES | TRIGRAM if corpus in written else BASELINES)
            one.ask(vault, corpus)
            result[corpus.name] = one.figures()
            _log_line(f"{corpus.name} at {n}", result[corpus.name])
    finally:
        vault.close()
    return result


if __name__ == "__main__":
    bench_main(run, __doc__)
