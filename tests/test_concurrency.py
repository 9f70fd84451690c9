"""Many faces on one vault at once: writers in real processes, one at a time."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from memoryctl.actions import NewMemory, add_memory
from memoryctl.decisions import Change
from memoryctl.doctor import diagnose
from memoryctl.proposals import Suggestion
from memoryctl.storage import gitrepo, writelock
from memoryctl.storage.vault import Vault, VaultBusy


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, check=True
    ).stdout


def memoryctl(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "memoryctl", "--vault", str(root), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def cli_json(root: Path, *args: str) -> list[dict]:
    done = subprocess.run(
        [sys.executable, "-m", "memoryctl", "--vault", str(root), "--json", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def finished(process: subprocess.Popen) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=120)
    return process.returncode, out, err


HOLD_THE_LOCK = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from memoryctl.storage.vault import Vault
    vault = Vault(Path(sys.argv[1]))
    with vault.writing():
        print("holding", flush=True)
        time.sleep(float(sys.argv[2]))
    """
)


def holding_the_lock(root: Path, seconds: float) -> subprocess.Popen:
    """Another process that holds the vault's write lock for a while."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_THE_LOCK, str(root), str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
    return holder


WRITER = textwrap.dedent(
    """
    import json, subprocess, sys
    vault, writer, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    failed = []
    for n in range(count):
        done = subprocess.run(
            [sys.executable, "-m", "memoryctl", "--vault", vault, "add",
             f"Writer {writer} note {n}", "--tag", "race", "--pin"],
            capture_output=True, text=True,
        )
        # A rebuilt index is announced on stderr; anything else there is a failure.
        said = [line for line in done.stderr.splitlines() if not line.startswith("The index")]
        if done.returncode or said:
            failed.append(done.stderr)
    print(json.dumps(failed))
    """
)


def test_parallel_writers_in_real_processes_each_memory_exists_once_and_is_committed(vault_dir):
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(vault_dir), str(w), "5"],
            stdout=subprocess.PIPE,
            text=True,
        )
        for w in range(4)
    ]
    reindexing = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys\n"
            "for _ in range(3):\n"
            "    done = subprocess.run([sys.executable, '-m', 'memoryctl', '--vault', sys.argv[1],"
            " 'reindex', '--full'], capture_output=True, text=True)\n"
            "    print(done.returncode, done.stderr.strip(), flush=True)",
            str(vault_dir),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    failures = [json.loads(finished(w)[1]) for w in writers]
    assert failures == [[], [], [], []]
    assert finished(reindexing)[1].splitlines() == ["0 "] * 3
    titles = [m["title"] for m in cli_json(vault_dir, "list")]
    expected = sorted(f"Writer {w} note {n}" for w in range(4) for n in range(5))
    assert sorted(titles) == expected
    assert git(vault_dir, "status", "--porcelain") == ""
    pins = cli_json(vault_dir, "list", "--pinned")
    assert sorted(m["pin_order"] for m in pins) == list(range(1, 21))
    subjects = git(vault_dir, "log", "--format=%s").splitlines()
    assert sorted(s for s in subjects if s.startswith("Add memory:")) == sorted(
        f"Add memory: {t}" for t in expected
    )


def test_faces_pinning_at_once_never_share_a_pin_order(vault_dir, cli):
    v = ("--vault", str(vault_dir))
    ids = [cli(*v, "add", f"Rule number {n}").out.strip() for n in range(6)]
    pinners = [memoryctl(vault_dir, "pin", mid) for mid in ids]
    assert [finished(p)[0] for p in pinners] == [0] * 6
    orders = [m["pin_order"] for m in cli(*v, "list", "--pinned", "--json").json()]
    assert sorted(orders) == [1, 2, 3, 4, 5, 6]


# A CLI command run in-process once a signal file appears, so that several processes,
# started ahead, reach the same moment of the same command together.
AT_THE_SIGNAL = textwrap.dedent(
    """
    import contextlib, io, json, os, sys, time
    from memoryctl.cli import main
    signal, args = sys.argv[1], sys.argv[2:]
    print("ready", flush=True)
    while not os.path.exists(signal):
        time.sleep(0.002)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    print(json.dumps([code, out.getvalue(), err.getvalue()]))
    """
)


def at_once(root: Path, tmp_path: Path, args: list[str], count: int) -> list[tuple[int, str, str]]:
    """Run one command in `count` processes at the same moment; (code, out, err) each."""
    signal = tmp_path / "go"
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", AT_THE_SIGNAL, str(signal), "--vault", str(root), *args],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(count)
    ]
    for process in processes:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    signal.write_text("go")
    results = [tuple(json.loads(finished(p)[1])) for p in processes]
    signal.unlink()
    return results  # type: ignore[return-value]


def test_agents_proposing_the_same_retirement_at_once_file_it_once(vault_dir, cli, tmp_path):
    v = ("--vault", str(vault_dir))
    for n in range(3):
        mid = cli(*v, "add", f"The staging box is db-{n}").out.strip()
        results = at_once(
            vault_dir,
            tmp_path,
            ["--json", "propose", "retire", mid, "--reason", f"db-{n} was shut down"],
            4,
        )
        assert [(code, err) for code, _, err in results] == [(0, "")] * 4
        assert len({json.loads(out)["id"] for _, out, _ in results}) == 1
    assert len(list((vault_dir / "proposals").glob("*.md"))) == 3
    assert git(vault_dir, "log", "--format=%s").count("Propose: retire") == 3
    assert git(vault_dir, "status", "--porcelain") == ""


def we_moved(root: Path, cli, n: int | str = "") -> tuple[str, Path]:
    """A memory, and one written in an editor and committed by hand that names it in
    `retires`: every face that opens the vault next finds it and proposes the
    retirement. (The old memory's id, the new note's file.)"""
    old = cli("--vault", str(root), "add", f"The office is on Main Street {n}").out.strip()
    note = root / "memories" / "default" / f"moved-{n}.md"
    note.write_text(f"---\nid: moved{n}\ntitle: We moved\nretires: [{old}]\n---\nWe moved.\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "we moved")
    return old, note


def test_faces_running_the_live_checks_at_once_file_each_proposal_once(vault_dir, cli, tmp_path):
    for n in range(3):
        we_moved(vault_dir, cli, n)
        results = at_once(vault_dir, tmp_path, ["list"], 4)
        assert [code for code, _, _ in results] == [0] * 4
        assert not [err for _, _, err in results if "could not run" in err]
    assert len(list((vault_dir / "proposals").glob("*.md"))) == 3
    assert git(vault_dir, "status", "--porcelain") == ""


def test_a_proposal_filed_by_another_face_while_this_one_proposes_is_filed_once(vault_dir, cli):
    """The other face writes its file after this one read the queue and before it chose
    a name, so this one's first name is taken and it chooses the next: under the lock it
    must still see that the same proposal is already filed."""
    mid = cli("--vault", str(vault_dir), "add", "The office is on Main Street").out.strip()
    now = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC)
    moved = Suggestion("retire", (mid,), "we moved", "rule", trigger="moved")
    this_face, other_face = Vault(vault_dir), Vault(vault_dir)
    mine = Change.start(this_face, now)  # reads the queue: nothing filed yet
    theirs = Change.start(other_face, now)
    theirs.propose([moved])
    theirs.commit("Propose: retire")
    assert mine.propose([moved])  # the queue it read says the proposal is new
    mine.commit("Propose: retire")
    this_face.close()
    other_face.close()
    assert len(list((vault_dir / "proposals").glob("*.md"))) == 1
    assert git(vault_dir, "status", "--porcelain") == ""


def test_a_face_whose_checks_find_the_vault_held_puts_them_off_and_carries_on(vault_dir, cli):
    v = ("--vault", str(vault_dir))
    old, _ = we_moved(vault_dir, cli)
    holder = holding_the_lock(vault_dir, 120)  # another face's long write
    try:
        # Its own budget for a write is long; the checks wait only their own short one.
        code, out, err = finished(
            memoryctl(vault_dir, "--json", "list", env={"MEMORYCTL_LOCK_TIMEOUT": "60"})
        )
    finally:
        holder.kill()
        holder.wait()
    assert (code, err) == (0, "")  # no warning: the checks were put off, not failed
    assert {m["id"] for m in json.loads(out)} >= {old, "moved"}
    assert not (vault_dir / "proposals").exists() or not list((vault_dir / "proposals").glob("*"))
    # The next face to open the vault runs them.
    assert cli(*v, "list").code == 0
    assert len(list((vault_dir / "proposals").glob("*.md"))) == 1
    assert git(vault_dir, "status", "--porcelain") == ""


def test_a_writer_that_waits_too_long_is_told_the_vault_is_busy_and_by_whom(vault_dir):
    holder = holding_the_lock(vault_dir, 120)  # killed below; long enough on a slow machine
    try:
        vault = Vault(vault_dir)
        vault.lock_timeout = 0.3
        try:
            add_memory(vault, NewMemory(body="Not now"))
        except VaultBusy as busy:
            assert busy.holder is not None and f"pid {holder.pid}" in busy.holder
            assert busy.waited >= 0.3
        else:
            raise AssertionError("the write did not wait for the other writer")
        vault.close()
        code, _, err = finished(
            memoryctl(vault_dir, "add", "Not now", env={"MEMORYCTL_LOCK_TIMEOUT": "0.3"})
        )
        assert code == 1
        assert err.startswith("memoryctl: the vault is busy (held by ")
        assert f"pid {holder.pid}" in err and "unexpected" not in err
    finally:
        holder.kill()
        holder.wait()
    assert "Not now" not in git(vault_dir, "log", "--format=%s")


def test_a_writer_waits_for_a_short_write_and_then_writes(vault_dir):
    holder = holding_the_lock(vault_dir, 0.5)
    code, _, err = finished(memoryctl(vault_dir, "add", "After the other one"))
    holder.wait()
    assert (code, err) == (0, "")
    assert git(vault_dir, "log", "-1", "--format=%s").strip() == "Add memory: After the other one"
    assert writelock.lock_path(vault_dir.resolve()).parent == vault_dir.resolve() / ".git"


def test_readers_do_not_wait_for_a_writer(vault_dir, cli):
    cli("--vault", str(vault_dir), "add", "Readable while busy")
    holder = holding_the_lock(vault_dir, 30)
    try:
        started = time.monotonic()
        code, out, _ = finished(
            memoryctl(vault_dir, "search", "readable", env={"MEMORYCTL_LOCK_TIMEOUT": "20"})
        )
        assert code == 0 and "Readable while busy" in out
        assert time.monotonic() - started < 20
    finally:
        holder.kill()
        holder.wait()


def _index_files_open(db: Path) -> int:
    """How many of this process's open files are the index (its -wal and -shm aside)."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}") == str(db)
        except OSError:
            continue  # the listing's own descriptor, closed by now
    return count


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="lists open files by /proc")
def test_reader_threads_that_come_and_go_leave_no_open_connections_behind(vault_dir, cli):
    """A server's worker threads retire when idle and new ones start: each reads through
    a connection of its own, and one whose thread has ended is closed, not kept."""
    cli("--vault", str(vault_dir), "add", "Read by many threads")
    vault = Vault(vault_dir)
    try:
        db = Path(vault.index.db_path).resolve()

        def read() -> None:
            assert vault.index.count() >= 1

        for _ in range(30):
            thread = threading.Thread(target=read)
            thread.start()
            thread.join()
        assert _index_files_open(db) <= 3  # the main connection, the last reader, the watcher
    finally:
        vault.close()


