"""A study across the ranks of a torchrun job: every unfinished unit runs once, on one rank,
and one process writes the results store.

- **Units.** A unit is what `run_configs` would run in one go: a batched configuration's
  missing repeats (one unit, seeded as in one process, so its numbers are the same), or one
  repeat of a configuration timed run by run. Rank 0 lists them from its store, orders them
  longest first and sends the list to every rank.
- **Balance.** Each rank takes the next unit from an atomic counter in the rendezvous store
  (`store.add`), so every unit goes to exactly one rank and a rank that finishes early
  takes the next one: the longest units start first and the short ones fill the gaps.
- **One writer.** A rank posts each finished unit's rows under its own key in the
  rendezvous store; a writer thread on rank 0, the only process that opens the SQLite file,
  commits them as they arrive, one transaction per unit. A run counts as finished once it
  is committed; a rank that dies loses only the unit in its hands, which the next run of
  the same command (with any number of ranks) computes again.
- **No hangs.** Every rank bumps a heartbeat counter every second. The writer notices a
  rank whose counter stopped for `timeout` seconds, commits what it has and ends the job on
  every rank with a one-line `DistributedError`; the other ranks notice a silent rank 0 the
  same way.
"""

from __future__ import annotations

import _thread
import dataclasses
import json
import os
import threading
import time
from collections.abc import Callable

from ..engine.distributed import DistributedError, Group, join, launched, lost
from ..interrupt import Interrupted
from .cells import parse_workers, plan_workers, run_cells, units
from .store import ResultStore
from .study import RunConfig, execute, run_configs

#: Seconds between heartbeats and between the writer's looks at the store.
BEAT = 1.0
POLL = 0.05

_phases = 0  # how many sharded studies this process ran: keys of one phase never meet another's


def study_group(devices: list[str], timeout: float | None = None) -> Group | None:
    """The torchrun job this process belongs to (joined), or None outside torchrun."""
    if not launched():
        return None
    return join("cuda" if any(d.startswith("cuda") for d in devices) else "cpu", timeout)


def run_study(study: str, configs: list[RunConfig], store: ResultStore | None, group: Group | None,
              on_progress: Callable[[RunConfig, int], None] | None = None, warm_timing: bool = True,
              parallel_cells: int | str = 1) -> list[dict]:
    """Every unfinished run of the study: in this process, or sharded over the job's ranks
    (then each rank's share, see `run_sharded`). `warm_timing`: see `study.execute`.
    `parallel_cells` ("auto" or a number): outside torchrun, the CPU units that run at once,
    in worker processes (`cells.plan_workers`, `cells.run_cells`); 1 runs them one by one here."""
    if group is None:
        if parallel_cells != 1:
            todo = [(configs[i], len(r)) for i, r in units(study, configs, store) if configs[i].device == "cpu"]
            workers, threads, why = plan_workers(parse_workers(parallel_cells), todo)
            if workers > 1:
                run_cells(study, configs, store, workers, threads, why, on_progress, warm_timing)
                return []
        run_configs(study, configs, store, on_progress, warm_timing)
        return []
    return run_sharded(study, configs, store, group, on_progress, warm_timing)


def run_sharded(study: str, configs: list[RunConfig], store: ResultStore | None, group: Group,
                on_progress: Callable[[RunConfig, int], None] | None = None, warm_timing: bool = True) -> list[dict]:
    """Run the study's unfinished units over all ranks; rank 0 passes the open store (the
    other ranks None) and sees `on_progress` for every committed batch, whichever rank ran it.

    Returns, on every rank, each rank's share: units, runs, busy seconds and the seconds
    from the start until its last unit ended (the balance: slowest against the mean)."""
    global _phases
    _phases += 1
    run_id = os.environ.get("TORCHELASTIC_RUN_ID", "job")
    restart = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
    prefix = f"heuriscale/{run_id}/{restart}/{_phases}"
    group.agree("the study to run (its name and configurations)", (study, [c.key() for c in configs]))
    plan = group.broadcast(units(study, configs, store) if group.lead else None, "sharing out the study's runs")
    shard = _Shard(group, prefix, study, configs, store, on_progress, warm_timing)
    shard.start()
    try:
        shard.work(plan)
        shard.wait_for_writer()
        if not shard.failure:  # (with a silent rank the gather would time out, with a vaguer message)
            shares = group.gather(shard.share)
    except (Interrupted, KeyboardInterrupt, DistributedError):
        # The watcher's failure names the rank that went silent: it wins over the error that
        # the main thread met meanwhile (its interrupt, or a collective timing out on that rank).
        if shard.failure:
            raise DistributedError(shard.failure) from None
        raise
    finally:
        shard.stop()
    if shard.failure:
        raise DistributedError(shard.failure)
    return shares


