"""Reading memories from the index: by id, path or rowid, pins, typed facts, and search."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence, Set

from memoryctl import relations, search_query
from memoryctl.memory import Memory, normalized
from memoryctl.storage.index_connection import IndexConnection
from memoryctl.storage.index_format import NEWEST_FIRST, TYPED_FACT, source_ref
from memoryctl.storage.parsing import memory_from_doc

# How many matches of a query of common words are sorted by date (`_newest_matches`).
RECENT_CANDIDATES = 2000
# How many of the newest memories that say "my" and a relation's words are read for
# the name they give it; a relation whose word is in more memories than
# `RELATION_POSTINGS` is not looked up (finding its statements would be slow).
RELATION_CANDIDATES = 50
RELATION_POSTINGS = search_query.COMMON_POSTINGS
# How many searches an open index remembers while it is unchanged.
SEARCHES_REMEMBERED = 2048
_SEARCHED_LOCK = threading.Lock()
# A message's best match is "clearly ahead" when its BM25 score is this many times the
# next one's.
HOP_MARGIN = 1.2


class IndexReads(IndexConnection):
    """Memories by reference, and ranked search."""

    # The memory count, with the generation it was counted at.
    _counted: tuple[int, int] | None = None
    # How many memories the index held when the document frequencies were counted.
    _df_count: int = 0
    # The searches of one generation, the latest last (see `search_rows`).
    _searched: tuple[int, OrderedDict[tuple[object, ...], tuple[int, ...]]] | None = None

    # --- reading --------------------------------------------------------------------

    def get(self, mid: str) -> Memory | None:
        found = self._memories(
            "SELECT doc, body FROM notes WHERE mid=? ORDER BY path LIMIT 1", (mid,)
        )
        return found[0] if found else None

    def get_many(self, mids: Iterable[str]) -> dict[str, Memory]:
        mids = list(dict.fromkeys(mids))
        result: dict[str, Memory] = {}
        for start in range(0, len(mids), 500):
            part = mids[start : start + 500]
            marks = ",".join("?" * len(part))
            for memory in self._memories(
                f"SELECT doc, body FROM notes WHERE mid IN ({marks}) ORDER BY path DESC", part
            ):
                result[memory.id] = memory
        return result

    def files_of(self, mids: Iterable[str]) -> dict[str, tuple[str, str]]:
        """The path and SHA-256 of the file of each of these ids, as last indexed (the
        file `get_many` reads, when files share an id): what a proposal records of its
        targets, without reading their documents or their files."""
        mids = list(dict.fromkeys(mids))
        result: dict[str, tuple[str, str]] = {}
        for start in range(0, len(mids), 500):
            part = mids[start : start + 500]
            marks = ",".join("?" * len(part))
            for mid, path, sha in self._execute(
                f"SELECT mid, path, sha FROM notes WHERE mid IN ({marks}) ORDER BY path DESC",
                part,
            ):
                result[mid] = (path, sha)
        return result

    def with_ids(self, mids: Iterable[str]) -> dict[str, list[Memory]]:
        """Every file with each of these ids, in path order: usually one; two or more
        when files share an id (which `doctor` reports)."""
        mids = list(dict.fromkeys(mids))
        result: dict[str, list[Memory]] = {}
        for start in range(0, len(mids), 500):
            part = mids[start : start + 500]
            marks = ",".join("?" * len(part))
            for memory in self._memories(
                f"SELECT doc, body FROM notes WHERE mid IN ({marks}) ORDER BY path", part
            ):
                result.setdefault(memory.id, []).append(memory)
        return result

    def by_rowids(self, rowids: Sequence[int]) -> list[Memory]:
        if not rowids:
            return []
        marks = ",".join("?" * len(rowids))
        rows = self._execute(f"SELECT rowid, doc, body FROM notes WHERE rowid IN ({marks})", rowids)
        by_id = {rowid: memory_from_doc(doc, body) for rowid, doc, body in rows}
        return [by_id[r] for r in rowids if r in by_id]

    def by_path(self, relpath: str) -> Memory | None:
        found = self._memories("SELECT doc, body FROM notes WHERE path=?", (relpath,))
        return found[0] if found else None

    def resolve(self, ref: str) -> list[Memory]:
        """Memories whose id is `ref`, or starts with it, or whose path is `ref`."""
        exact = self._memories("SELECT doc, body FROM notes WHERE mid=? ORDER BY path", (ref,))
        if exact:
            return exact
        by_path = self.by_path(ref)
        if by_path:
            return [by_path]
        escaped = ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return self._memories(
            "SELECT doc, body FROM notes WHERE mid LIKE ? ESCAPE '\\' ORDER BY mid LIMIT 20",
            (escaped + "%",),
        )

    def file_shas(self, mids: Sequence[str]) -> dict[str, str]:
        """The hash of each memory's file as the index last read it (the index is synced
        when a command opens the vault, so this is the file on disk)."""
        return {mid: sha for mid, (_, sha) in self.files_of(mids).items()}

    def derived_children(self, sources: Iterable[str]) -> dict[str, list[str]]:
        """The ids of the memories derived from each of these (a `lineage.Children`)."""
        sources = list(sources)
        found: dict[str, list[str]] = {}
        for start in range(0, len(sources), 500):
            part = sources[start : start + 500]
            rows = self._execute(
                "SELECT d.source, n.mid FROM derivations d JOIN notes n ON n.rowid = d.note "
                f"WHERE d.source IN ({','.join('?' * len(part))})",
                part,
            )
            for source, child in rows:
                found.setdefault(source, []).append(child)
        return found

    def ids_and_bodies(self) -> list[tuple[str, str]]:
        """(id, body) of every file, in the order they were indexed."""
        return self._execute("SELECT mid, body FROM notes ORDER BY rowid")

    def pins(self) -> list[Memory]:
        return self._memories(
            # `pinned = 1`, not a bare `pinned`: only a comparison can use the index, and
            # a scan of 100,000 rows takes 60 ms on every bundle.
            "SELECT doc, body FROM notes WHERE pinned = 1 AND broken IS NULL "
            "ORDER BY pin_order IS NULL, pin_order, created, mid"
        )

    def facts_holding(
        self, subjects: Sequence[str], predicates: Sequence[str], values: Iterable[str]
    ) -> list[Memory]:
        """Current typed facts with these subjects and predicates that hold one of these
        values, all compared as facts compare them (`memory.normalized`).

        Read from the typed-fact index by value: a subject like `user` can hold thousands
        of facts, and visiting them all took most of a bundle's time.
        """
        keys = sorted({normalized(v) for v in values})
        subject_keys = sorted({normalized(s) for s in subjects})
        predicate_keys = sorted({normalized(p) for p in predicates})
        if not subject_keys or not predicate_keys or not keys:
            return []
        marks = ",".join
        # `+status` keeps SQLite on the typed-fact index.
        return self._memories(
            f"SELECT doc, body FROM notes WHERE subject_key IN ({marks('?' * len(subject_keys))}) "
            f"AND predicate_key IN ({marks('?' * len(predicate_keys))}) "
            f"AND value_key IN ({marks('?' * len(keys))}) AND {TYPED_FACT} "
            "AND +status = 'active' AND broken IS NULL",
            [*subject_keys, *predicate_keys, *keys],
        )

    def search_rows(
        self,
        query: str,
        *,
        limit: int = 20,
        statuses: Sequence[str] | None = ("active",),
        message: bool = False,
    ) -> list[int]:
        """Rowids of the best matches for a query (or a message to an agent), best first.

        A message that speaks of "my sister" also asks for the person the vault's
        memories say is the sister (`relations`).

        Remembered for the index's generation: a server asked the same question again
        (an agent's recall, a turn's message) answers without ranking, and any commit to
        the index, from any process, forgets every answer."""
        generation = self.generation()
        key = (query, limit, None if statuses is None else tuple(statuses), message)
        with _SEARCHED_LOCK:
            searched = self._searched
            if searched is None or searched[0] != generation:
                searched = self._searched = (generation, OrderedDict())
            hit = searched[1].get(key)
            if hit is not None:
                searched[1].move_to_end(key)
                return list(hit)
        rows = self._search_rows(query, limit, statuses, message)
        with _SEARCHED_LOCK:
            searched[1][key] = tuple(rows)
            if len(searched[1]) > SEARCHES_REMEMBERED:
                searched[1].popitem(last=False)
        return rows

    def _search_rows(
        self, query: str, limit: int, statuses: Sequence[str] | None, message: bool
    ) -> list[int]:
        if message:
            query = " ".join([query, *self._relatives(query)])
        return self._rows(query, limit, statuses, message, hop=message)

    def _rows(
        self,
        query: str,
        limit: int,
        statuses: Sequence[str] | None,
        message: bool,
        *,
        hop: bool = False,
    ) -> list[int]:
        """`search_rows` once the message's relations are named. With `hop`, a message
        that names no one whose best match, clearly ahead of the next, is a turn someone
        spoke asks again with that person's name: "the person who grows courgettes: what
        else did he say?" is asked of Felix, whose turns that match only his name then
        rank longest first among the matches of both (`_longest_first`)."""
        plan = search_query.plan(
            query, self._document_frequency, self._note_count(), message=message
        )
        if plan is None:
            return []
        if plan.by_recency:
            return self._newest_matches(plan.match, limit, statuses)
        # A message reads twice as many matches as it returns: those past `limit` may be
        # turns that matched only the name of the person it names (`_longest_first`).
        scored = self._ranked(plan, limit, statuses, keep=2 * limit if message else limit)
        wide, scored = scored, scored[:limit]
        ranked = [rowid for rowid, _ in scored]
        if not message:
            return ranked
        # Only a match on the message's topic brings its next turns or counts as spoken by
        # a person the message names: a match on nothing but the person's name, or on
        # words in most memories (in a chat between two people, both names), tells
        # nothing of what is asked.
        telling = [rowid for rowid, score in scored if score < -search_query.NO_WEIGHT]
        turns = self._turns(ranked)
        names = set(search_query.leading_terms(query))
        spoken = {r: turns[r][0] for r in telling if r in turns and turns[r][0] in names}
        if hop and not spoken and telling:
            who, _, title = turns.get(telling[0], (None, None, ""))
            if title.rstrip().endswith("?"):
                who = None  # "Lena: What is the dog called?" is not about Lena
            score = dict(scored)
            ahead = len(telling) == 1 or score[telling[0]] <= HOP_MARGIN * score[telling[1]]
            if who is not None and who not in names and ahead:
                return self._rows(f"{query} {who}", limit, statuses, message)
        topic = search_query.without_names(plan, set(spoken.values()))
        if spoken and topic:
            telling = self._matching(telling, topic)
        elif spoken:
            telling = []
        if spoken:
            scored = self._longest_first(wide, set(spoken.values()), set(telling), topic, turns)
            ranked = [rowid for rowid, _ in scored]
        following = self.next_in_source(
            telling[: search_query.NEXT_TURN_FROM], len(search_query.NEXT_TURN_WEIGHTS)
        )
        leading = {rowid for rowid in telling if rowid in spoken}
        if not following and not leading:
            return ranked[:limit]
        # A turn someone else spoke in a conversation the person asked about is not in
        # says little about them.
        their_chats = {turns[r][1] for r in spoken}
        elsewhere = {
            r
            for r, (who, chat, _) in turns.items()
            if spoken and who is not None and who not in spoken.values()
            if chat not in their_chats
        }
        fused = search_query.with_next_turns(scored, following, leading, elsewhere)
        return self._current(fused, statuses, limit)

    def _relatives(self, message: str) -> list[str]:
        """The names of the people a message calls "my ..." that it does not name, as the
        newest memories that say "my" and the relation's words give them."""
        names: list[str] = []
        said = set(search_query.tokens(message))
        resolved: set[str] = set()
        asked = relations.asked(message, search_query.STOPWORDS)
        df = self._document_frequency([relation[-1] for relation in asked]) if asked else {}
        for relation in asked:
            if relation[0] in resolved:
                continue  # "my best friend" named them; "my best" asks nothing more
            if df[relation[-1]] > RELATION_POSTINGS:
                continue  # a word in thousands of memories ("my code") names no one
            words = " ".join(search_query.match_term(t) for t in ("my", *relation))
            match = f"NEAR({words}, {relations.MOST_WORDS - 1})"
            rows = self._execute(
                "SELECT body FROM notes WHERE rowid IN (SELECT rowid FROM note_fts "
                "WHERE note_fts MATCH ? ORDER BY rowid DESC LIMIT ?)",
                (match, RELATION_CANDIDATES),
            )
            name = relations.named(relation, (body for (body,) in rows), search_query.STOPWORDS)
            if name is None:
                continue
            resolved.add(relation[0])
            if not set(search_query.tokens(name)) <= said:
                names.append(name)
                said |= set(search_query.tokens(name))
        return names

    def _longest_first(
        self,
        scored: list[tuple[int, float]],
        names: Set[str],
        on_topic: Set[int],
        topic: str | None,
        turns: dict[int, tuple[str | None, str | None, str]],
    ) -> list[tuple[int, float]]:
        """The matches, with the turns spoken by these people that matched nothing but
        their name given the same scores among themselves longest first: BM25 ranks such
        turns by their shortness alone ("Joost: Ha, classic." first), and the longer says
        more of them. `turns` learns who spoke the matches it did not know."""
        turns.update(self._turns([rowid for rowid, _ in scored if rowid not in turns]))
        theirs = [rowid for rowid, _ in scored if turns.get(rowid, (None,))[0] in names]
        topical = set(on_topic) | set(self._matching(theirs, topic) if topic and theirs else ())
        idle = [rowid for rowid in theirs if rowid not in topical]
        if not idle:
            return scored
        marks = ",".join("?" * len(idle))
        sizes = dict(
            self._execute(f"SELECT rowid, length(body) FROM notes WHERE rowid IN ({marks})", idle)
        )
        return search_query.longest_first(scored, sizes)

    def _turns(self, rowids: Sequence[int]) -> dict[int, tuple[str | None, str | None, str]]:
        """Who spoke each of these memories, if it is a turn of a conversation ("Ines:
        ..." is by "ines"), its source and its title."""
        if not rowids:
            return {}
        marks = ",".join("?" * len(rowids))
        rows = self._execute(
            f"SELECT rowid, title, {source_ref()} FROM notes WHERE rowid IN ({marks})", rowids
        )
        return {rowid: (search_query.speaker(title), ref, title) for rowid, title, ref in rows}

    def _matching(self, rowids: Sequence[int], match: str) -> list[int]:
        """Those of these memories that a full-text query matches, in the same order."""
        marks = ",".join("?" * len(rowids))
        rows = self._execute(
            f"SELECT rowid FROM note_fts WHERE note_fts MATCH ? AND rowid IN ({marks})",
            [match, *rowids],
        )
        found = {rowid for (rowid,) in rows}
        return [rowid for rowid in rowids if rowid in found]

    def _ranked(
        self,
        plan: search_query.QueryPlan,
        limit: int,
        statuses: Sequence[str] | None,
        *,
        keep: int | None = None,
    ) -> list[tuple[int, float]]:
        """The current matches of a plan with their BM25 scores (lower is better), best
        first: at least `limit` of them where there are so many, and up to `keep` of
        those the first read brought."""
        sql = "SELECT rowid, bm25(note_fts, 4.0, 1.0) AS score FROM note_fts WHERE note_fts MATCH ?"
        params: list[object] = [plan.match]
        if plan.estimate > search_query.RANK_CAP:
            floor = self._execute(
                "SELECT rowid FROM note_fts WHERE note_fts MATCH ? "
                "ORDER BY rowid DESC LIMIT 1 OFFSET ?",
                (plan.match, search_query.RANK_CAP - 1),
            )
            if floor:
                sql += " AND rowid >= ?"
                params.append(floor[0][0])
        order = " ORDER BY score"
        # Rank inside the full-text index alone, then drop what the status filter
        # excludes; joining every match to its row first costs more than the ranking.
        fetch = limit * 3 + 20
        while True:
            ranked = dict(self._execute(sql + order + " LIMIT ?", [*params, fetch]))
            kept = self._current(list(ranked), statuses, keep or limit)
            if len(kept) >= limit or len(ranked) < fetch:
                return [(rowid, ranked[rowid]) for rowid in kept]
            fetch *= 4

    def next_in_source(self, rowids: Sequence[int], count: int = 1) -> dict[int, list[int]]:
        """For each of these memories that has a source, the next `count` memories from
        that source (the following turns of a conversation), by `created`."""
        if not rowids:
            return {}
        marks = ",".join("?" * len(rowids))
        this, other = source_ref("n"), source_ref("m")
        rows = self._execute(
            f"SELECT n.rowid, (SELECT group_concat(rowid) FROM (SELECT m.rowid FROM notes m "
            f"WHERE {other} = {this} AND {other} IS NOT NULL AND m.created > n.created "
            f"ORDER BY m.created LIMIT ?)) FROM notes n "
            f"WHERE n.rowid IN ({marks}) AND {this} IS NOT NULL",
            [count, *rowids],
        )
        return {
            rowid: [int(r) for r in following.split(",")] for rowid, following in rows if following
        }

    def _newest_matches(self, match: str, limit: int, statuses: Sequence[str] | None) -> list[int]:
        """A query of common words: its newest current matches, by `created`.

        Rowids follow the order files were indexed in (after a rebuild, their paths), so
        the full-text index's own order is not the date. Up to `RECENT_CANDIDATES` of the
        most recently indexed matches are sorted by date: every match in a vault of a few
        thousand memories; at 100,000, recently indexed ones, in a few milliseconds.
        """
        where = "broken IS NULL"
        params: list[object] = []
        if statuses is not None:
            where += f" AND status IN ({','.join('?' * len(statuses))})"
            params += list(statuses)
        # Walking the list's own index newest first until enough matches are found reads
        # a few hundred index entries; sorting the candidates instead read every one's
        # row (7 to 12 ms at 100,000 memories, against 1 to 4).
        rows = self._execute(
            f"SELECT rowid FROM notes INDEXED BY ix_notes_newest WHERE {where} "
            "AND rowid IN (SELECT rowid FROM note_fts "
            "WHERE note_fts MATCH ? ORDER BY rowid DESC LIMIT ?) "
            f"ORDER BY {NEWEST_FIRST} LIMIT ?",
            [*params, match, RECENT_CANDIDATES, limit],
        )
        return [rowid for (rowid,) in rows]

    def _current(
        self, rowids: list[int], statuses: Sequence[str] | None, limit: int | None = None
    ) -> list[int]:
        """Those of these memories that are not broken and have one of these statuses, in
        the same order; with `limit`, only the first that many, looked up that many at a
        time (the best matches are nearly always current, and each lookup reads a row)."""
        step = max(1, len(rowids) if limit is None else limit)
        kept: list[int] = []
        for start in range(0, len(rowids), step):
            part = rowids[start : start + step]
            marks = ",".join("?" * len(part))
            sql = f"SELECT rowid FROM notes WHERE rowid IN ({marks}) AND broken IS NULL"
            params: list[object] = list(part)
            if statuses is not None:
                sql += f" AND status IN ({','.join('?' * len(statuses))})"
                params += list(statuses)
            ok = {r for (r,) in self._execute(sql, params)}
            kept += [r for r in part if r in ok]
            if limit is not None and len(kept) >= limit:
                return kept[:limit]
        return kept

    def search(self, query: str, *, limit: int = 20, include_retired: bool = False) -> list[Memory]:
        statuses = None if include_retired else ("active",)
        return self.by_rowids(self.search_rows(query, limit=limit, statuses=statuses))

    def _note_count(self) -> int:
        """How many memories the index holds, counted again only once it has changed:
        counting 100,000 rows costs more than half a millisecond of every search."""
        key = self.generation()
        if self._counted is None or self._counted[0] != key:
            self._counted = (key, self._execute("SELECT count(*) FROM notes")[0][0])
        return self._counted[1]

    def _document_frequency(self, terms: Sequence[str]) -> dict[str, int]:
        """How many memories contain each term, remembered between searches.

        Counting a term's matches is cheap for rare terms and a few milliseconds for the
        commonest; the counts only steer the query plan, so they may lag a few edits. They
        are counted again once the index grew or shrank by more than a hundredth since
        they were, whichever process changed it (a server's worker never syncs itself).
        """
        count = self._note_count()
        if abs(count - self._df_count) * 100 > count:
            self._df_cache.clear()
            self._df_count = count
        missing = [t for t in dict.fromkeys(terms) if t not in self._df_cache]
        if missing:
            # One statement for every term not yet counted.
            counted = "(SELECT count(*) FROM note_fts WHERE note_fts MATCH ?)"
            counts = self._execute(
                "SELECT " + ", ".join([counted] * len(missing)),
                [search_query.match_term(t) for t in missing],
            )[0]
            for term, found in zip(missing, counts, strict=True):
                # A term counted as absent is not remembered: the plan drops it, so a
                # remembered 0 would hide the term's first memory from every later search.
                if found:
                    self._df_cache[term] = found
        return {term: self._df_cache.get(term, 0) for term in terms}
