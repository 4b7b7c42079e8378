"""Device and dtype resolution, names and synchronisation."""

from __future__ import annotations

import contextlib
import os
import platform
import re

import torch

from .distributed import local_rank
from .threads import set_cpu_threads  # noqa: F401 - re-exported (engine.set_cpu_threads)

_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """'auto' -> the first CUDA GPU if there is one, else the CPU; check that it exists.

    In a process that torchrun started, 'auto' and 'cuda' mean this rank's own GPU,
    cuda:LOCAL_RANK, so that one command line gives each rank its device."""
    if isinstance(device, torch.device):
        device = str(device)
    if not isinstance(device, str):
        raise ValueError(f"device must be a string such as 'auto', 'cpu', 'cuda' or 'cuda:1', got {device!r}")
    name = device.strip().lower()
    if name == "auto":
        if not torch.cuda.is_available():
            return torch.device("cpu")
        name = "cuda"
    if name == "cpu":
        return torch.device("cpu")
    match = re.fullmatch(r"cuda(?::(\d+))?", name)
    if not match:
        raise ValueError(f"unknown device {device!r}: use 'auto', 'cpu', 'cuda' or 'cuda:N'")
    if not torch.cuda.is_available():
        raise ValueError(
            f"device {device!r} was asked for but this machine has no usable CUDA GPU "
            "(torch.cuda.is_available() is False); use device='cpu' or 'auto'"
        )
    count = torch.cuda.device_count()
    local = local_rank()
    if match.group(1) is None and local is not None:
        if local >= count:
            raise ValueError(f"this process is rank LOCAL_RANK={local} of a torchrun job and uses cuda:{local}, but this "
                             f"machine has {count} CUDA device(s): start at most {count} process(es) per machine")
        return torch.device("cuda", local)
    index = int(match.group(1) or 0)
    if index >= count:
        raise ValueError(f"device {device!r} does not exist: this machine has {count} CUDA device(s), cuda:0..cuda:{count - 1}")
    return torch.device("cuda", index)


def resolve_dtype(dtype: str | torch.dtype) -> torch.dtype:
    if isinstance(dtype, torch.dtype) and dtype in _DTYPES.values():
        return dtype
    if isinstance(dtype, str) and dtype in _DTYPES:
        return _DTYPES[dtype]
    raise ValueError(f"unsupported dtype {dtype!r}: use 'float32' or 'float64'")


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def device_name(device: torch.device) -> str:
    """Human-readable hardware name, e.g. 'NVIDIA H100 80GB HBM3' or the CPU model."""
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


def synchronize(device: torch.device) -> None:
    """Wait for queued work on `device` (a no-op on the CPU) so wall times are real."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class InsufficientMemory(ValueError):
    """A run set that does not fit the device's free memory."""


def free_memory(device: torch.device) -> int:
    """Bytes this process can still get on `device`: the GPU's free memory plus what torch's
    cache holds unused; on the CPU, the system's available memory."""
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return free + torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
    try:
        with open("/proc/meminfo") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def _gib(n: float) -> str:
    return f"{n / 2**30:.3g} GiB"


def _advice(dtype: torch.dtype) -> str:
    return "use fewer runs or a smaller population (--runs, --pop)" + (
        " or dtype float32 (--dtype float32)" if dtype == torch.float64 else "")


def check_memory(need: int, device: torch.device, dtype: torch.dtype, what: str) -> None:
    """Refuse, before allocating, a run set that needs more than the device has free."""
    have = free_memory(device)
    if need > have:
        raise InsufficientMemory(f"{what} needs ~{_gib(need)}, {device} has {_gib(have)} free: {_advice(dtype)}")


@contextlib.contextmanager
def memory_errors(device: torch.device, dtype: torch.dtype, what: str):
    """An allocation that fails anyway (the estimate is an estimate) as the same one-line error."""
    try:
        yield
    except torch.OutOfMemoryError as exc:
        raise InsufficientMemory(f"{what} ran out of memory on {device} ({_gib(free_memory(device))} free now): "
                                 f"{_advice(dtype)}") from exc
    except (MemoryError, RuntimeError) as exc:  # the CPU allocator raises RuntimeError
        if isinstance(exc, RuntimeError) and not any(text in str(exc) for text in _TOO_BIG):
            raise
        raise InsufficientMemory(f"{what} ran out of memory on {device}: {_advice(dtype)}") from exc


#: What torch's CPU allocator and size arithmetic say when a tensor cannot be had.
_TOO_BIG = ("can't allocate memory", "DefaultCPUAllocator", "Storage size calculation overflowed")