# A process that keeps an index open and reads it in a loop until told to stop, then
# says how many memories each read saw and what went wrong.
READ_IN_A_LOOP = textwrap.dedent(
    """
    import json, os, sys
    from pathlib import Path
    from memoryctl.storage.vault import Vault
    vault = Vault(Path(sys.argv[1]))
    stop = Path(sys.argv[2])
    seen, errors = set(), []
    print("reading", flush=True)
    while not stop.exists():
        try:
            seen.add(vault.index.count())
            vault.index.search_rows("street", limit=5)
        except Exception as error:
            errors.append(repr(error))
    seen.add(-1)  # the reads done; what follows is after the reindex
    extra = stop.read_text().strip()
    after = vault.index.resolve(extra) if extra else []
    print(json.dumps({"seen": sorted(seen), "errors": errors[:3], "after": len(after)}))
    """
)


def test_a_full_reindex_leaves_a_reader_in_another_process_reading(vault_dir, cli, tmp_path):
    v = ("--vault", str(vault_dir))
    folder = vault_dir / "memories" / "default"
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(300):
        (folder / f"street-{n}.md").write_text(f"---\nid: street{n}\n---\nLives on street {n}\n")
    assert cli(*v, "reindex").code == 0
    stop = tmp_path / "stop"
    reader = subprocess.Popen(
        [sys.executable, "-c", READ_IN_A_LOOP, str(vault_dir), str(stop)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert reader.stdout is not None and reader.stdout.readline().strip() == "reading"
    for _ in range(3):
        assert cli(*v, "reindex", "--full").code == 0
    # Written after the reindex: a reader still on a deleted index file would not see it.
    added = cli(*v, "add", "Written after the reindex").out.strip()
    ready = tmp_path / "stop.tmp"
    ready.write_text(added)
    ready.replace(stop)  # whole at once: the reader reads the id as soon as it sees the file
    code, out, _ = finished(reader)
    report = json.loads(out)
    assert code == 0 and report["errors"] == []
    # Never an empty or a half-built index: the 300, then the one added after.
    assert set(report["seen"]) <= {-1, 300, 301}
    assert report["after"] == 1


# --- git's own lock ---------------------------------------------------------------------


def test_a_stale_git_lock_is_named_and_the_memory_is_still_saved(vault_dir, cli):
    lock = vault_dir / ".git" / "index.lock"
    lock.write_text("")
    old = time.time() - 600
    os.utime(lock, (old, old))
    result = cli("--vault", str(vault_dir), "add", "Saved anyway")
    assert result.code == 0 and result.out.strip()
    assert "saved but not committed" in result.err
    assert ".git/index.lock was left by a git that stopped 10 min ago" in result.err
    # The core's sentence names no command; the command line adds what to type.
    assert "memoryctl doctor --fix removes .git/index.lock" in result.err
    with pytest.raises(gitrepo.GitLocked) as locked:
        gitrepo.commit(vault_dir, ["memoryctl.toml"], "Touch")
    assert "memoryctl" not in str(locked.value)
    assert cli("--vault", str(vault_dir), "show", result.out.strip()).code == 0


def test_a_commit_waits_for_another_git_to_let_go_of_its_lock(vault_dir, cli):
    lock = vault_dir / ".git" / "index.lock"
    lock.write_text("")
    remover = subprocess.Popen(
        [sys.executable, "-c", f"import os, time; time.sleep(0.5); os.remove({str(lock)!r})"]
    )
    result = cli("--vault", str(vault_dir), "add", "Committed after the wait")
    remover.wait()
    assert result.code == 0 and "not committed" not in result.err
    assert git(vault_dir, "status", "--porcelain") == ""


# --- commits hold only memoryctl's change --------------------------------------------------


def test_a_pin_commits_only_the_pin_and_leaves_the_persons_edit_uncommitted(vault_dir, cli):
    v = ("--vault", str(vault_dir))
    mid = cli(*v, "add", "Deploys go through CI").out.strip()
    relpath = cli(*v, "show", mid, "--json").json()["path"]
    path = vault_dir / relpath
    path.write_text(path.read_text() + "\nA line I added in my editor.\n")
    result = cli(*v, "pin", mid)
    assert result.code == 0
    assert "left yours for you to commit" in result.err and relpath in result.err
    committed = git(vault_dir, "show", f"HEAD:{relpath}")
    assert "pinned: true" in committed and "A line I added" not in committed
    working = path.read_text()
    assert "pinned: true" in working and "A line I added in my editor." in working
    assert git(vault_dir, "status", "--porcelain").strip() == f"M {relpath}"
    diff = git(vault_dir, "diff", "--", relpath)
    assert "+A line I added in my editor." in diff and "pinned" not in diff


def test_the_persons_staged_work_elsewhere_stays_staged_and_out_of_the_commit(vault_dir, cli):
    v = ("--vault", str(vault_dir))
    mid = cli(*v, "add", "Use tabs").out.strip()
    relpath = cli(*v, "show", mid, "--json").json()["path"]
    (vault_dir / relpath).write_text((vault_dir / relpath).read_text() + "\nMine.\n")
    (vault_dir / "notes.txt").write_text("my staged file\n")
    git(vault_dir, "add", "notes.txt")
    assert cli(*v, "pin", mid).code == 0
    assert git(vault_dir, "show", "--name-only", "--format=", "HEAD").split() == [relpath]
    assert "A  notes.txt" in git(vault_dir, "status", "--porcelain")


# --- the watcher and memoryctl's own writes ------------------------------------------------


def test_the_watcher_takes_no_temporary_file_for_a_folder_and_skips_its_own_writes(vault_dir):
    from memoryctl.storage.watch import _is_folder_change, relevant_paths

    vault = Vault(vault_dir)
    memory = add_memory(vault, NewMemory(body="Written here"))
    gone_tmp = str(vault.root / "memories" / "default" / ".note.md.1a2b3c4d.tmp")
    assert not _is_folder_change(vault, gone_tmp)
    assert _is_folder_change(vault, str(vault.root / "memories" / "old-folder"))
    written = str(vault.root / memory.path)
    assert relevant_paths(vault, {(2, written), (2, gone_tmp)}) == []
    (vault.root / memory.path).write_text((vault.root / memory.path).read_text() + "More.\n")
    assert relevant_paths(vault, {(2, written)}) == [memory.path]
    vault.close()


# --- the index's generation: what long-running faces remember of the index -------------


def test_a_search_remembered_by_a_server_finds_what_another_process_added(vault_dir, cli):
    vault = Vault(vault_dir)
    before = vault.index.generation()
    assert vault.index.search_rows("quokkaberry") == []
    added = cli("--vault", str(vault_dir), "add", "The quokkaberry jam is in the pantry")
    assert added.code == 0, added.err
    # No sync in this process: the other one's commit moved the generation, and the
    # remembered answer went with it.
    assert vault.index.generation() != before
    found = vault.index.by_rowids(vault.index.search_rows("quokkaberry"))
    assert [m.id for m in found] == [added.out.strip()]
    vault.close()


def test_the_watcher_tells_its_face_when_another_process_rebuilds_the_index(vault_dir, cli):
    from memoryctl.storage.watch import watch_vault

    assert cli("--vault", str(vault_dir), "add", "Kept across the rebuild").code == 0
    vault = Vault(vault_dir)
    _ = vault.index
    stop = threading.Event()
    batches: list[list[str]] = []

    def run() -> None:
        for _, paths in watch_vault(vault, stop=stop, debounce_ms=50):
            batches.append(paths)
            stop.set()

    watcher = threading.Thread(target=run, daemon=True)
    watcher.start()
    time.sleep(0.3)  # let the watcher register before the rebuild
    assert cli("--vault", str(vault_dir), "reindex", "--full").code == 0
    watcher.join(timeout=30)
    stop.set()
    # No file changed, yet the face is told to read the index again (a batch of no paths).
    assert batches == [[]]
    vault.close()


EDITED = "---\nid: edited0001\ntitle: Edited\ncreated: 2026-01-01\n---\nSaved by an editor\n"


def test_memoryctl_watch_indexes_a_file_saved_as_it_starts(vault_dir):
    watcher = memoryctl(vault_dir, "watch")
    try:
        assert watcher.stderr is not None and watcher.stdout is not None
        assert watcher.stderr.readline().startswith("Watching ")
        # The vault is open and read; the watch is about to begin.
        (vault_dir / "edited.md").write_text(EDITED, encoding="utf-8")
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.append(watcher.stdout.readline()))
        reader.start()
        reader.join(timeout=60)
        assert lines and lines[0].startswith("Re-indexed 1 file"), lines
    finally:
        watcher.kill()
        watcher.wait()
    # Indexed by the watch: the index as it was left, read without syncing.
    assert Vault(vault_dir).stored_index().get("edited0001") is not None


def test_memoryctl_watch_reads_the_vault_again_once_it_watches_and_says_so_only_on_a_change(
    vault_dir, cli, monkeypatch
):
    from memoryctl.storage import watch

    watching = watch.watch_vault

    def first_batch(saving: bool):
        def run(vault, *args, **kwargs):
            if saving:  # saved after the open read the vault: no file event will come for it
                (vault.root / "edited.md").write_text(EDITED, encoding="utf-8")
            stop = threading.Event()
            give_up = threading.Timer(20, stop.set)
            give_up.start()
            try:
                for batch in watching(vault, *args, stop=stop, **kwargs):
                    yield batch
                    return  # the first batch only, then the command ends
            finally:
                give_up.cancel()

        return run

    monkeypatch.setattr(watch, "watch_vault", first_batch(saving=True))
    assert cli("--vault", str(vault_dir), "watch").out == "Re-indexed 1 file.\n"
    assert Vault(vault_dir).stored_index().get("edited0001") is not None

    monkeypatch.setattr(watch, "watch_vault", first_batch(saving=False))
    assert cli("--vault", str(vault_dir), "watch").out == ""
    assert cli("--vault", str(vault_dir), "watch", "--json").out == ""


# --- what a crash leaves, found by doctor ---------------------------------------------------

KILLED_WHILE = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from memoryctl.actions import NewMemory, add_memory
    from memoryctl.storage import gitrepo, vault as vault_module
    from memoryctl.storage.vault import Vault

    def stop_here(*args, **kwargs):
        print("stopped", flush=True)
        time.sleep(600)

    if sys.argv[2] == "identifying":
        from memoryctl.storage.vault_identity import vault_identity

        os.link = stop_here  # the vault's new id is in its temporary file, not yet in place
        vault_identity(Path(sys.argv[1]))
    if sys.argv[2] == "writing":
        os.fsync = stop_here  # the temporary file is written; the rename is not done
    else:
        gitrepo.commit = stop_here  # the memory is written and indexed; not yet committed
    add_memory(Vault(Path(sys.argv[1])), NewMemory(body=f"Cut short while {sys.argv[2]}"))
    """
)


def killed_while(root: Path, stage: str) -> None:
    """A writer killed with SIGKILL at one stage of a write."""
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_WHILE, str(root), stage], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "stopped"
    child.kill()
    child.wait()


def test_doctor_reports_what_a_killed_write_left_and_fix_removes_the_leftovers(vault_dir, cli):
    v = ("--vault", str(vault_dir))
    killed_while(vault_dir, "writing")
    killed_while(vault_dir, "committing")
    lock = vault_dir / ".git" / "index.lock"
    lock.write_text("")
    two_minutes_ago = time.time() - 125
    os.utime(lock, (two_minutes_ago, two_minutes_ago))

    doctor = cli(*v, "doctor")
    assert doctor.code == 1
    # The findings name no command (each face words what to do); the CLI adds its own.
    found = diagnose(Vault(vault_dir))
    assert [f for f in found if "memoryctl " in f.message] == []
    assert {f.path for f in found if f.removable} >= {".git/index.lock"}
    lines = doctor.out.splitlines()
    temporary = [
        line
        for line in lines
        if line.endswith(
            ".tmp: a temporary file left by a write that stopped (memoryctl doctor --fix)"
        )
    ]
    assert len(temporary) == 1 and temporary[0].startswith("warning: memories/default/.cut-short")
    assert (
        "error: .git/index.lock: left by a git that stopped 2 min ago; no commit can be made "
        "until it is removed (memoryctl doctor --fix)" in lines
    )
    assert "warning: memories/default/cut-short-while-committing.md: saved but not committed" in (
        lines
    )

    refused = cli(*v, "doctor", "--fix")
    assert refused.code == 1 and "confirm with --yes" in refused.err
    assert ".git/index.lock: remove it (left by a write that stopped)" in refused.out
    assert lock.exists()

    fixed = cli(*v, "doctor", "--fix", "--yes")
    assert "Removed .git/index.lock." in fixed.out
    assert "Removed memories/default/.cut-short" in fixed.out
    assert not lock.exists()
    assert not list((vault_dir / "memories" / "default").glob(".*.tmp"))
    after = cli(*v, "doctor")
    assert [line for line in after.out.splitlines() if "cut-short" in line] == [
        "warning: memories/default/cut-short-while-committing.md: saved but not committed"
    ]
    assert (vault_dir / "memories/default/cut-short-while-committing.md").exists()


def doctor_fix_answered(root: Path, answer: str) -> subprocess.CompletedProcess[str]:
    """`memoryctl doctor --fix` in a terminal, where the person types `answer`."""
    import pty

    keyboard, terminal = pty.openpty()
    try:
        os.write(keyboard, f"{answer}\n".encode())
        return subprocess.run(
            [sys.executable, "-m", "memoryctl", "--vault", str(root), "doctor", "--fix"],
            stdin=terminal,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        os.close(terminal)
        os.close(keyboard)


def test_doctor_finds_what_a_write_of_the_vault_id_left_and_removes_it_only_when_told(
    vault_dir, cli
):
    identity = vault_dir / ".memoryctl" / "vault-id"
    identity.unlink(missing_ok=True)  # a vault opened for the first time
    killed_while(vault_dir, "identifying")
    (left,) = (vault_dir / ".memoryctl").glob(".vault-id.*.tmp")
    relpath = f".memoryctl/{left.name}"
    # What memoryctl did not name as its own temporary files stays out of it.
    (vault_dir / ".memoryctl" / "notes.tmp").write_text("the person's own\n")
    (vault_dir / ".obsidian").mkdir()
    (vault_dir / ".obsidian" / ".workspace.0123abcd.tmp").write_text("{}\n")

    doctor = cli("--vault", str(vault_dir), "doctor")
    assert (
        f"warning: {relpath}: a temporary file left by a write that stopped "
        "(memoryctl doctor --fix)" in doctor.out.splitlines()
    )
    assert "notes.tmp" not in doctor.out and ".workspace" not in doctor.out

    kept = doctor_fix_answered(vault_dir, "n")
    assert kept.returncode == 0, kept.stderr
    assert f"  {relpath}: remove it (left by a write that stopped)" in kept.stdout.splitlines()
    assert "Nothing changed." in kept.stdout
    assert left.exists()

    removed = doctor_fix_answered(vault_dir, "y")
    assert removed.returncode == 0, removed.stderr
    assert "Apply them, in one commit? [y/N] " in removed.stdout
    assert f"Removed {relpath}.\n" in removed.stdout
    assert not left.exists()
    assert (vault_dir / ".memoryctl" / "notes.tmp").exists()
    assert (vault_dir / ".obsidian" / ".workspace.0123abcd.tmp").exists()
    assert identity.exists()  # the vault has its id, made by the commands that opened it
    assert relpath not in cli("--vault", str(vault_dir), "doctor").out


def test_doctor_names_a_decision_record_whose_proposal_is_missing(vault_dir, cli):
    note = vault_dir / "memories" / "old.md"
    note.parent.mkdir(exist_ok=True)
    note.write_text(
        "---\nid: old1\ntitle: Old\nstatus: retired\nretired:\n  at: 2026-01-02T00:00:00Z\n"
        "  reason: stale\n  proposal: p-gone\n---\nOld text\n"
    )
    git(vault_dir, "add", "-A")
    git(vault_dir, "commit", "-qm", "an old memory")
    doctor = cli("--vault", str(vault_dir), "doctor")
    assert "error: memories/old.md: retired.proposal names p-gone, which is no proposal" in (
        doctor.out
    )


def test_faces_withdrawing_the_same_proposal_at_once_each_carry_on_without_a_warning(
    vault_dir, cli, tmp_path
):
    """Every face runs the live checks over an edit that takes a proposal's trigger
    away; the first to write withdraws it, and the others, finding it withdrawn when
    they come to write, have nothing left to do: none fails for the other's write."""
    v = ("--vault", str(vault_dir))
    for n in range(3):
        old, note = we_moved(vault_dir, cli, n)
        assert cli(*v, "list").code == 0  # files the proposal
        note.write_text(note.read_text().replace(f"retires: [{old}]", "retires: []"))
        git(vault_dir, "commit", "-qam", "we did not move after all")
        results = at_once(vault_dir, tmp_path, ["list"], 4)
        said = [err for _, _, err in results if err]
        assert [code for code, _, _ in results] == [0] * 4
        assert [err for err in said if "1 proposal withdrawn" not in err] == []
        assert len(said) <= 1  # one face withdrew it (or all put it off for the next)
        assert cli(*v, "list").code == 0
    withdrawn = cli(*v, "review", "--json", "--state", "withdrawn").json()["proposals"]
    assert len(withdrawn) == 3
    assert all(len(p["history"]) == 1 for p in withdrawn)  # each withdrawn once
    assert git(vault_dir, "log", "--format=%s").count("withdraw 1") == 3
    assert git(vault_dir, "status", "--porcelain") == ""


def _a_check_about_to_withdraw(vault_dir: Path, cli) -> tuple[Vault, Change, Path]:
    """A proposal filed, its trigger taken away, and a face's check that has read the
    proposal and made its withdrawal, not yet written."""
    v = ("--vault", str(vault_dir))
    we_moved(vault_dir, cli)
    assert cli(*v, "list").code == 0
    [filed] = cli(*v, "review", "--json").json()["proposals"]
    this_face = Vault(vault_dir)
    change = Change.start(this_face, dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC))
    [proposal] = change.queue.proposals
    change.withdraw([proposal], "what proposed it changed", by="check")
    assert [p.id for p in change.withdrawn] == [filed["id"]]
    return this_face, change, vault_dir / proposal.path


