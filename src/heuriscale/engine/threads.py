"""CPU threads: how many the native kernels (Numba) and torch's CPU operations use.

By default a native run set takes the threads its work per iteration can use
(`threads_for_work`): one below `parallel_min` coordinates an iteration, else one thread per
`THREAD_GRAIN` coordinates, never more threads than the kernel has independent pieces of
work (blocks of rows, or runs) and never more than the cap (`rule_cap`): every core but one,
at most `MAX_RULE_THREADS` (32), or a torchrun rank's share of the cores (cores //
LOCAL_WORLD_SIZE, so that the ranks of one machine do not each start a pool of every core
and fight over them).

Why not every core (docs/cpu-threads.md): every step of a kernel ends at a barrier of all its
threads, so one thread the system takes off its core stalls the step for a scheduler slice.
On the 16-core Xeon, 16 threads stalled in 2 of 90 samples (24x and 57x the time of 12
threads in the same round), 15 threads in none of 60 (too few to prove they never do), and 15
were within 1.09x of the fastest count in every 30-run configuration with a parallel build.
On the 64-core Xeon every core (64 threads) took 6-29 ms an iteration more than 32 wherever a
parallel build ran (4-323x the fastest count, Firefly 1,024 x 32 aside), and 32 threads were
the fastest count in every 30-run configuration with a parallel build; 33 to 63 were not
measured there, hence the bound of 32. On the 2-core development machine, shared with other
processes, two threads took 5.7-230x as long as one: the cap there is one. Less than about
2,048 coordinates an iteration per thread did not repay a thread.

`set_cpu_threads` (the commands' `--cpu-threads`) and $HEURISCALE_CPU_THREADS fix the count
instead and win over both the rule and the share. Results say what was used
(`extra["cpu_threads"]`) and why (`extra["cpu_threads_from"]`).

Numba's thread count is per calling thread and costs about 1.5 us to set, so a run set sets
it before each parallel launch only when this thread's count differs (`use_numba_threads`).
Torch's CPU operations (a torch objective between kernel calls, the eager engine) take the
cap (every core but one, at most 32, or the share) unless a count is fixed.
"""

from __future__ import annotations

import importlib.util
import os
import threading

import torch

#: Threads for this process, overriding the default (and a torchrun rank's share).
THREADS_ENV = "HEURISCALE_CPU_THREADS"
#: Coordinates of work an iteration per thread the rule gives (see `threads_for_work`).
THREAD_GRAIN = 2048
#: The most threads the rule gives a run set on any machine (the fastest count measured on 64 cores,
#: where every core stalled and 33-63 were not measured).
MAX_RULE_THREADS = 32
#: Why the CPU threads are what they are, once decided (None: not yet).
_threads_source: str | None = None
#: The count fixed by `set_cpu_threads` or $HEURISCALE_CPU_THREADS (None: the rule decides).
_fixed: int | None = None
#: The upper bound of the rule: `rule_cap` of the cores, or a torchrun rank's share (set with the source).
_cap: int | None = None
#: The most threads this process's CPU work may use: every core, or a torchrun rank's share.
_limit: int | None = None
#: Numba's count as this module last set it, per calling thread (Numba keeps one per thread).
_numba_set: dict[int, int] = {}


def set_cpu_threads(n: int | None) -> None:
    """Use `n` CPU threads in the native kernels (Numba) and in torch's CPU operations; n=1
    gives the papers' single-threaded CPU versions. By default (n=None) each native run set
    takes the threads its work can use (see `threads_for_work`), at most every core, or a
    torchrun rank's share of them. An explicit count wins over both."""
    global _threads_source, _fixed
    if n is None:
        _threads_source, _fixed = None, None
        _use_threads(_pool_size())  # (decided again, from the environment, before the next CPU work)
        return
    _use_threads(n)
    _threads_source, _fixed = "set explicitly", n


