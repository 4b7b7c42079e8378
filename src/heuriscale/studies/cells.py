"""Several configurations of a CPU study at once, in worker processes, one writer.

A campaign cell (an algorithm on a function: all its runs, one unit of the study) whose
work per iteration is too small for every core leaves most of a big machine idle when cells
run one after another: the rule (`engine.threads`) gives a 30-run CEC 2022 cell at D = 10 at
most 14 threads (one per 2,048 coordinates), and a function that torch evaluates between two
kernel calls (BBOB, a user's objective) is hardly sped up by threads at that size
(docs/cpu-threads.md).
`run_cells` runs several units at once instead:

- **Workers.** `workers` processes started with the "spawn" method (a fork would copy the
  thread pools of torch and Numba in whatever state they are), each running one unit at a
  time from a shared queue, the longest first (`units`), so that a machine's cores stay busy
  until the last short units. Each worker's CPU threads are capped at its share
  (`engine.threads.share_cpu_threads`, and Numba's pool sized to it), so the workers
  together never start more threads than planned (`plan_workers`).
- **One writer.** A worker sends each finished unit's rows back; this process alone opens
  the results store and commits them, one transaction per unit, as they arrive. The rows
  are those the serial study writes (each unit is seeded by its configuration, and the
  native kernels give the same numbers on any number of threads), so the store and every
  report made from it are those of a serial campaign, but for what records how a run ran:
  its times and its threads (`extra["cpu_threads"]`, `extra["cpu_threads_from"]`). (An
  objective evaluated by torch between kernel calls runs on the worker's threads: one
  whose values depend on torch's thread count, as a large parallel reduction's last bits
  can, would differ as it does under another --cpu-threads.)
- **Interrupts.** Workers ignore SIGINT (a terminal's Ctrl-C reaches the whole process
  group; this process decides). On the first SIGINT or SIGTERM, or a failed unit, this
  process commits every unit whose rows have arrived, stops the workers (SIGTERM) and
  raises; what was committed stays, and the same command computes the rest. Linux ends the
  workers with this process should it be killed outright (PR_SET_PDEATHSIG).
- **Spawn and scripts.** A spawned process imports the main module of the program again:
  a script that calls `compare` outside `if __name__ == "__main__":` would run again in
  every worker. `spawn_problem` recognises that case; "auto" then runs the units one by one
  and says why, and an explicit number of workers is refused before any work.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import multiprocessing
import os
import queue
import signal
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

from .. import algorithms
from ..engine import threads as cpu_threads
from ..interrupt import deferred
from .store import ResultStore
from .study import RunConfig, build, execute

#: Below this much work in all (iterations x runs x population x dimension, summed over the
#: units to run), "auto" runs the units one by one: starting the workers (each imports torch
#: and loads its kernels from Numba's cache) takes seconds. Measured (docs/cpu-threads.md): a
#: CEC 2022 campaign of 2.4 x 10^8 (20 cells) took 14.7 s with 16 workers on 16 cores against
#: 19.2 s one cell at a time, its report included.
MIN_WORK = 2 * 10**8
#: Fewer cores than this, "auto" runs the units one by one: two or three workers save little
#: against the rule's threads and pay each worker's start (on the shared 2-core development
#: machine, two workers took longer than one cell at a time: benchmarks/campaign_cells.py).
MIN_CORES = 4
#: Memory a worker may need (torch, Numba, its kernels and a run set), for "auto"'s bound.
WORKER_MEMORY = 1 << 30
#: Seconds between this process's looks at its workers while it waits for rows.
POLL = 0.2


def units(study: str, configs: list[RunConfig], store: ResultStore) -> list[tuple[int, list[int]]]:
    """(index of the configuration, repeats) of every unfinished unit, longest first."""
    todo = []
    for i, config in enumerate(configs):
        missing = [r for r in range(config.runs) if r not in store.finished(study, config.key())]
        if not missing:
            continue
        batched = config.timing == "batched" and not config.snapshots
        todo += [(i, missing)] if batched else [(i, [r]) for r in missing]
    return sorted(todo, key=lambda unit: -cost(configs[unit[0]], len(unit[1])))


def population(config: RunConfig) -> int:
    pop = config.algorithm_params.get("pop_size")
    return pop if pop is not None else algorithms.get_algorithm(config.algorithm, preset=config.preset).pop_size


def cost(config: RunConfig, runs: int) -> float:
    """Relative work of a unit: iterations x runs x population x dimension (for ordering only)."""
    return float(config.iters) * runs * population(config) * max(config.dim or 1, 1)


def team(config: RunConfig, runs: int, cap: int, inside: dict) -> int:
    """The threads the rule would give a unit alone under `cap`: one per THREAD_GRAIN
    coordinates of its iteration (runs x population x dimension), at most one per block of
    rows of each run, where native kernels run its algorithm and compute its objective; one
    where the engine evaluates the objective between kernel calls, or torch runs the steps,
    which threads hardly speed up at a cell's sizes (docs/cpu-threads.md). `inside` remembers
    each configuration's answer but for its runs."""
    from ..engine.kernels.cpu_common import BLOCK_ROWS, PARALLEL_MIN
    from ..engine.kernels.cpu_objectives import inline_fid

    key = json.dumps({k: v for k, v in dataclasses.asdict(config).items() if k not in ("runs", "iters", "tags")},
                     sort_keys=True, default=str)
    if key not in inside:
        problem, algorithm = build(config)
        kernels = getattr(algorithm, "kernels", None)  # (a Hybrid with refinement has none)
        inside[key] = (not config.host_fitness and kernels is not None and kernels.has("cpu")
                       and bool(inline_fid(problem)))
    if not inside[key]:
        return 1
    pop, dim = population(config), max(config.dim or 1, 1)
    return cpu_threads.threads_for_work(runs * pop * dim, runs * -(-pop // BLOCK_ROWS), cap, PARALLEL_MIN)[0]


def whole_number(what: str, value) -> int:
    """`value` as a whole number >= 1 (an int, or a string or float that is one), else a
    one-line ValueError naming `what`."""
    try:
        n = int(value)
        ok = not isinstance(value, bool) and float(value) == n and n >= 1
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"{what} must be a whole number >= 1, got {value!r}")
    return n


def parse_workers(value: int | str | None) -> int | str:
    """"auto" (also None), or a whole number >= 1 of units at once; a one-line error otherwise."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "auto"):
        return "auto"
    try:
        return whole_number("parallel cells", value)
    except ValueError:
        raise ValueError(f"parallel cells: give auto or a whole number >= 1 of cells at once, got {value!r}") from None


def plan_workers(requested: int | str, todo: list[tuple[RunConfig, int]], cores: int | None = None,
                 memory: int | None = None) -> tuple[int, int, str]:
    """(workers, CPU threads each, why) for the CPU units `todo` ((configuration, runs) each).

    "auto": one unit at a time (workers = 1) with fewer than two units, less than MIN_WORK in
    all, fewer than MIN_CORES cores, or a main script that spawned workers would run again
    (`spawn_problem`); else one worker per the threads a typical unit takes alone (`team`, the
    median: a 30-run CEC 2022 cell at D = 10 takes 14, one evaluated between kernel calls 1;
    with a fixed count of threads, `set_cpu_threads`, that count, and teams within half the
    cores), at most one per unit and one per WORKER_MEMORY of available memory: on 16 cores
    such CEC cells run one at a time, on 64 four at once. A number asks for that many (at
    most one per unit). Threads: a fixed count when there is one; else one per worker when
    the workers take every core (one thread waits at no barrier: a worker the system takes off
    its core delays only itself), else every core but one shared among them, at most the
    rule's cap (`engine.threads.rule_cap`; a kernel's threads meet at a barrier every step,
    see `engine.threads`); inside its share a worker's rule gives each run set the threads
    its work per iteration can use."""
    cores = cpu_threads.cpu_cores() if cores is None else cores
    fixed = cpu_threads.fixed_cpu_threads()
    cap = cpu_threads.rule_cap(cores)
    if requested == "auto":
        work = sum(cost(config, runs) for config, runs in todo)
        why_not = ("fewer than two cells to run" if len(todo) < 2 else
                   f"{cores} core{'s' * (cores > 1)}, fewer than {MIN_CORES}" if cores < MIN_CORES else
                   f"{work:.2g} coordinate updates in all, less than {MIN_WORK:.0e}" if work < MIN_WORK else
                   spawn_problem())
        if why_not:
            if why_not.endswith("__main__\":`"):  # a script that could run faster with a guard: say so
                warnings.warn(f"cells run one at a time: {why_not} to run several at once", stacklevel=3)
            return 1, fixed or 0, f"one cell at a time: {why_not}"
        memory = _available_memory() if memory is None else memory
        bound = max(1, memory // WORKER_MEMORY) if memory else cores
        if fixed:  # cores a worker takes (teams of a fixed count: within half of them)
            per = 2 * fixed if fixed > 1 else 1
        else:  # the threads a typical cell takes alone
            inside = {}
            per = sorted(team(config, runs, cap, inside) for config, runs in todo)[len(todo) // 2]
        workers = min(len(todo), max(1, cores // per), bound)
        if workers < 2:
            room = (f"{cores} cores" if per == 1 else f"{cores} cores for {fixed} threads a cell" if fixed else
                    f"a cell takes {per} of the {cap} threads the rule allows on {cores} cores") + (
                f", {memory / 2**30:.1f} GiB available" if memory else "")
            return 1, fixed or 0, f"one cell at a time: room for one worker ({room})"
    else:
        workers = min(requested, max(1, len(todo)))
        if workers > 1 and (why_not := spawn_problem()):
            raise ValueError(f"{workers} cells at once: {why_not}")
        if workers < 2:
            return 1, fixed or 0, "one cell at a time: asked for" if requested == 1 else "one cell to run"
    threads = fixed or (1 if workers >= cores else max(1, min(cap, (cores - 1) // workers)))
    return workers, threads, f"{workers} cells at once on {cores} cores, {threads} thread{'s' * (threads > 1)} each"


def spawn_problem() -> str | None:
    """Why worker processes cannot be spawned safely from here (None: they can): inside a
    worker already, or called from the top level of a script outside its
    `if __name__ == "__main__":` (each spawned worker would run the script again)."""
    if multiprocessing.parent_process() is not None:
        return "this is a worker process already (a campaign inside one runs its cells one by one)"
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and (spec.name == "__main__" or spec.name.endswith(".__main__")):
        return None  # `python -m package`: spawn does not import such a main module again
    path = getattr(main, "__file__", None)
    if main is None or path is None:
        return None  # an interactive session or a notebook: nothing is imported again
    frame = sys._getframe(1)
    while frame is not None and not (frame.f_globals is vars(main) and frame.f_code.co_name == "<module>"):
        frame = frame.f_back
    if frame is None:
        return None  # called from a thread or a callback, after the script's top level ran
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        tree = None
    guarded = tree is not None and any(_is_main_guard(node) and node.lineno <= frame.f_lineno <= node.end_lineno
                                       for node in tree.body)
    return None if guarded else (f"{path} runs this at its top level, which each spawned worker would run again: "
                                 "call it under `if __name__ == \"__main__\":`")


def _is_main_guard(node) -> bool:
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare) or len(node.test.comparators) != 1:
        return False
    sides = {ast.unparse(node.test.left), ast.unparse(node.test.comparators[0])}
    return isinstance(node.test.ops[0], ast.Eq) and sides in ({"__name__", "'__main__'"}, {"__name__", '"__main__"'})


def run_cells(study: str, configs: list[RunConfig], store: ResultStore, workers: int, threads: int, why: str,
              on_progress: Callable[[RunConfig, int], None] | None = None, warm_timing: bool = True) -> None:
    """Every unfinished CPU unit of the study in `workers` processes of `threads` CPU threads
    each (0: the rule's), committed here as each arrives; units on other devices after them, here."""
    todo = units(study, configs, store)
    here = [u for u in todo if configs[u[0]].device != "cpu"]
    todo = [u for u in todo if configs[u[0]].device == "cpu"]
    context = multiprocessing.get_context("spawn")
    tasks, results = context.Queue(), context.Queue()
    for index, repeats in todo:
        tasks.put((configs[index], repeats, warm_timing))
    fixed = cpu_threads.fixed_cpu_threads()
    processes = [context.Process(target=_worker, args=(tasks, results, threads, fixed, why),
                                 name=f"heuriscale-cell-{k}") for k in range(min(workers, len(todo)))]
    for _ in processes:
        tasks.put(None)  # one end-of-work mark per worker
    committed, in_hand = 0, {}
    try:
        for process in processes:
            process.start()
        while committed < len(todo):
            with deferred():  # a signal waits for a message half read or a commit half made
                try:
                    message = results.get(timeout=POLL)
                except queue.Empty:
                    _check_alive(processes, in_hand)
                    if any(process.exitcode is None for process in processes):
                        continue
                    message = results.get(timeout=5 * POLL)  # all ended: a last look (Empty: rows missing)
                committed += _receive(message, study, store, in_hand, on_progress)
    except queue.Empty:
        raise RuntimeError(f"the cell workers ended with {len(todo) - committed} of {len(todo)} cells not handed "
                           "back: the others are stored; rerun the same command to compute the rest") from None
    except BaseException:
        with deferred():
            _drain(results, study, store, in_hand, on_progress)  # keep every unit whose rows arrived
        _stop(processes)
        raise
    finally:
        tasks.cancel_join_thread()  # (tasks the stopped workers never took: nothing waits for them)
        _stop(processes, wait=5)
    for index, repeats in here:
        _commit(study, store, configs[index], execute(configs[index], repeats, warm_timing), on_progress)


def _receive(message, study, store, in_hand, on_progress) -> int:
    """Act on a worker's message; 1 when it was a unit's rows (committed), else 0."""
    kind, pid, payload = message
    if kind == "start":
        in_hand[pid] = payload
        return 0
    if kind == "error":
        raise payload
    config, rows = payload
    in_hand.pop(pid, None)
    _commit(study, store, config, rows, on_progress)
    return 1


def _commit(study: str, store: ResultStore, config: RunConfig, rows: list[dict], on_progress) -> None:
    for row in rows:
        row["config"] = dataclasses.asdict(config)
    store.add(study, config.key(), rows)
    if on_progress is not None:
        on_progress(config, len(rows))


def _drain(results, study, store, in_hand, on_progress) -> None:
    """Commit the rows that have arrived (never waiting for a unit still running)."""
    while True:
        try:
            message = results.get(timeout=0.05)
        except Exception:  # noqa: BLE001 - nothing more arrived whole (queue.Empty), or the pipe broke
            return
        if message[0] == "rows":
            _receive(message, study, store, in_hand, on_progress)


def _check_alive(processes, in_hand) -> None:
    for process in processes:
        if process.exitcode not in (None, 0):
            unit = in_hand.get(process.pid)
            what = f" running {unit}" if unit else ""
            raise RuntimeError(f"a cell worker process ended with exit status {process.exitcode}{what} (out of "
                               "memory?): the finished cells are stored; rerun the same command with "
                               "--parallel-cells 1 (or fewer) to compute the rest")


def _stop(processes, wait: float = 0.0) -> None:
    """End the workers: those still running after `wait` seconds (they end by themselves after
    their last unit) by SIGTERM."""
    for process in processes:
        if process.pid is not None and wait:
            process.join(timeout=wait)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        if process.pid is not None:
            process.join(timeout=10)


def _worker(tasks, results, threads: int, fixed: int | None, why: str) -> None:
    """A worker: its threads, then units from `tasks` until the end mark, rows to `results`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    if fixed:
        os.environ["NUMBA_NUM_THREADS"] = str(max(fixed, 1))
        cpu_threads.set_cpu_threads(fixed)
    elif threads:
        if "numba" not in sys.modules:  # Numba's pool: this worker's share, not every core
            os.environ["NUMBA_NUM_THREADS"] = str(threads)
        cpu_threads.share_cpu_threads(threads, why)
    pid = os.getpid()
    while (task := tasks.get()) is not None:
        config, repeats, warm_timing = task
        results.put(("start", pid, f"{config.algorithm} on {config.problem} (D = {config.dim})"))
        try:
            rows = execute(config, repeats, warm_timing)
        except Exception as exc:  # noqa: BLE001 - handed to the parent, which raises it
            results.put(("error", pid, _picklable(exc)))
            return
        results.put(("rows", pid, (config, rows)))


def _picklable(exc: Exception) -> Exception:
    import pickle

    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001
        return RuntimeError(f"{type(exc).__name__}: {exc}")


def _die_with_parent() -> None:
    """Linux: SIGKILL this worker when its parent ends (killed outright, it runs no cleanup)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


def _available_memory() -> int | None:
    """Bytes of memory available (/proc/meminfo's MemAvailable), None where unknown."""
    try:
        for line in Path("/proc/meminfo").read_text(encoding="ascii").splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None

