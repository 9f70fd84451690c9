"""memoryctl's commits, built from HEAD's trees with git's plumbing: the same commit
`git commit -- PATHS` would make, the person's index left matching it, many new blobs
written as one pack, and git's own `git commit` making the commit where a person set
git up to run a hook on it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from memoryctl.storage import gitcommit, gitrepo


def git(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(
        ["git", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **(env or {})},
    ).stdout


def what_git_commit_would_record(root: Path, parent: str, paths: list[str]) -> str:
    """The tree `git add -A -- PATHS` on top of `parent` gives, in an index of its own."""
    env = {"GIT_INDEX_FILE": str(root / ".git" / "expected-index")}
    git(root, "read-tree", parent, env=env)
    git(root, "add", "-A", "--", *paths, env=env)
    tree = git(root, "write-tree", env=env).strip()
    os.remove(root / ".git" / "expected-index")
    return tree


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    for relpath, text in {
        "README.md": "a vault\n",
        "memories/default/a.md": "a\n",
        "memories/default/b.md": "b\n",
        "memories/work/only.md": "the only one\n",
        "proposals/p.md": "proposal\n",
    }.items():
        (root / relpath).parent.mkdir(parents=True, exist_ok=True)
        (root / relpath).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    return root


def test_a_commit_of_new_changed_and_deleted_files_records_what_git_commit_would(repo):
    (repo / "memories/default/a.md").write_text("a, changed\n")
    (repo / "memories/new/deep/née.md").parent.mkdir(parents=True)
    (repo / "memories/new/deep/née.md").write_text("in a new folder\n")
    (repo / "memories/work/only.md").unlink()  # its folder goes with it
    (repo / "proposals/run.sh").write_text("#!/bin/sh\n")
    (repo / "proposals/run.sh").chmod(0o755)
    paths = [
        "memories/default/a.md",
        "memories/new/deep/née.md",
        "memories/work/only.md",
        "proposals/run.sh",
    ]
    parent = git(repo, "rev-parse", "HEAD").strip()
    expected = what_git_commit_would_record(repo, parent, paths)

    sha = gitrepo.commit(repo, paths, "Change four files\n\nmemory: abc\n\n\n")

    assert sha == git(repo, "rev-parse", "HEAD").strip()
    assert git(repo, "rev-parse", "HEAD^{tree}").strip() == expected
    assert git(repo, "rev-parse", "HEAD^").strip() == parent
    assert git(repo, "log", "-1", "--format=%B", "HEAD") == "Change four files\n\nmemory: abc\n\n"
    assert git(repo, "status", "--porcelain") == ""
    assert "memories/work" not in git(repo, "ls-tree", "-r", "--name-only", "HEAD")
    subprocess.run(["git", "fsck", "--strict"], cwd=repo, check=True, capture_output=True)


def test_a_commit_with_nothing_changed_makes_no_commit(repo):
    head = git(repo, "rev-parse", "HEAD").strip()
    assert gitrepo.commit(repo, ["memories/default/a.md"], "Nothing") is None
    assert git(repo, "rev-parse", "HEAD").strip() == head


def commits_a_and_leaves_the_persons_staged_b(repo: Path) -> None:
    (repo / "memories/default/b.md").write_text("b, staged by the person\n")
    git(repo, "add", "memories/default/b.md")
    (repo / "memories/default/a.md").write_text("a, by memoryctl\n")
    assert gitrepo.commit(repo, ["memories/default/a.md"], "Change a")
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == [
        "memories/default/a.md"
    ]
    assert git(repo, "status", "--porcelain") == "M  memories/default/b.md\n"


def test_what_the_person_staged_stays_staged_and_out_of_the_commit(repo):
    commits_a_and_leaves_the_persons_staged_b(repo)


def test_a_new_file_in_a_folder_git_ignores_is_left_out_of_the_commit(repo):
    (repo / ".gitignore").write_text("memories/private/\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore private")
    (repo / "memories/private").mkdir()
    (repo / "memories/private/mine.md").write_text("mine\n")
    (repo / "memories/default/a.md").write_text("a, changed\n")
    gitrepo.commit(repo, ["memories/private/mine.md", "memories/default/a.md"], "Two")
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == [
        "memories/default/a.md"
    ]
    assert git(repo, "status", "--porcelain") == ""


def test_a_file_the_person_force_added_is_in_the_commit_though_git_ignores_its_folder(repo):
    (repo / ".gitignore").write_text("memories/private/\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore private")
    (repo / "memories/private").mkdir()
    (repo / "memories/private/kept.md").write_text("kept on purpose\n")
    git(repo, "add", "-f", "memories/private/kept.md")  # tracked, not yet committed
    (repo / "memories/private/kept.md").write_text("kept on purpose, and pinned\n")
    gitrepo.commit(repo, ["memories/private/kept.md"], "Pin it")
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == [
        "memories/private/kept.md"
    ]
    assert git(repo, "show", "HEAD:memories/private/kept.md") == "kept on purpose, and pinned\n"
    assert git(repo, "status", "--porcelain") == ""


def test_a_persons_commit_hook_still_runs_and_sees_only_memoryctls_paths(repo):
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(
        '#!/bin/sh\ngit diff --cached --name-only >> "$(git rev-parse --git-dir)/seen"\n'
    )
    hook.chmod(0o755)
    commits_a_and_leaves_the_persons_staged_b(repo)
    assert (repo / ".git" / "seen").read_text() == "memories/default/a.md\n"


def test_a_hook_that_refuses_the_commit_leaves_the_change_uncommitted(repo):
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho not today >&2\nexit 1\n")
    hook.chmod(0o755)
    head = git(repo, "rev-parse", "HEAD").strip()
    (repo / "memories/default/a.md").write_text("a, changed\n")
    with pytest.raises(gitrepo.GitError, match="not today"):
        gitrepo.commit(repo, ["memories/default/a.md"], "Change a")
    assert git(repo, "rev-parse", "HEAD").strip() == head
    assert git(repo, "status", "--porcelain") == " M memories/default/a.md\n"
    assert not (repo / ".git" / "index.lock").exists()


def test_nothing_is_committed_in_the_middle_of_a_persons_merge(repo):
    head = git(repo, "rev-parse", "HEAD").strip()
    (repo / ".git" / "MERGE_HEAD").write_text(head + "\n")
    (repo / "memories/default/a.md").write_text("a, changed\n")
    with pytest.raises(gitrepo.GitError, match=r"middle of a merge \(\.git/MERGE_HEAD\)"):
        gitrepo.commit(repo, ["memories/default/a.md"], "Change a")
    assert git(repo, "rev-parse", "HEAD").strip() == head
    assert (repo / ".git" / "MERGE_HEAD").exists()
    assert (repo / "memories/default/a.md").read_text() == "a, changed\n"


def loose_objects(root: Path) -> int:
    objects = root / ".git" / "objects"
    return sum(len(os.listdir(d)) for d in objects.iterdir() if len(d.name) == 2)


@pytest.mark.parametrize("known", ["nothing", "every file's bytes", "bytes some no longer hold"])
def test_many_new_files_go_into_one_pack_with_the_commit_git_add_would_make(repo, known):
    paths = [f"memories/many/n{number:03d}.md" for number in range(200)]
    (repo / "memories/many").mkdir()
    for number, relpath in enumerate(paths):
        (repo / relpath).write_text(f"note {number}\r\n")
    (repo / ".gitattributes").write_text("memories/many/n00*.md text eol=lf\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-q", "-m", "attributes")
    parent = git(repo, "rev-parse", "HEAD").strip()
    loose = loose_objects(repo)
    packs = len(list((repo / ".git/objects/pack").glob("*.pack")))
    thought = {}  # what the committer thinks the files hold
    if known != "nothing":
        thought = {relpath: (repo / relpath).read_bytes() for relpath in paths}
    if known == "bytes some no longer hold":  # changed on disk since they were written
        for relpath in paths[::7]:
            (repo / relpath).write_text("changed by the person\n")

    gitrepo.commit(repo, paths, "Add many", known=thought)

    expected = what_git_commit_would_record(repo, parent, paths)  # after: git add writes loose
    assert git(repo, "rev-parse", "HEAD^{tree}").strip() == expected
    assert len(list((repo / ".git/objects/pack").glob("*.pack"))) == packs + 1
    # the ten files the attributes convert are stored loose, as git add stores them
    assert loose_objects(repo) - loose < 20
    assert git(repo, "status", "--porcelain") == ""
    subprocess.run(["git", "fsck", "--strict"], cwd=repo, check=True, capture_output=True)


def test_many_given_bytes_are_stored_as_given_in_one_pack(repo):
    contents = [f"sealed {number}\r\n".encode() for number in range(100)]
    ids = gitrepo.write_blobs(repo, contents)
    assert ids == [gitrepo.blob_id(data) for data in contents]
    assert [gitrepo.read_blob(repo, ids[n]) for n in (0, 99)] == [contents[0], contents[99]]
    assert len(list((repo / ".git/objects/pack").glob("*.pack"))) == 1


def test_a_commit_in_a_split_index_repository_leaves_the_index_whole(repo):
    git(repo, "config", "core.splitIndex", "true")
    git(repo, "update-index", "--split-index")
    commits_a_and_leaves_the_persons_staged_b(repo)


def test_a_commit_in_a_linked_worktree_goes_to_its_branch(repo, tmp_path):
    other = tmp_path / "other"
    git(repo, "worktree", "add", "-q", "-b", "side", str(other))
    (other / "memories/default/a.md").write_text("a, on the side\n")
    sha = gitrepo.commit(other, ["memories/default/a.md"], "Change a on the side")
    assert git(repo, "rev-parse", "side").strip() == sha
    assert git(other, "status", "--porcelain") == ""
    assert git(repo, "status", "--porcelain") == ""


def test_a_link_and_a_file_where_a_folder_was_are_committed_as_git_add_would(repo):
    (repo / "memories/work/only.md").unlink()
    (repo / "memories/work").rmdir()
    (repo / "memories/work").write_text("now a file\n")
    os.symlink("a.md", repo / "memories/default/link.md")
    paths = ["memories/work", "memories/work/only.md", "memories/default/link.md"]
    parent = git(repo, "rev-parse", "HEAD").strip()
    expected = what_git_commit_would_record(repo, parent, paths)
    gitrepo.commit(repo, paths, "Reshape")
    assert git(repo, "rev-parse", "HEAD^{tree}").strip() == expected
    assert git(repo, "status", "--porcelain") == ""


def test_a_sha256_repository_gets_the_same_commits(tmp_path):
    root = tmp_path / "sha256"
    root.mkdir()
    git(root, "init", "-q", "--object-format=sha256")
    (root / "a.md").write_text("a\n")
    git(root, "add", "a.md")
    git(root, "commit", "-q", "-m", "first")
    (root / "notes").mkdir()
    (root / "notes/b.md").write_text("b\n")
    parent = git(root, "rev-parse", "HEAD").strip()
    expected = what_git_commit_would_record(root, parent, ["notes/b.md"])
    assert len(gitrepo.commit(root, ["notes/b.md"], "Add b") or "") == 64
    assert git(root, "rev-parse", "HEAD^{tree}").strip() == expected
    assert git(root, "status", "--porcelain") == ""


def test_the_first_commit_of_a_new_repository(tmp_path):
    root = tmp_path / "new"
    root.mkdir()
    git(root, "init", "-q")
    (root / "memories").mkdir()
    (root / "memories/a.md").write_text("a\n")
    sha = gitrepo.commit(root, ["memories/a.md"], "First")
    assert sha and git(root, "rev-parse", "HEAD").strip() == sha
    assert git(root, "ls-tree", "-r", "--name-only", "HEAD").split() == ["memories/a.md"]
    assert git(root, "status", "--porcelain") == ""


def test_tree_ids_are_worked_out_as_git_works_them_out(repo):
    blob = git(repo, "rev-parse", "HEAD:README.md").strip()
    folder = git(repo, "rev-parse", "HEAD:memories").strip()
    entries = {"z.md": ("100644", blob), "a": ("40000", folder), "a.md": ("100755", blob)}
    lines = "".join(
        f"{mode} {'tree' if mode == '40000' else 'blob'} {sha}\t{name}\n"
        for name, (mode, sha) in entries.items()
    )
    made = subprocess.run(
        ["git", "mktree"], cwd=repo, input=lines, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert gitcommit.tree_id(entries) == made


def test_init_in_an_existing_repository_commits_the_vault_settings(tmp_path):
    from memoryctl.actions import init_vault
    from memoryctl.storage import gitsync

    root = tmp_path / "project"
    root.mkdir()
    gitrepo.init(root)
    (root / "README.txt").write_text("my project\n")
    subprocess.run(["git", "add", "README.txt"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "Mine"], cwd=root, check=True)
    init_vault(root)
    log = subprocess.run(
        ["git", "log", "-1", "--format=%s", "--name-only"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    assert log[0] == "Add memoryctl vault settings"
    assert {".gitignore", "memoryctl.toml", gitsync.ATTRIBUTES} <= set(log[1:])
