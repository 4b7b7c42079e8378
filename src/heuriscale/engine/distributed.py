"""Processes started by `torchrun`: joining the process group, binding the local GPU,
agreeing on what to run, and turning a lost or misconfigured rank into an error.

torchrun starts one process per GPU (or per CPU share) and gives each its `RANK`,
`WORLD_SIZE`, `LOCAL_RANK` and `LOCAL_WORLD_SIZE`, and a key-value store for the group's
rendezvous. On the CPU each rank uses its share of its machine's cores,
cores // LOCAL_WORLD_SIZE (`threads.default_cpu_threads`; $HEURISCALE_CPU_THREADS or
`--cpu-threads` override it). We use
only what torch.distributed provides: `init_process_group` (NCCL for CUDA tensors, Gloo
for CPU tensors), a Gloo group for small Python objects (which works whether or not a rank
has its GPU), collectives, and the rendezvous store for counters and heartbeats.

Every wait is bounded: `timeout` seconds (60 by default, `HEURISCALE_DIST_TIMEOUT` or the
commands' `--dist-timeout`) for joining, for collectives and for a rank that stops
answering; then every surviving rank raises `DistributedError`, whose message is one
line saying which rank and what to do, instead of hanging.
"""

from __future__ import annotations

import atexit
import datetime
import math
import os
import socket
from dataclasses import dataclass

import torch

from ..names import shorten

TIMEOUT_ENV = "HEURISCALE_DIST_TIMEOUT"
DEFAULT_TIMEOUT = 60.0


class DistributedError(RuntimeError):
    """A problem between ranks (configuration, devices, rendezvous, a rank gone); one line."""


def launched() -> bool:
    """True in a process that torchrun started with more than one rank."""
    return _env_int("WORLD_SIZE", 1) > 1


def local_rank() -> int | None:
    """This process's LOCAL_RANK under torchrun (its GPU on this machine), else None."""
    return _env_int("LOCAL_RANK", 0) if launched() else None


def timeout_seconds(value: float | None = None) -> float:
    """The bound on every wait between ranks: `value`, else $HEURISCALE_DIST_TIMEOUT, else 60 s."""
    source = "timeout" if value is not None else TIMEOUT_ENV
    if value is None:
        value = os.environ.get(TIMEOUT_ENV, DEFAULT_TIMEOUT)
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = math.nan
    if not 0 < seconds < math.inf:
        raise ValueError(f"{source} must be a number of seconds > 0, got {value!r}")
    return seconds


def _env_int(name: str, default: int) -> int:
    text = os.environ.get(name)
    if text is None:
        return default
    try:
        return int(text)
    except ValueError:
        raise DistributedError(f"${name}={text!r} is not an integer: start the processes with torchrun") from None


@dataclass
class Group:
    """This process's place in the job: rank, world size, its device, the object group and the store."""

    rank: int
    world: int
    local_rank: int
    device: torch.device
    timeout: float
    objects: object  # a Gloo process group for Python objects
    store: object  # the rendezvous key-value store (torch.distributed.Store)
    host: str

    @property
    def lead(self) -> bool:
        return self.rank == 0

    def gather(self, value, doing: str = "exchanging settings") -> list:
        """`value` of every rank, in rank order (a bounded wait)."""
        import torch.distributed as dist

        out = [None] * self.world
        try:
            dist.all_gather_object(out, value, group=self.objects)
        except RuntimeError as exc:
            raise lost(self, doing, exc) from None
        return out

    def broadcast(self, value, doing: str = "sharing rank 0's settings"):
        """Rank 0's `value` on every rank."""
        import torch.distributed as dist

        box = [value]
        try:
            dist.broadcast_object_list(box, src=0, group=self.objects)
        except RuntimeError as exc:
            raise lost(self, doing, exc) from None
        return box[0]

    def agree(self, what: str, value) -> None:
        """Raise the same DistributedError on every rank unless all ranks hold the same `value`."""
        values = self.gather(value)
        differ = [r for r, v in enumerate(values) if v != values[0]]
        if differ:
            ranks = ", ".join(map(str, differ[:8])) + (" ..." if len(differ) > 8 else "")
            raise DistributedError(f"ranks disagree on {what}: rank(s) {ranks} differ from rank 0; "
                                   "start every rank with the same command, arguments and heuriscale version")

    def barrier(self) -> None:
        """Wait until every rank is here (a bounded wait)."""
        self.gather(None)


