"""CPU threads: how many the native kernels (Numba) and torch's CPU operations use.

By default every core; a rank that torchrun started with several ranks on its machine takes
its share, cores // LOCAL_WORLD_SIZE, so that the ranks do not each start a pool of every
core and fight over them; `set_cpu_threads` (the commands' `--cpu-threads`) and
$HEURISCALE_CPU_THREADS override it. Results say what was used (`extra["cpu_threads"]`) and
why (`extra["cpu_threads_from"]`).
"""

from __future__ import annotations

import importlib.util
import os

import torch

#: Threads for this process, overriding the default (and a torchrun rank's share).
THREADS_ENV = "HEURISCALE_CPU_THREADS"
#: Why the CPU threads are what they are, once decided (None: not yet).
_threads_source: str | None = None


def set_cpu_threads(n: int) -> None:
    """Use `n` CPU threads in the native kernels (Numba) and in torch's CPU operations; n=1
    gives the papers' single-threaded CPU versions. By default both use every core; a rank
    that torchrun started takes its share of them (see `default_cpu_threads`). An explicit
    call wins over both."""
    global _threads_source
    _use_threads(n)
    _threads_source = "set explicitly"


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
      = k > 1) takes its share, max(1, cores // k) (cores: its affinity mask), so that k
      ranks on one machine do not each start a pool of every core and fight over them;
      $NUMBA_NUM_THREADS set by the user is respected instead (Numba's pool is then that
      size; torchrun's own OMP_NUM_THREADS=1 is not taken as the user's choice);
    - else every core (Numba's and torch's default).
    Returns the reason, which results carry as `extra["cpu_threads_from"]`.
    """
    global _threads_source
    if _threads_source is not None:
        return _threads_source
    text = os.environ.get(THREADS_ENV)
    local_world = _env_count("LOCAL_WORLD_SIZE")
    if text is not None:
        n = _env_count(THREADS_ENV)
        if n is None:
            raise ValueError(f"${THREADS_ENV}={text!r}: give a whole number of threads >= 1")
        _use_threads(n)
        _threads_source = f"${THREADS_ENV}"
    elif local_world is not None and local_world > 1 and "NUMBA_NUM_THREADS" in os.environ:
        _threads_source = "$NUMBA_NUM_THREADS"
    elif local_world is not None and local_world > 1:
        cores = cpu_cores()
        n = max(1, cores // local_world)
        if importlib.util.find_spec("numba") is not None:
            import numba

            n = min(n, numba.config.NUMBA_NUM_THREADS)
        _use_threads(n)
        _threads_source = f"share of {cores} cores among {local_world} ranks on this machine"
    else:
        _threads_source = "default (all cores)"
    return _threads_source


def _env_count(name: str) -> int | None:
    """$name as an integer >= 1, None when unset or not one."""
    try:
        n = int(os.environ.get(name, ""))
    except ValueError:
        return None
    return n if n >= 1 else None


def _use_threads(n: int) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"cpu threads must be an integer >= 1, got {n!r}")
    if importlib.util.find_spec("numba") is not None:
        import numba

        if n > numba.config.NUMBA_NUM_THREADS:
            raise ValueError(f"cpu threads: {n} asked, but Numba runs at most {numba.config.NUMBA_NUM_THREADS} here "
                             "(the cores; set NUMBA_NUM_THREADS before starting Python to allow more)")
        numba.set_num_threads(n)
    torch.set_num_threads(n)
