"""Code anchors: a memory about code is checked against the repository, and a broken
anchor proposes review, saying what changed (seed 001, on refactoring).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memoryctl.anchors import (
    AnchorPathError,
    RepoFile,
    anchor_breaks,
    anchor_suggestions,
    normalize_anchor_path,
    sha_matches,
    symbol_present,
    with_anchor,
)
from memoryctl.memory import Anchor, Memory

SIGNING = "danwpsx5ek"  # anchored to ufo_hosted/release.py#sign_artifact, which is gone
PUBLISH = "davbnjaza3"  # anchored to ufo_hosted/release.py#publish


class FakeRepo:
    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    def file(self, path: str) -> RepoFile | None:
        if path not in self.files:
            return None
        text = self.files[path]
        import hashlib
        import re

        sha = hashlib.sha256(text.encode()).hexdigest()
        return RepoFile(sha, frozenset(re.findall(r"\w+", text)))


def anchored(*anchors: Anchor, mid: str = "m000000001", status: str = "active") -> Memory:
    return Memory(id=mid, path=f"{mid}.md", title="about code", anchors=anchors, status=status)


REPO = FakeRepo(
    {"src/app.py": "def run():\n    return helper()\n\nclass Client:\n    def push(self): ...\n"}
)


def test_an_anchor_breaks_when_its_file_or_symbol_is_gone_or_its_content_changed():
    assert anchor_breaks(anchored(Anchor("src/app.py", "run")), REPO) == []
    assert anchor_breaks(anchored(Anchor("src/app.py", "Client.push")), REPO) == []
    [gone] = anchor_breaks(anchored(Anchor("src/old.py")), REPO)
    assert (gone.kind, gone.detail) == ("missing", "src/old.py no longer exists")
    [renamed] = anchor_breaks(anchored(Anchor("src/app.py", "start")), REPO)
    assert renamed.detail == "start no longer appears in src/app.py"
    current = REPO.file("src/app.py")
    assert current is not None
    assert anchor_breaks(anchored(Anchor("src/app.py", "run", current.sha[:16])), REPO) == []
    [changed] = anchor_breaks(anchored(Anchor("src/app.py", "run", "0123456789abcdef")), REPO)
    assert changed.kind == "changed"
    assert changed.detail.startswith("src/app.py changed since the anchor was recorded")


def test_a_symbol_is_a_whole_name_not_part_of_one():
    names = frozenset({"sign_bundle", "publish"})
    assert symbol_present("publish", names)
    assert not symbol_present("sign", names)
    assert not symbol_present("sign_artifact", names)


def test_a_recorded_sha_matches_by_prefix():
    full = "9c41e0b" + "0" * 57
    assert sha_matches("9c41e0b", full) and sha_matches("9C41E0B", full)
    assert not sha_matches("9c41e0c", full) and not sha_matches("9c4", full)


@pytest.mark.parametrize(
    "path",
    ["../../etc/passwd", "/etc/passwd", "src/../../x.py", "..", "C:/Windows/x.py", "  "],
)
def test_an_anchor_path_that_leaves_the_repository_is_refused(path):
    with pytest.raises(AnchorPathError):
        normalize_anchor_path(path)


def test_paths_are_written_in_one_form():
    assert normalize_anchor_path("./src//app.py") == "src/app.py"
    assert normalize_anchor_path("src\\app.py") == "src/app.py"


def test_a_refused_anchor_is_reported_not_proposed():
    memory = anchored(Anchor("../../etc/passwd"), Anchor("src/app.py", "run"))
    report = anchor_suggestions([memory], REPO)
    assert report.suggestions == []
    assert [b.kind for _, b in report.refused] == ["refused"]


def test_one_proposal_per_memory_says_every_anchor_that_broke():
    memory = anchored(Anchor("src/old.py"), Anchor("src/app.py", "start"), Anchor("src/app.py"))
    retired = anchored(Anchor("src/old.py"), mid="m000000002", status="retired")
    [suggestion] = anchor_suggestions([memory, retired], REPO).suggestions
    assert suggestion.action == "needs_review" and suggestion.origin == "anchor"
    assert suggestion.reason == (
        "src/old.py no longer exists; start no longer appears in src/app.py"
    )
    assert suggestion.ref == "src/old.py, src/app.py#start"


def test_anchoring_again_replaces_the_anchor_with_the_same_path_and_symbol():
    old = [Anchor("./src/app.py", "run", "aaaaaaa"), Anchor("src/b.py")]
    new = Anchor("src/app.py", "run", "bbbbbbb")
    assert with_anchor(old, new) == [new, Anchor("src/b.py")]
    assert with_anchor([Anchor("src/b.py")], new) == [Anchor("src/b.py"), new]


# --- through the CLI, on the sample vault and its code/ folder ----------------------------


def v(root: Path) -> tuple[str, str]:
    return ("--vault", str(root))


def test_check_anchors_proposes_review_of_the_note_whose_function_is_gone(sample_dir, cli):
    result = cli(*v(sample_dir), "check-anchors")
    assert result.code == 0, result.err
    assert "Checked 4 anchors of 4 memories" in result.err
    data = cli(*v(sample_dir), "review", "--json", "--origin", "anchor").json()["proposals"]
    [proposal] = data
    assert proposal["action"] == "needs_review"
    assert proposal["targets"][0]["id"] == SIGNING
    assert proposal["reason"] == "sign_artifact no longer appears in ufo_hosted/release.py"
    assert proposal["origin"] == {"kind": "anchor", "ref": "ufo_hosted/release.py#sign_artifact"}
    approved = cli(*v(sample_dir), "review", "approve", proposal["id"])
    assert approved.code == 0
    assert cli(*v(sample_dir), "show", SIGNING, "--json").json()["status"] == "needs_review"


def test_anchor_records_the_hash_and_a_later_edit_proposes_review(sample_dir, cli):
    result = cli(*v(sample_dir), "anchor", PUBLISH, "ufo_hosted/release.py#publish", "--json")
    assert result.code == 0, result.err
    anchors = result.json()["anchors"]
    assert anchors == [
        {"path": "ufo_hosted/release.py", "symbol": "publish", "sha": anchors[0]["sha"]}
    ]
    assert len(anchors[0]["sha"]) == 16
    code = sample_dir / "code/ufo_hosted/release.py"
    original = code.read_text()
    code.write_text(original.replace("promote: bool = False", "promote: bool = True"))
    report = cli(*v(sample_dir), "check-anchors", "--json").json()
    changed = [p for p in report["proposed"] if p["targets"] == [PUBLISH]]
    assert len(changed) == 1
    assert "ufo_hosted/release.py changed since the anchor was recorded" in changed[0]["reason"]
    # The code is put back: the pending proposal no longer applies and is withdrawn.
    code.write_text(original)
    report = cli(*v(sample_dir), "check-anchors", "--json").json()
    assert [p["id"] for p in report["withdrawn"]] == [changed[0]["id"]]


def test_anchor_refuses_paths_outside_the_repository_and_names_that_are_not_there(sample_dir, cli):
    escape = cli(*v(sample_dir), "anchor", PUBLISH, "../../etc/passwd")
    assert escape.code == 1 and "escapes the repository; refused" in escape.err
    absolute = cli(*v(sample_dir), "anchor", PUBLISH, "/etc/passwd")
    assert absolute.code == 1 and "is absolute" in absolute.err
    os.symlink("/etc", sample_dir / "code" / "etc-link")
    link = cli(*v(sample_dir), "anchor", PUBLISH, "etc-link/passwd")
    assert link.code == 1 and "leads outside the repository; refused" in link.err
    missing = cli(*v(sample_dir), "anchor", PUBLISH, "ufo_hosted/nothing.py")
    assert missing.code == 1 and "is not a file in the repository" in missing.err
    symbol = cli(*v(sample_dir), "anchor", PUBLISH, "ufo_hosted/release.py#sign_artifact")
    assert symbol.code == 1 and "sign_artifact does not appear" in symbol.err


def test_a_hand_written_anchor_that_escapes_is_refused_at_check_time_and_by_doctor(sample_dir, cli):
    path = sample_dir / "memories/work/ufo-hosted/registry-retries.md"
    path.write_text(
        path.read_text().replace("path: ufo_hosted/registry.py", "path: ../../etc/passwd")
    )
    result = cli(*v(sample_dir), "check-anchors", "--json")
    assert result.json()["refused"] == [
        {
            "memory": "yfh4tb9129",
            "anchor": "../../etc/passwd",
            "reason": "anchor path '../../etc/passwd' escapes the repository; refused",
        }
    ]
    assert all(p["targets"] != ["yfh4tb9129"] for p in result.json()["proposed"])
    assert "anchors: anchor path '../../etc/passwd' escapes" in cli(*v(sample_dir), "doctor").out


def test_without_a_repository_the_commands_say_how_to_name_one(vault_dir, cli):
    result = cli(*v(vault_dir), "check-anchors")
    assert result.code == 1 and "pass --repo PATH" in result.err
    elsewhere = cli(*v(vault_dir), "check-anchors", "--repo", str(vault_dir / "nope"))
    assert elsewhere.code == 1 and "is not a folder" in elsewhere.err
