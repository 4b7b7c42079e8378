"""The results store: one committed SQLite row per finished run.

A study that is interrupted loses at most the runs in flight; rerunning it asks the store
which runs of each configuration are finished and computes only the others.
"""

from __future__ import annotations

import json
import sqlite3
import statistics
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    study TEXT NOT NULL,
    config_key TEXT NOT NULL,
    repeat INTEGER NOT NULL,
    config TEXT NOT NULL,
    seed INTEGER NOT NULL,
    device TEXT NOT NULL,
    device_name TEXT NOT NULL,
    best_f REAL NOT NULL,
    best_x TEXT NOT NULL,
    evals INTEGER NOT NULL,
    wall_time REAL NOT NULL,
    setup_time REAL NOT NULL,
    history TEXT NOT NULL,
    extra TEXT NOT NULL,
    created TEXT NOT NULL DEFAULT (datetime('now')),
    PRIMARY KEY (study, config_key, repeat)
)
"""

FIELDS = ("config", "seed", "device", "device_name", "best_f", "best_x", "evals", "wall_time", "setup_time",
          "history", "extra")
JSON_FIELDS = ("config", "best_x", "history", "extra")


class ResultStore:
    """Runs of studies in one SQLite file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(self.path)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute(SCHEMA)
        self.db.commit()

    def finished(self, study: str, config_key: str) -> set[int]:
        rows = self.db.execute("SELECT repeat FROM runs WHERE study = ? AND config_key = ?", (study, config_key))
        return {r[0] for r in rows}

    def add(self, study: str, config_key: str, runs: list[dict]) -> None:
        """Commit finished runs (dicts with `repeat` and the FIELDS) in one transaction."""
        with self.db:
            self.db.executemany(
                f"INSERT OR REPLACE INTO runs (study, config_key, repeat, {', '.join(FIELDS)}) "
                f"VALUES (?, ?, ?, {', '.join('?' * len(FIELDS))})",
                [
                    (study, config_key, run["repeat"],
                     *[json.dumps(run[f]) if f in JSON_FIELDS else run[f] for f in FIELDS])
                    for run in runs
                ],
            )

    def runs(self, study: str, config_key: str | None = None) -> list[dict]:
        query = f"SELECT config_key, repeat, {', '.join(FIELDS)} FROM runs WHERE study = ?"
        args: tuple = (study,)
        if config_key is not None:
            query += " AND config_key = ?"
            args += (config_key,)
        out = []
        for row in self.db.execute(query + " ORDER BY config_key, repeat", args):
            run = dict(zip(("config_key", "repeat", *FIELDS), row))
            for f in JSON_FIELDS:
                run[f] = json.loads(run[f])
            out.append(run)
        return out

    def close(self) -> None:
        self.db.close()


def describe(values: list[float]) -> dict[str, float]:
    """min, max, mean, median, std (sample) of a list of numbers."""
    if not values:
        return {k: float("nan") for k in ("min", "max", "mean", "median", "std")}
    return {
        "min": min(values),
        "max": max(values),
        "mean": statistics.fmean(values),
        "median": statistics.median(values),
        "std": statistics.stdev(values) if len(values) > 1 else 0.0,
    }
