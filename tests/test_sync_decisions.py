"""What one device decided or wrote, as it reaches the other through a bare remote on
local disk: a proposal decided on both, a file made unreadable by hand."""

from __future__ import annotations

import pytest

from tests.sync_support import Devices, git, make_devices


@pytest.fixture
def devices(tmp_path, cli, monkeypatch) -> Devices:
    return make_devices(tmp_path, cli, monkeypatch)


def proposed_on_both(devices: Devices) -> tuple[str, str]:
    memory_id = devices.add(devices.laptop, "Buy oat milk", "--title", "Milk")
    proposed = devices.run(
        devices.laptop, "--json", "propose", "retire", memory_id, "--reason", "old"
    )
    assert proposed.code == 0, proposed.err
    assert devices.sync(devices.laptop).code == 0
    assert devices.sync(devices.desktop).code == 0
    return memory_id, proposed.json()["id"]


def state_of(devices: Devices, device, proposal_id: str) -> str:
    return devices.run(device, "--json", "review", "show", proposal_id).json()["state"]


@pytest.mark.parametrize("merging_device_approves", [False, True])
def test_a_proposal_approved_on_one_device_and_declined_on_the_other_stays_approved(
    devices, merging_device_approves
):
    memory_id, proposal_id = proposed_on_both(devices)
    approver, decliner = devices.laptop, devices.desktop
    if merging_device_approves:
        approver, decliner = decliner, approver
    assert devices.run(approver, "review", "approve", proposal_id).code == 0
    assert devices.run(decliner, "review", "decline", proposal_id).code == 0
    assert devices.sync(devices.laptop).code == 0
    merged = devices.sync(devices.desktop)
    assert merged.code == 0, merged.err
    assert "approved it; the approval holds" in merged.out
    assert devices.sync(devices.laptop).code == 0
    # Both devices tell the same, true story: the memory is retired by that proposal,
    # and the proposal says it was approved.
    for device in (devices.laptop, devices.desktop):
        shown = devices.run(device, "--json", "show", memory_id).json()
        assert shown["status"] == "retired"
        assert state_of(devices, device, proposal_id) == "approved"
        assert devices.run(device, "doctor").code == 0


def test_a_proposal_approved_on_both_devices_is_approved_once_with_no_conflict(devices):
    memory_id, proposal_id = proposed_on_both(devices)
    assert devices.run(devices.laptop, "review", "approve", proposal_id).code == 0
    assert devices.run(devices.desktop, "review", "approve", proposal_id).code == 0
    assert devices.sync(devices.laptop).code == 0
    merged = devices.sync(devices.desktop)
    assert merged.code == 0, merged.err
    assert "conflict" not in merged.out.lower() and "differently" not in merged.out
    assert devices.run(devices.desktop, "--json", "show", memory_id).json()["status"] == "retired"
    assert state_of(devices, devices.desktop, proposal_id) == "approved"
    assert devices.run(devices.desktop, "--json", "review", "list").json()["proposals"] == []


def test_a_file_broken_on_the_laptop_arrives_on_the_desktop_named_and_untouched(devices):
    broken = devices.laptop / "memories" / "default" / "broken.md"
    broken.parent.mkdir(parents=True, exist_ok=True)
    raw = b"---\ntitle: [oops\n---\nA note whose frontmatter is not YAML\n"
    broken.write_bytes(raw)
    git(devices.laptop, "add", "-A")
    git(devices.laptop, "commit", "-q", "-m", "A note typed by hand")
    assert devices.sync(devices.laptop).code == 0
    result = devices.sync(devices.desktop)
    assert result.code == 0, result.err
    line = next(line for line in result.out.splitlines() if "broken.md" in line)
    assert line.startswith("memories/default/broken.md arrived and cannot be read")
    assert "YAML" in line
    assert (devices.desktop / "memories" / "default" / "broken.md").read_bytes() == raw
    assert git(devices.desktop, "status", "--porcelain") == ""
    # The next sync, with nothing new, does not say it again.
    again = devices.sync(devices.desktop)
    assert "broken.md" not in again.out


def test_a_memory_deleted_on_the_laptop_and_changed_on_the_desktop_is_kept_and_said_once(
    devices,
):
    memory_id = devices.add(devices.laptop, "Sky is blue", "--title", "Sky")
    devices.sync(devices.laptop)
    devices.sync(devices.desktop)
    relpath = str(devices.path(devices.laptop, memory_id).relative_to(devices.laptop))
    git(devices.laptop, "rm", "-q", relpath)
    git(devices.laptop, "commit", "-q", "-m", "Drop the sky")
    assert devices.sync(devices.laptop).code == 0
    assert devices.run(devices.desktop, "replace", memory_id, "Sky is grey").code == 0
    result = devices.sync(devices.desktop)
    assert result.code == 0, result.err
    said = [line for line in result.out.splitlines() if relpath in line]
    assert said == [f"{relpath}: deleted on one device and changed on the other; the file is kept"]
    assert "Sky is grey" in (devices.desktop / relpath).read_text()
    assert devices.run(devices.desktop, "doctor").code == 0


def test_an_agent_is_told_a_pinned_memory_has_another_devices_version_waiting(devices):
    memory_id = devices.add(devices.laptop, "Buy oat milk", "--title", "Milk")
    assert devices.run(devices.laptop, "pin", memory_id).code == 0
    devices.sync(devices.laptop)
    devices.sync(devices.desktop)
    assert devices.run(devices.laptop, "replace", memory_id, "Buy soy milk").code == 0
    assert devices.run(devices.desktop, "replace", memory_id, "Buy rice milk").code == 0
    devices.sync(devices.laptop)
    assert devices.sync(devices.desktop).code == 0
    for device in (devices.desktop, devices.laptop):
        devices.sync(device)
        bundle = devices.run(device, "preview").out
        shown = bundle.index("- Buy rice milk")
        assert "Buy soy milk" not in bundle  # one current text, this device's, until decided
        assert (
            "a proposal to choose between this and another device's version awaits the "
            "person's decision" in bundle[shown:]
        )


def test_memories_both_devices_added_by_one_name_are_committed_as_such(devices):
    devices.add(devices.laptop, "Indent with tabs", "--title", "Indent")
    devices.add(devices.desktop, "Indent with four spaces", "--title", "Indent")
    devices.sync(devices.laptop)
    assert devices.sync(devices.desktop).code == 0
    subjects = git(devices.desktop, "log", "--format=%s", "-3")
    assert "0 conflict" not in subjects
    assert "Sync: 1 memory both devices added by one name, both kept" in subjects
