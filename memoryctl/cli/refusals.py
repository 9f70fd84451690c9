"""The core's refusals as the command line words them: the core's sentence, then what
to type. The core names no command or flag; this is the one place the CLI adds them."""

from __future__ import annotations

from memoryctl import review, review_actions
from memoryctl.actions import NotAMoment
from memoryctl.anchors import NoCodeRepository
from memoryctl.doctor import Finding
from memoryctl.editor_command import EditorNotFound
from memoryctl.proposals import NoSuchProposal
from memoryctl.storage.gitrepo import GitLocked
from memoryctl.storage.vault import IdInSeveralFiles, VaultBusy


def worded(error: BaseException) -> str | None:
    """The line the CLI prints for a refusal it has advice for; None for any other error."""
    match error:
        case review.NotPending():
            return f"{error}; memoryctl review undo {error.proposal_id} reopens it"
        case review.Unresolved() | review.AlreadyDone():
            return f"{error}; decline it (memoryctl review decline {error.proposal_id})"
        case review.SharedId():
            return f"{error}; run memoryctl doctor, then decide {error.proposal_id}"
        case review.ChangedSinceProposed():
            return (
                f"{error}; look at it (memoryctl review show {error.proposal_id}), "
                "then approve with --force"
            )
        case review.DirectUndone():
            return (
                f"{error.proposal_id} records a decision made directly, and it was undone; "
                "to make it again, run the command again "
                f"(memoryctl {review_actions.word(error.action)} ...)"
            )
        case review_actions.NotReversible() if error.instead == review_actions.RETIRE.name:
            return f"{error} (memoryctl retire ID --reason R)"
        case review_actions.NotReversible():
            return f"{error} (memoryctl propose review ID --reason R)"
        case review_actions.ReplacedSince():
            return f"{error} (memoryctl history {error.memory_id} shows every version)"
        case review_actions.IsRetired():
            return f"{error} (memoryctl restore {error.memory_id})"
        case review_actions.NoNewText():
            return "a replacement needs the new text (BODY, or - for stdin)"
        case review.ReasonRequired():
            return "say why with --reason; the person decides on it"
        case review.NotADate():
            return f"--since {error.value!r} is not a date (use ISO 8601, like 2026-11-01)"
        case NoSuchProposal():
            return f"{error} (memoryctl review lists them)"
        case EditorNotFound():
            return f"{error}; set $EDITOR"
        case IdInSeveralFiles():
            return f"{error}; run memoryctl doctor"
        case NotAMoment():
            return f"--{error.key} {error.value!r} is not a date (use ISO 8601, like 2026-09-19)"
        case VaultBusy():
            return f"{error}; try again (MEMORYCTL_LOCK_TIMEOUT=SECONDS waits longer)"
        case NoCodeRepository():
            return (
                "no code repository: pass --repo PATH, or set repo under [anchors] in "
                "memoryctl.toml"
            )
    return None


def worded_finding(finding: Finding) -> str:
    """A doctor finding as the command line prints it: the core's line, then what to type."""
    if finding.removable:
        return f"{finding.line()} (memoryctl doctor --fix)"
    if finding.decline:
        return f"{finding.line()} (memoryctl review decline {finding.decline})"
    return finding.line()


def after_commit(failed: BaseException | None) -> str | None:
    """What the command line adds when memoryctl's commit failed, if it has advice."""
    if isinstance(failed, GitLocked) and failed.stale:
        return f"memoryctl doctor --fix removes {failed.lock} (once no git is running)"
    return None
