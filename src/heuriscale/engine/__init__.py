"""Running algorithms: devices, seeding, budgets and stopping, best-so-far, history, timing."""

from .auto import warm_up
from .device import resolve_device, resolve_dtype, set_cpu_threads
from .result import Result
from .runner import Runner, minimize

__all__ = ["Result", "Runner", "minimize", "resolve_device", "resolve_dtype", "set_cpu_threads", "warm_up"]
