"""Many new files written at once (an import, a thousand proposals): each whole when its
name appears, never over a file that took one of the names meanwhile, and no temporary
file left behind, whether or not the system has files without a name (O_TMPFILE)."""

from __future__ import annotations

import os

import pytest

from memoryctl.storage import atomic


@pytest.fixture(params=["unnamed temporary files", "named temporary files"])
def way(request, monkeypatch) -> str:
    if request.param == "named temporary files":
        monkeypatch.setattr(atomic, "_has_unnamed_files", lambda: False)
    elif not atomic._has_unnamed_files():
        pytest.skip("this system has no files without a name")
    return request.param


def test_many_new_files_are_written_whole_with_the_stamps_they_were_written_with(tmp_path, way):
    files = [
        (tmp_path / "memories" / folder / f"note-{n}.md", f"note {n}\n".encode() * n)
        for folder in ("default", "work")
        for n in range(1, 41)
    ]
    stamps = atomic.create_all(files)
    for (path, data), (size, mtime_ns) in zip(files, stamps, strict=True):
        assert path.read_bytes() == data
        assert (path.stat().st_size, path.stat().st_mtime_ns) == (size, mtime_ns)
        assert path.stat().st_mode & 0o777 == 0o666 & ~_umask()
    for folder in ("default", "work"):
        assert sorted(os.listdir(tmp_path / "memories" / folder)) == sorted(
            f"note-{n}.md" for n in range(1, 41)
        )


def test_a_file_that_took_one_of_the_names_stops_the_write_keeps_its_bytes_and_nothing_else(
    tmp_path, way
):
    folder = tmp_path / "memories"
    folder.mkdir()
    (folder / "note-20.md").write_bytes(b"the person's own note\n")
    files = [(folder / f"note-{n}.md", f"memoryctl's note {n}\n".encode()) for n in range(40)]
    with pytest.raises(atomic.ChangedOnDisk) as refused:
        atomic.create_all(files)
    assert refused.value.path == folder / "note-20.md"
    assert (folder / "note-20.md").read_bytes() == b"the person's own note\n"
    assert os.listdir(folder) == ["note-20.md"]  # the files made before it are removed


def test_a_write_stopped_midway_by_ctrl_c_leaves_none_of_its_files(tmp_path, way, monkeypatch):
    folder = tmp_path / "memories"
    files = [(folder / f"note-{n}.md", f"memoryctl's note {n}\n".encode()) for n in range(60)]
    real = atomic._new_file

    def interrupted_at_the_fortieth(path, *args):
        if path.name == "note-40.md":
            raise KeyboardInterrupt
        return real(path, *args)

    monkeypatch.setattr(atomic, "_new_file", interrupted_at_the_fortieth)
    with pytest.raises(KeyboardInterrupt):
        atomic.create_all(files)
    assert os.listdir(folder) == []


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