_GROUP: Group | None = None


def join(device: str | torch.device = "auto", timeout: float | None = None) -> Group:
    """Join the torchrun job once per process (later calls return the same group).

    A CUDA device means this rank's local GPU, cuda:LOCAL_RANK; a rank that does not have
    it makes every rank fail with a message naming it, after all ranks have met (so none
    waits for it). Collectives on CUDA tensors use NCCL, on CPU tensors Gloo.
    """
    global _GROUP
    import torch.distributed as dist

    if _GROUP is not None:
        return _GROUP
    seconds = timeout_seconds(timeout)
    rank, world, local = _env_int("RANK", 0), _env_int("WORLD_SIZE", 1), _env_int("LOCAL_RANK", 0)
    wants_cuda = str(device).startswith("cuda") or (str(device) == "auto" and torch.cuda.is_available())
    problem = None
    if wants_cuda:
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if local >= count:
            problem = (f"rank {rank} on {socket.gethostname()} expects GPU cuda:{local} (LOCAL_RANK) but that "
                       f"machine has {count}: start at most {count} process(es) per machine (--nproc-per-node)")
        else:
            torch.cuda.set_device(local)
    backend = "cpu:gloo,cuda:nccl" if wants_cuda and problem is None else "gloo"
    if not dist.is_initialized():
        try:
            dist.init_process_group(backend=backend, timeout=datetime.timedelta(seconds=seconds))
        except (RuntimeError, ValueError, TimeoutError) as exc:
            where = f"{os.environ.get('MASTER_ADDR', '?')}:{os.environ.get('MASTER_PORT', '?')}"
            raise DistributedError(f"rank {rank} could not join the process group at {where} within {seconds:g} s "
                                   f"({_first_line(exc)}): check the rendezvous endpoint and that all "
                                   f"{world} ranks were started") from None
    objects = dist.new_group(backend="gloo", timeout=datetime.timedelta(seconds=seconds))
    store = dist.distributed_c10d._get_default_store()
    dev = torch.device("cuda", local) if wants_cuda and problem is None else torch.device("cpu")
    group = Group(rank, world, local, dev, seconds, objects, store, socket.gethostname())
    problems = [p for p in group.gather(problem) if p]
    if problems:
        raise DistributedError(problems[0] + (f" (and {len(problems) - 1} more rank(s))" if len(problems) > 1 else ""))
    _GROUP = group
    if dev.type == "cpu":
        from .threads import default_cpu_threads

        default_cpu_threads()  # this rank's share of its machine's cores (see there)
    atexit.register(leave)  # Gloo's threads must stop before the interpreter tears down
    return group


#: What a study's ranks say when another is lost (islands say their own, see `islands.LOST`).
STUDY_ADVICE = "finished work is kept: rerun the same command, with any number of ranks, to go on"


def lost(group: Group, doing: str, exc: BaseException, advice: str = STUDY_ADVICE) -> DistributedError:
    """The error a surviving rank raises when a collective or the store fails or times out."""
    text = _first_line(exc)
    if any(word in text.lower() for word in ("timed out", "timeout", "connection", "closed", "reset", "peer")):
        what = f"another rank stopped answering while {doing} (waited up to {group.timeout:g} s; {text})"
    else:
        what = f"{doing} failed ({text})"
    return DistributedError(f"rank {group.rank}: {what}; {advice}")


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = lines[-1] if lines else type(exc).__name__
    return shorten(text, 160, placeholder="...")


def leave() -> None:
    """Leave the process group (end of a command)."""
    global _GROUP
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()
    _GROUP = None
