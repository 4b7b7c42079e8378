"""Running algorithms: devices, seeding, budgets and stopping, best-so-far, history, timing.

The modules, one concern each:

    minimizer.py    `minimize`, the front door: budgets, the chunk loop, stop criteria
    runner.py       `Runner`: a run set stepped with one engine; its result
    auto.py         engine choice: which engines a run set may use, what "auto" picks
    kernels/        each algorithm's fused CUDA (Triton) and native CPU (Numba) kernels
    graph.py        chunks of steps replayed from CUDA graphs (compiled or not)
    compiled.py     the compiled step: one frame per kind of run set, compiled whole
    islands.py      one run set over the ranks of a torchrun job, with migration
    checkpoint.py   checkpoints: atomic I/O, a runner's state taken and given back
    guard.py        the NaN policy;  history.py  sampled best-so-far;  progress.py  the bar
    ask_tell.py     `AskTell`: the caller evaluates what ask() gives and tell()s the values
    result.py       `Result`;  warmup.py  kernels built ahead of time;  device.py, rng.py,
    distributed.py, threads.py, profile.py, arguments.py  devices, streams, process groups, CPU
                    threads, phases, checks
"""

from .ask_tell import AskTell
from .device import resolve_device, resolve_dtype, set_cpu_threads
from .minimizer import minimize
from .result import Result
from .runner import Runner
from .warmup import warm_up

__all__ = ["AskTell", "Result", "Runner", "minimize", "resolve_device", "resolve_dtype", "set_cpu_threads", "warm_up"]
