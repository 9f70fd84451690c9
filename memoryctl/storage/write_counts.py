"""The recent writes of each agent, counted in one file that every server process of a
vault shares (an HTTP server's workers), so a writes-a-minute limit holds across them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memoryctl.storage.vault import VaultError

WINDOW_SECONDS = 60.0


def admit(ledger: Path, agent: str, now: float, per_minute: int) -> float | None:
    """Count one write of `agent` at `now` (seconds since the epoch) if it has made fewer
    than `per_minute` in the last minute, and return None; else count nothing and return
    the time of its oldest write in that minute.

    One `BEGIN IMMEDIATE` transaction: two processes never admit the same last write."""
    try:
        ledger.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(ledger, timeout=30, isolation_level=None)
    except (OSError, sqlite3.Error) as error:
        raise VaultError(f"{ledger}: the agents' write counts: {error}") from None
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS writes(agent TEXT NOT NULL, at REAL NOT NULL)")
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("DELETE FROM writes WHERE at <= ?", (now - WINDOW_SECONDS,))
        rows = conn.execute("SELECT at FROM writes WHERE agent = ? ORDER BY at", (agent,))
        times = [at for (at,) in rows]
        if len(times) < per_minute:
            conn.execute("INSERT INTO writes(agent, at) VALUES (?, ?)", (agent, now))
        conn.execute("COMMIT")
        return times[0] if len(times) >= per_minute else None
    except sqlite3.Error as error:
        raise VaultError(f"{ledger}: the agents' write counts: {error}") from None
    finally:
        conn.close()
