"""Running algorithms: devices, seeding, budgets and stopping, best-so-far, history, timing."""

from .device import resolve_device, resolve_dtype
from .result import Result
from .runner import Runner, minimize

__all__ = ["Result", "Runner", "minimize", "resolve_device", "resolve_dtype"]
