"""The MCP server as it was before its throughput work, to measure today's against.

Calls a second depend on the machine and on whatever else it runs, so a figure taken
elsewhere says nothing of today's here. The concurrency bench therefore serves the same
load from the server of `REVISION` (the last before it had worker processes, remembered
answers or a bound on first asks at once), back to back with today's, on a copy of the
same vault: `over_baseline` is the ratio of the two on one machine at one time.

The package of that revision is read out of the repository's own history with
`git archive`, and run by this interpreter with it first on the path; where the history
does not hold it (a shallow clone), there is no baseline and the bench says so.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from bench.common import log

REVISION = "c9b9ebb"
REPOSITORY = Path(__file__).resolve().parents[1]


def package(workdir: Path) -> Path | None:
    """A folder holding the `memoryctl` package of `REVISION`, or None without it."""
    target = workdir / f"baseline-{REVISION}"
    if (target / "memoryctl" / "__init__.py").is_file():
        return target
    archive = subprocess.run(
        ["git", "-C", str(REPOSITORY), "archive", "--format=tar", REVISION, "memoryctl"],
        capture_output=True,
    )
    if archive.returncode != 0:
        said = archive.stderr.decode(errors="replace").strip().splitlines()
        log(f"no baseline server: git archive {REVISION}: {said[-1] if said else 'failed'}")
        return None
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(target, filter="data")
    return target


def environment(env: dict[str, str], source: Path, cache: Path) -> dict[str, str]:
    """`env` for a process of the baseline: its package first on the path (and not the
    current folder's, which `python -m` would put before it), and an index of its own
    (the two servers' index formats differ)."""
    return {
        **env,
        "PYTHONPATH": str(source),
        "PYTHONSAFEPATH": "1",
        "MEMORYCTL_CACHE_DIR": str(cache),
    }


def runs_from(env: dict[str, str], source: Path) -> bool:
    """Whether `python -m memoryctl` with `env`, started from here as the bench starts its
    servers, imports the package in `source` (and not today's, which an earlier
    bench measured as its own baseline)."""
    found = subprocess.run(
        [sys.executable, "-c", "import memoryctl; print(memoryctl.__file__)"],
        env=env,
        capture_output=True,
        text=True,
    )
    imported = Path(found.stdout.strip()).resolve()
    return found.returncode == 0 and imported.is_relative_to(source.resolve())


def vault_copy(root: Path) -> Path:
    """A copy of the vault for the baseline to serve: its live checks file proposals as
    they were then, which must not change what today's server is measured on."""
    copy = root.with_name(f"{root.name}-baseline")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root, copy, symlinks=True)
    return copy
