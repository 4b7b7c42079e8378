"""Device and dtype resolution, names and synchronisation."""

from __future__ import annotations

import platform
import re

import torch

_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """'auto' -> the first CUDA GPU if there is one, else the CPU; check that it exists."""
    if isinstance(device, torch.device):
        device = str(device)
    if not isinstance(device, str):
        raise ValueError(f"device must be a string such as 'auto', 'cpu', 'cuda' or 'cuda:1', got {device!r}")
    name = device.strip().lower()
    if name == "auto":
        return torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")
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
    index = int(match.group(1) or 0)
    count = torch.cuda.device_count()
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