def test_a_check_finding_its_withdrawal_made_by_another_face_writes_nothing(vault_dir, cli):
    this_face, change, path = _a_check_about_to_withdraw(vault_dir, cli)
    other_face = Vault(vault_dir)
    theirs = Change.start(other_face, dt.datetime(2026, 12, 1, 9, 1, tzinfo=dt.UTC))
    theirs.withdraw(theirs.queue.proposals, "what proposed it changed", by="check")
    theirs.commit("Check changes: withdraw 1")
    other_face.close()
    written = path.read_bytes()
    assert change.commit("Check changes: withdraw 1") is None
    this_face.close()
    assert change.withdrawn == []
    assert path.read_bytes() == written  # withdrawn once, at the other face's moment
    assert git(vault_dir, "status", "--porcelain") == ""


def test_a_check_never_writes_over_the_persons_edit_of_a_proposal_made_meanwhile(vault_dir, cli):
    this_face, change, path = _a_check_about_to_withdraw(vault_dir, cli)
    # The person declines it by hand, in an editor: it is no longer the check's to withdraw.
    declined = path.read_text().replace("state: pending", "state: declined")
    path.write_text(declined)
    assert change.commit("Check changes: withdraw 1") is None
    assert path.read_text() == declined
    # Or edits its reason: the withdrawal is made on the file as the person left it.
    path.write_text(
        declined.replace("state: declined", "state: pending").replace(
            "reason: moved", "reason: (my words) moved"
        )
    )
    again = Change.start(this_face, dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC))
    again.withdraw(again.queue.proposals, "what proposed it changed", by="check")
    path.write_text(path.read_text().replace("(my words)", "(my own words)"))
    assert again.commit("Check changes: withdraw 1") is not None
    this_face.close()
    text = path.read_text()
    assert "reason: (my own words) moved" in text and "state: withdrawn" in text
