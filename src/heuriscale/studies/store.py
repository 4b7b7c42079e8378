"""The results store: one committed SQLite row per finished run.

A study that is interrupted loses at most the runs in flight; rerunning it asks the store
which runs of each configuration are finished and computes only the others.

Integrity, in short (docs/reliability.md has the long form):

- One writer at a time: a writable store holds an exclusive advisory lock
  (`fcntl.flock` on `<store>.lock`, which records the holder's pid) from opening to
  `close()`; a second writer is refused at once with a `StoreError` naming that pid. The
  kernel drops the lock when the holder exits, however it exits (SIGKILL included), so
  there are no stale locks to clean up. `close()` removes the lock file while still holding
  the lock (a process killed before closing leaves it behind, harmless: the next writer
  takes it over); a writer that locked a file since unlinked notices and locks the new one,
  so two writers never hold locks on different files. Readers
  (`readonly=True`) take no lock and see every committed run.
- A finished run is never replaced: `add` is a plain INSERT in one transaction per batch;
  a (study, config_key, repeat) already stored makes the whole batch fail with a
  `StoreError` and leaves the store as it was.
- The schema carries a version (`PRAGMA user_version`, `SCHEMA_VERSION`); a store from a
  newer heuriscale, a file that is not a results store, or a damaged one (checked with
  `PRAGMA quick_check` on opening) is refused with a `StoreError`, never written to.
- SQLite waits at most `timeout` seconds for a lock held by another program, then fails
  with a `StoreError`.

Every `StoreError` message is one line: what is wrong with which file, and what to do.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import statistics
import warnings
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; one writer at a time is then up to the user
    fcntl = None

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

# The layout above is schema 1. Stores written before schema versions existed have the same
# layout and user_version 0; opening them for writing stamps them as 1.
SCHEMA_VERSION = 1
_COLUMNS = {"study", "config_key", "repeat", *FIELDS}
_WHAT_TO_DO = "move it away or choose another --out"


class StoreError(ValueError):
    """A results store that cannot be used (not a store, damaged, from a newer heuriscale,
    in use, locked, or a finished run about to be replaced). The message is one line: what
    is wrong with which file and what to do."""


class ResultStore:
    """Runs of studies in one SQLite file.

    `ResultStore(path)` opens (or creates) it for writing and holds its lock until
    `close()` (or the end of a `with` block); `ResultStore(path, readonly=True)` reads an
    existing store without a lock, also while a study writes to it. `timeout`: seconds to
    wait for a lock that another program holds on the SQLite file itself.
    """

    def __init__(self, path: str | Path, *, readonly: bool = False, timeout: float = 10.0) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self.timeout = timeout
        self._lock_fd: int | None = None
        self.db: sqlite3.Connection | None = None
        try:
            if readonly:
                if not self.path.is_file():
                    raise StoreError(f"results store {self.path} does not exist")
                with self._errors():
                    self.db = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, timeout=timeout)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._lock_fd = _lock(self.path)
                with self._errors():
                    # One writer, but possibly on another thread than the opener: a sharded
                    # study's lead rank commits from its writer thread (never two at once).
                    self.db = sqlite3.connect(self.path, timeout=timeout, check_same_thread=False)
            self._open()
        except BaseException:
            self.close()
            raise

    def _open(self) -> None:
        """Check that the file is a sound results store of a schema we read; create or stamp it."""
        with self._errors():
            version = self.db.execute("PRAGMA user_version").fetchone()[0]  # reads the header: garbage fails here
            if version > SCHEMA_VERSION:
                raise StoreError(f"results store {self.path} was written by a newer heuriscale (schema {version}, "
                                 f"this version reads up to {SCHEMA_VERSION}): upgrade heuriscale or choose another --out")
            tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "runs" in tables:
                missing = _COLUMNS - {r[1] for r in self.db.execute("PRAGMA table_info(runs)")}
                if missing:
                    raise StoreError(f"results store {self.path} is not a heuriscale results store (its runs table "
                                     f"lacks {', '.join(sorted(missing))}): {_WHAT_TO_DO}")
            elif tables or self.readonly:
                what = f"an SQLite database with tables {', '.join(sorted(tables))}" if tables else "an empty file"
                raise StoreError(f"results store {self.path} is not a heuriscale results store ({what}): {_WHAT_TO_DO}")
            check = [r[0] for r in self.db.execute("PRAGMA quick_check")]
            if check != ["ok"]:
                raise sqlite3.DatabaseError(check[0])
            if self.readonly:
                return
            self.db.execute("PRAGMA journal_mode=WAL")
            if version < SCHEMA_VERSION:
                with self.db:
                    self.db.execute(SCHEMA)
                    self.db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @contextmanager
    def _errors(self):
        """SQLite's errors as one-line `StoreError`s that say what to do."""
        try:
            yield
        except StoreError:
            raise
        except sqlite3.DatabaseError as exc:
            raise StoreError(_explain(self.path, exc, self.timeout, self.readonly)) from exc

    def finished(self, study: str, config_key: str) -> set[int]:
        with self._errors():
            rows = self.db.execute("SELECT repeat FROM runs WHERE study = ? AND config_key = ?", (study, config_key))
            return {r[0] for r in rows}

    def add(self, study: str, config_key: str, runs: list[dict]) -> None:
        """Commit finished runs (dicts with `repeat` and the FIELDS) in one transaction.

        Never replaces a stored run: if any (study, config_key, repeat) of the batch is already
        in the store, the whole batch is rolled back and a `StoreError` is raised (inside one
        study process this cannot happen, as only missing runs are computed and the lock keeps
        other writers out; it means a bug or a writer that bypassed the lock).
        """
        with self._errors():
            try:
                with self.db:
                    self.db.executemany(
                        f"INSERT INTO runs (study, config_key, repeat, {', '.join(FIELDS)}) "
                        f"VALUES (?, ?, ?, {', '.join('?' * len(FIELDS))})",
                        [
                            (study, config_key, run["repeat"],
                             *[json.dumps(run[f]) if f in JSON_FIELDS else run[f] for f in FIELDS])
                            for run in runs
                        ],
                    )
            except sqlite3.IntegrityError as exc:
                if "UNIQUE" not in str(exc):
                    raise
                stored = sorted(self.finished(study, config_key) & {run["repeat"] for run in runs})
                what = (f"already holds run(s) {', '.join(map(str, stored))}" if stored else
                        "was given the same run twice in one batch")
                raise StoreError(f"results store {self.path} {what} of configuration {config_key} of study {study!r}: "
                                 f"finished runs are never replaced, nothing of this batch was written"
                                 f"{' (is another program writing to this store?)' if stored else ''}") from exc

    def runs(self, study: str, config_key: str | None = None) -> list[dict]:
        query = f"SELECT config_key, repeat, {', '.join(FIELDS)} FROM runs WHERE study = ?"
        args: tuple = (study,)
        if config_key is not None:
            query += " AND config_key = ?"
            args += (config_key,)
        out = []
        with self._errors():
            for row in self.db.execute(query + " ORDER BY config_key, repeat", args):
                run = dict(zip(("config_key", "repeat", *FIELDS), row))
                for f in JSON_FIELDS:
                    run[f] = json.loads(run[f])
                out.append(run)
        return out

    def close(self) -> None:
        """Close the file and release the lock (idempotent)."""
        if self.db is not None:
            self.db.close()
            self.db = None
        if self._lock_fd is not None:
            # unlink while still holding the lock, so a finished study leaves no <store>.lock behind;
            # a writer waiting on the old file notices the unlink (see _lock) and locks a new one
            lock_path = self.path.with_name(self.path.name + ".lock")
            try:
                if os.path.samestat(os.fstat(self._lock_fd), os.stat(lock_path)):
                    os.unlink(lock_path)
            except OSError:
                pass
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _lock(path: Path) -> int | None:
    """Take the exclusive advisory lock `<path>.lock` without waiting; return its descriptor.

    The lock belongs to the open file description, so the kernel releases it when the
    descriptor is closed or the process ends in any way. The file holds the holder's pid
    for the message of the next one to try.
    """
    if fcntl is None:
        return None
    lock_path = path.with_name(path.name + ".lock")
    while True:
        fd = _lock_once(path, lock_path)
        if fd is None:
            return None
        try:  # the holder before us may have unlinked the file between our open and our flock
            if os.path.samestat(os.fstat(fd), os.stat(lock_path)):
                break
        except FileNotFoundError:
            pass
        os.close(fd)  # a lock on a removed file guards nothing: lock the file now at that path
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def _lock_once(path: Path, lock_path: Path) -> int | None:
    """Open `lock_path` and take its exclusive lock without waiting (None: no locks here)."""
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise StoreError(f"results store {path} cannot be locked ({exc.strerror} for {lock_path}): "
                         f"check the folder's permissions or choose another --out") from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            os.close(fd)  # a file system without locks: carry on, one writer at a time is up to the user
            warnings.warn(f"results store {path}: no lock ({exc.strerror}); do not run two studies into it at once",
                          stacklevel=4)
            return None
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
        os.close(fd)
        if holder == str(os.getpid()):
            raise StoreError(f"results store {path} is already open for writing in this process: "
                             f"close the other ResultStore first") from None
        who = f"pid {holder}" if holder.isdigit() else "pid unknown"
        raise StoreError(f"results store {path} is in use by another heuriscale process ({who}): "
                         f"wait for it or use another --out") from None
    return fd


def _explain(path: Path, exc: sqlite3.DatabaseError, timeout: float, readonly: bool) -> str:
    """One line for an SQLite error: what is wrong with the store and what to do."""
    text = " ".join(str(exc).split())  # quick_check reports span lines
    if isinstance(exc, sqlite3.IntegrityError):
        return f"results store {path}: {text}"
    if "not a database" in text:
        return f"results store {path} is not a heuriscale results store (file is not a database): {_WHAT_TO_DO}"
    if "locked" in text or "busy" in text:
        return (f"results store {path} is locked by another program ({text}, waited {timeout:g} s): "
                f"close that program or use another --out")
    if "readonly" in text or "read-only" in text:
        if readonly:
            return f"results store {path} was opened read-only ({text}): open it without readonly=True to write"
        return f"results store {path} cannot be written ({text}): check the file's permissions or choose another --out"
    if "malformed" in text or "corrupt" in text or not isinstance(exc, sqlite3.OperationalError):
        return (f"results store {path} is damaged ({text}): move it away and rerun (its runs are computed again) "
                f"or choose another --out")
    return f"results store {path} cannot be used ({text}): check the file and its folder or choose another --out"


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