class _Shard:
    """One rank's side of a sharded study: its worker loop, heartbeat, and on rank 0 the writer."""

    def __init__(self, group: Group, prefix: str, study: str, configs: list[RunConfig], store, on_progress,
                 warm_timing: bool) -> None:
        self.group, self.prefix, self.study, self.configs = group, prefix, study, configs
        self.warm_timing = warm_timing
        self.store, self.on_progress = store, on_progress
        self.kv = group.store
        self.posted = 0
        self.share = {"rank": group.rank, "host": group.host, "units": 0, "runs": 0, "busy_s": 0.0, "ended_s": 0.0}
        self._started = time.perf_counter()
        self.failure: str | None = None
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._heartbeat, daemon=True, name="heuriscale-heartbeat")]
        if group.lead:
            self._threads.append(threading.Thread(target=self._write, daemon=True, name="heuriscale-writer"))

    def key(self, *parts) -> str:
        return "/".join([self.prefix, *map(str, parts)])

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        """Stop the threads; the writer first commits what is posted (the store stays open
        until it has returned, bounded by the timeout should the rendezvous store hang)."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=self.group.timeout)

    # -- this rank's units ----------------------------------------------------------------
    def work(self, plan: list[tuple[int, list[int]]]) -> None:
        try:
            self._work(plan)
        except (RuntimeError, OSError) as exc:  # the rendezvous store is gone (its host died)
            raise lost(self.group, "taking the next unit or posting a finished one", exc) from None

    def _work(self, plan: list[tuple[int, list[int]]]) -> None:
        while not self.failure:
            index = self.kv.add(self.key("next"), 1) - 1
            if index >= len(plan):
                break
            config_index, repeats = plan[index]
            config = self.configs[config_index]
            started = time.perf_counter()
            rows = execute(config, repeats, self.warm_timing)
            ended = time.perf_counter()
            self.share.update(units=self.share["units"] + 1, runs=self.share["runs"] + len(rows),
                              busy_s=self.share["busy_s"] + ended - started, ended_s=ended - self._started)
            for row in rows:
                row["config"] = dataclasses.asdict(config)
            payload = {"config": config_index, "rows": rows, "rank": self.group.rank}
            self.kv.set(self.key("rows", self.group.rank, self.posted), json.dumps(payload))
            self.posted += 1
            self.kv.add(self.key("posted"), 1)
        self.kv.set(self.key("done", self.group.rank), str(self.posted))

    def wait_for_writer(self) -> None:
        """Until rank 0 has committed every rank's rows (so all ranks leave the phase together)."""
        try:
            while not self.failure and not self.kv.check([self.key("committed")]):
                time.sleep(POLL * 4)
        except (RuntimeError, OSError) as exc:
            raise lost(self.group, "waiting for rank 0 to commit the last runs", exc) from None

    # -- liveness ---------------------------------------------------------------------------
    def _heartbeat(self) -> None:
        seen: dict[int, tuple[int, float]] = {}
        watch = list(range(self.group.world)) if self.group.lead else [0]
        while not self._stop.wait(BEAT):
            try:
                self.kv.add(self.key("beat", self.group.rank), 1)
                if self.kv.check([self.key("abort")]):
                    return self._fail(self.kv.get(self.key("abort")).decode())
                now = time.monotonic()
                for rank in watch:  # a rank that is done stops watching; rank 0 writes until the end
                    if rank == self.group.rank or (rank and self.kv.check([self.key("done", rank)])):
                        continue
                    beats = self.kv.add(self.key("beat", rank), 0)
                    if rank not in seen or seen[rank][0] != beats:
                        seen[rank] = (beats, now)
                    elif now - seen[rank][1] > self.group.timeout:
                        role = "rank 0 (the results writer)" if rank == 0 else f"rank {rank}"
                        return self._fail(f"{role} stopped answering {self.group.timeout:g} s ago; the runs it "
                                          "committed are stored: rerun the same command, with any number of "
                                          "ranks, to finish the study", broadcast=True)
            except (RuntimeError, OSError) as exc:  # the store itself is gone
                return self._fail(str(lost(self.group, "talking to the rendezvous store", exc)))

    def _fail(self, message: str, broadcast: bool = False) -> None:
        """Record the failure, tell the other ranks, and stop this rank's main thread."""
        if self.failure:
            return
        self.failure = message
        if broadcast:
            try:
                self.kv.set(self.key("abort"), message)
            except (RuntimeError, OSError):
                pass
        self._stop.set()
        _thread.interrupt_main()  # ends the unit in hands at its next chunk (Interrupted)

    # -- rank 0: the only writer --------------------------------------------------------------
    def _write(self) -> None:
        committed = [0] * self.group.world
        done: dict[int, int] = {}
        seen_posted = -1
        try:
            while not (self.failure or self._stop.is_set()):
                posted = self.kv.add(self.key("posted"), 0)
                if posted != seen_posted:
                    seen_posted = posted
                    self._commit_posted(committed)
                for rank in range(self.group.world):
                    if rank not in done and self.kv.check([self.key("done", rank)]):
                        done[rank] = int(self.kv.get(self.key("done", rank)))
                if len(done) == self.group.world and all(committed[r] >= done[r] for r in done):
                    self.kv.set(self.key("committed"), "1")
                    return
                time.sleep(POLL)
            self._commit_posted(committed)  # stopped early (a rank failed, a signal): keep what is posted
        except (RuntimeError, OSError) as exc:
            self._fail(str(lost(self.group, "collecting finished runs", exc)), broadcast=True)
        except Exception as exc:  # a store error: stop every rank rather than compute for nothing
            self._fail(f"the results writer failed: {exc}", broadcast=True)

    def _commit_posted(self, committed: list[int]) -> None:
        for rank in range(self.group.world):
            while self.kv.check([self.key("rows", rank, committed[rank])]):
                self._commit(self.key("rows", rank, committed[rank]))
                committed[rank] += 1

    def _commit(self, key: str) -> None:
        payload = json.loads(self.kv.get(key))
        config = self.configs[payload["config"]]
        self.store.add(self.study, config.key(), payload["rows"])
        self.kv.delete_key(key)
        if self.on_progress is not None:
            self.on_progress(config, len(payload["rows"]))
