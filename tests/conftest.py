"""Shared fixtures: every test gets its own index folder, config folder and vault."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from memoryctl.actions import init_vault
from memoryctl.cli import main

SAMPLE_VAULT = Path(__file__).resolve().parent.parent / "sample_vault"
# A fixed moment for files that get their date from their mtime, so output is stable.
FIXED_MTIME = 1_764_000_000


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    base = tmp_path_factory.mktemp("env")
    monkeypatch.setenv("MEMORYCTL_CACHE_DIR", str(base / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(base / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(base / "xdg-cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(base / "state"))
    # Agent tokens go to a file keyring in this folder, never to the developer's own keyring.
    monkeypatch.setenv("XDG_DATA_HOME", str(base / "data"))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyrings.alt.file.PlaintextKeyring")
    monkeypatch.delenv("MEMORYCTL_VAULT", raising=False)
    monkeypatch.delenv("MEMORYCTL_DEBUG", raising=False)
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test Person")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "test@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test Person")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "test@example.com")
    return base


@pytest.fixture
def estimated_tokens(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Count tokens with the documented estimate, so figures do not depend on the machine
    (`pytestmark = pytest.mark.usefixtures("estimated_tokens")`)."""
    import memoryctl.tokens

    monkeypatch.setenv("MEMORYCTL_TOKENIZER", "estimate")
    memoryctl.tokens.counter.cache_clear()
    yield
    memoryctl.tokens.counter.cache_clear()


@pytest.fixture
def vault_dir(tmp_path: Path) -> Path:
    path = tmp_path / "vault"
    init_vault(path)
    return path


def copy_sample(target: Path) -> Path:
    shutil.copytree(SAMPLE_VAULT, target)
    for folder, _, files in os.walk(target):
        for name in files:
            os.utime(Path(folder) / name, (FIXED_MTIME, FIXED_MTIME))
    init_vault(target, every_file=True)  # a full copy: its code and README too
    return target


@pytest.fixture
def sample_dir(tmp_path: Path) -> Path:
    return copy_sample(tmp_path / "sample")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folder the person exports from (not the vault), as the current folder."""
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self):
        import json

        return json.loads(self.out)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Result]:
    """Run `memoryctl ARGS` in this process, as a user would type it."""

    def run(*args: str, stdin: str | None = None) -> Result:
        if stdin is not None:
            import io
            import sys

            old = sys.stdin
            sys.stdin = io.StringIO(stdin)
            try:
                code = main(list(args))
            finally:
                sys.stdin = old
        else:
            code = main(list(args))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run