def cpu_cores() -> int:
    """The cores this process may run on: its affinity mask (what taskset, a container's
    cpuset or SLURM's --cpus-per-task give it), else every core of the machine."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS, Windows
        return os.cpu_count() or 1


def default_cpu_threads() -> str:
    """Decide this process's CPU threads once, before its first CPU work, and say why.

    - `set_cpu_threads(n)` (the commands' `--cpu-threads`) already called: kept;
    - else $HEURISCALE_CPU_THREADS = n: n threads;
    - else a rank started by torchrun with several ranks on its machine ($LOCAL_WORLD_SIZE
      = k > 1) takes at most its share, max(1, cores // k) (cores: its affinity mask), so
      that k ranks on one machine do not each start a pool of every core and fight over
      them; $NUMBA_NUM_THREADS set by the user is respected instead (Numba's pool is then
      that size; torchrun's own OMP_NUM_THREADS=1 is not taken as the user's choice);
    - else at most every core.
    Without a fixed count each native run set then takes what its work can use under that
    cap (`choose_threads`). Returns the reason, which results carry in
    `extra["cpu_threads_from"]`.
    """
    global _threads_source, _fixed, _cap, _limit
    if _threads_source is not None:
        return _threads_source
    text = os.environ.get(THREADS_ENV)
    local_world = _env_count("LOCAL_WORLD_SIZE")
    _cap = _pool_size()
    if text is not None:
        n = _env_count(THREADS_ENV)
        if n is None:
            raise ValueError(f"${THREADS_ENV}={text!r}: give a whole number of threads >= 1")
        _use_threads(n)
        _threads_source, _fixed = f"${THREADS_ENV}", n
    elif local_world is not None and local_world > 1 and "NUMBA_NUM_THREADS" in os.environ:
        _threads_source = "$NUMBA_NUM_THREADS"
    elif local_world is not None and local_world > 1:
        cores = cpu_cores()
        _cap = min(max(1, cores // local_world), _cap)
        _use_threads(_cap)
        _threads_source = f"share of {cores} cores among {local_world} ranks on this machine"
    else:
        pool = _cap
        _limit, _cap = pool, rule_cap(pool)
        _threads_source = f"{_cap} of {pool} cores" if pool == cpu_cores() else f"{_cap} of Numba's pool of {pool}"
        torch.set_num_threads(_cap)  # (its operations end at barriers too)
        return _threads_source
    _limit = _cap
    return _threads_source


def rule_cap(cores: int) -> int:
    """The most threads the rule gives a run set on `cores` cores: every core but one (so that
    what else the system runs finds a free core instead of stalling a kernel's barrier), at
    most `MAX_RULE_THREADS`, at least one."""
    return max(1, min(cores - 1, MAX_RULE_THREADS))


def threads_for_work(work: int, parts: int, cap: int, parallel_min: int, grain: int = THREAD_GRAIN) -> tuple[int, str]:
    """The threads a run set's iteration can use, and the rule's reason, as a pure function.

    `work`: about how many coordinate updates an iteration makes (the kernel's estimate:
    runs x population x dimension, or what its algorithm does per coordinate); `parts`: its
    independent pieces of parallel work (blocks of rows of every run, or runs); `cap`: the
    most threads allowed. One thread below `parallel_min` (a parallel region costs microseconds
    to open); else one per `grain` coordinates, at most `parts` and `cap`.
    """
    if cap <= 1:
        return 1, "one thread allowed"
    if work < parallel_min:
        return 1, f"below {parallel_min:,} coordinates an iteration, one thread is faster"
    if parts <= 1:
        return 1, "one piece of parallel work"
    n = min(cap, parts, max(1, work // grain))
    if n == cap:
        return n, f"one thread per {grain:,} coordinates, up to the cap"
    if n == parts:
        return n, f"one thread per piece of parallel work ({parts:,}), fewer than one per {grain:,} coordinates"
    return n, f"one thread per {grain:,} coordinates"


def choose_threads(work: int, parts: int, what: str, parallel_min: int) -> tuple[int, str]:
    """(threads, reason) for a native run set: a fixed count when there is one (it also runs
    work below `parallel_min` on one thread, in the serial build), else `threads_for_work`
    under the cap. `what` describes the work for the reason, e.g. "1,024 x 30 x 1 run"."""
    source = default_cpu_threads()
    if _fixed is not None:
        return _fixed, source
    cap = _cap if _cap is not None else _pool_size()
    n, rule = threads_for_work(work, parts, cap, parallel_min)
    return n, f"work {what}: {n} thread{'s' if n > 1 else ''} ({rule}; at most {cap}: {source})"


def use_numba_threads(n: int) -> None:
    """Numba's threads for this calling thread's next parallel launches (set only when they
    differ from what this module last set here: setting costs about 1.5 us)."""
    ident = threading.get_ident()
    if _numba_set.get(ident) != n:
        import numba

        numba.set_num_threads(n)
        _numba_set[ident] = n


def _env_count(name: str) -> int | None:
    """$name as an integer >= 1, None when unset or not one."""
    try:
        n = int(os.environ.get(name, ""))
    except ValueError:
        return None
    return n if n >= 1 else None


def _pool_size() -> int:
    """Numba's pool (every core unless $NUMBA_NUM_THREADS says otherwise), else the cores."""
    if importlib.util.find_spec("numba") is not None:
        import numba

        return numba.config.NUMBA_NUM_THREADS
    return cpu_cores()


def _use_threads(n: int) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"cpu threads must be an integer >= 1, got {n!r}")
    if importlib.util.find_spec("numba") is not None:
        import numba

        if n > numba.config.NUMBA_NUM_THREADS:
            raise ValueError(f"cpu threads: {n} asked, but Numba runs at most {numba.config.NUMBA_NUM_THREADS} here "
                             "(the cores; set NUMBA_NUM_THREADS before starting Python to allow more)")
        numba.set_num_threads(n)
        _numba_set.clear()  # (other threads keep theirs; they set theirs again at their next launch)
        _numba_set[threading.get_ident()] = n
    torch.set_num_threads(n)


def share_cpu_threads(n: int, why: str) -> None:
    """Cap this process's CPU threads at `n`, for the reason `why` (a worker process of a study
    that runs several configurations at once, `studies.cells`): each run set then takes what
    its work can use up to `n`, instead of up to `rule_cap` of the cores. A fixed count
    (`set_cpu_threads`, $HEURISCALE_CPU_THREADS) still wins."""
    global _threads_source, _cap, _limit
    default_cpu_threads()
    if _fixed is not None:
        return
    _cap = _limit = min(n, _pool_size())
    _use_threads(_cap)
    _threads_source = why


def fixed_cpu_threads() -> int | None:
    """The count fixed by `set_cpu_threads` or $HEURISCALE_CPU_THREADS, None when the rule decides."""
    default_cpu_threads()
    return _fixed


def thread_limit() -> int:
    """The most threads this process's CPU work may use: the fixed count, else every core (or
    a torchrun rank's share). What a new machine's first build compiles jobs with (processes
    that compile independently, with no barrier to wait at, so every core)."""
    default_cpu_threads()
    if _fixed is not None:
        return _fixed
    return _limit if _limit is not None else _pool_size()
