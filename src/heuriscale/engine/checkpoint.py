"""Checkpoints of a run set: everything `Runner` needs to continue, written atomically.

A checkpoint holds the algorithm's state, best-so-far, history, counters, iteration, the
run's random stream (torch's generator state and, for fused kernels, their Philox key and
counter), the configuration and the engine. It is written between chunks to a temporary file
beside the target, flushed to disk (fsync), then renamed over the target: a crash at any
moment leaves either the previous checkpoint or the new one, never half of one.
Resuming on the same device with the same engine continues bit for bit.
"""

from __future__ import annotations

import json
import os
import time
import warnings
from pathlib import Path

import torch

from ..version import __version__
from .rng import MAX_SEED, RngStream

#: Bumped when what a checkpoint holds changes (2: the history's milestones).
FORMAT = 2


def version() -> str:
    return __version__


def fingerprint(config: dict) -> str:
    """A configuration as comparable text (floats and tuples as JSON writes them)."""
    return json.dumps(config, sort_keys=True, default=str)


def save(state: dict, path: str | os.PathLike) -> Path:
    """Write `state` (a runner's state_dict) to `path` atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            torch.save(state, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    directory = os.open(path.parent, os.O_RDONLY)
    try:  # the rename itself reaches the disk
        os.fsync(directory)
    finally:
        os.close(directory)
    return path


def load(path: str | os.PathLike) -> dict:
    """Read a checkpoint, with a clear error for anything that is not one of ours."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no checkpoint at {path}: check the path (a run writes one with checkpoint=... / --checkpoint)")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any unpickling failure means "not a checkpoint"
        raise ValueError(f"{path} is not a readable heuriscale checkpoint ({type(exc).__name__}): "
                         "it may be truncated or another file; start the run again without resume") from exc
    if not isinstance(state, dict) or "heuriscale_checkpoint" not in state:
        raise ValueError(f"{path} is not a heuriscale checkpoint")
    if state["heuriscale_checkpoint"] != FORMAT or state["version"] != version():
        raise ValueError(
            f"{path} was written by heuriscale {state['version']} (checkpoint format {state['heuriscale_checkpoint']}); "
            f"this is heuriscale {version()} (format {FORMAT}): resume it with heuriscale {state['version']}"
        )
    return state


def check_compatible(saved: dict, current: dict, path) -> bool:
    """Raise if the saved configuration differs from the current one (what differs, and how
    to match it); return False when only the device type differs (after a warning)."""
    moved = saved["device_type"] != current["device_type"]
    for key in current:
        if key == "device_type" or (moved and key == "engine"):  # another device has its own engines
            continue
        if fingerprint(saved[key]) != fingerprint(current[key]):
            raise ValueError(
                f"checkpoint {path} is for another configuration: {key} was {fingerprint(saved[key])}, "
                f"now {fingerprint(current[key])}; resume with the same {key} (or start a new run)"
            )
    if moved:
        warnings.warn(
            f"checkpoint {path} was written on {saved['device_type']}, resuming on {current['device_type']}: "
            "the random stream starts anew here, so the numbers differ from an uninterrupted run from here on",
            RuntimeWarning, stacklevel=3,
        )
        return False
    return True


# -- a runner's state, taken and given back ------------------------------------------------------
def header(config: dict) -> dict:
    """What every checkpoint starts with: its format, the version that wrote it, the run set's
    configuration (what a resumed run must agree on)."""
    return {"heuriscale_checkpoint": FORMAT, "version": version(), "config": config}


def capture(runner) -> dict:
    """Everything needed to continue `runner`'s runs (tensors on the CPU): `Runner.state_dict`."""
    cpu = lambda t: t.detach().cpu().clone()  # noqa: E731
    kernels = runner._kernels
    return {
        **header(runner.config()),
        "device": str(runner.device), "iteration": runner.iteration, "elapsed": runner.elapsed(),
        "setup_time": runner.setup_time, "extra_evals": runner._extra_evals,
        "extra": json.dumps(runner._extra, default=str),
        "state": {k: cpu(v) for k, v in vars(runner.state).items()},
        "best_x": cpu(runner.best_x), "best_f": cpu(runner.best_f), "hit_iter": cpu(runner._hit_iter),
        "it": cpu(runner._it), "nan_evals": cpu(runner._guarded.nan_evals),
        **runner._history.state_dict(),
        "rng": runner._rng.get_state(),
        "fused": None if kernels is None else {"seed": kernels.seed, "counters": [cpu(c) for c in kernels.counters]},
    }


def restore(runner, saved: dict, source: str = "checkpoint") -> None:
    """Continue the runs of `saved` on `runner` (same configuration, not yet stepped):
    `Runner.load_state_dict`."""
    if runner.iteration:
        raise ValueError(f"load a checkpoint into a new runner (this one is at iteration {runner.iteration})")
    same_device = check_compatible(saved["config"], runner.config(), source)
    on_device = lambda t: t.to(runner.device)  # noqa: E731
    state = _state(runner.algorithm.state_type, {k: on_device(v) for k, v in saved["state"].items()}, source)
    runner.state = state if runner._kernels is None else runner._kernels.prepare(state)
    runner.best_x, runner.best_f = on_device(saved["best_x"]), on_device(saved["best_f"])
    runner._hit_iter, runner._it = on_device(saved["hit_iter"]), on_device(saved["it"])
    runner._guarded.nan_evals.copy_(saved["nan_evals"])
    runner.iteration = saved["iteration"]
    runner._history.load_state_dict(saved, runner.device)
    runner._extra_evals = saved["extra_evals"]
    runner._extra.update(json.loads(saved["extra"]))
    runner.setup_time = saved["setup_time"]
    runner._stepper = None
    if runner._kernels is None and runner.engine in ("fused", "native"):  # a runner made with start=False
        runner._prepare_kernels()
    if same_device:
        runner._rng.set_state(saved["rng"])
        if runner._kernels is not None:
            runner._kernels.seed = saved["fused"]["seed"]
            for counter, value in zip(runner._kernels.counters, saved["fused"]["counters"]):
                counter.copy_(value)
    else:  # a stream of its own from here, still fixed by the seed and the iteration
        runner._rng = RngStream(runner.device, (runner.seed + runner.iteration) % MAX_SEED)
    runner._t0 = time.perf_counter() - saved["elapsed"]


def _state(state_type, fields: dict, source):
    """The saved state as the algorithm's declared State type (its fields: what it checkpoints)."""
    want = [f for f in state_type.__dataclass_fields__]
    if sorted(fields) != sorted(want):
        raise ValueError(f"checkpoint {source} holds state fields {sorted(fields)}, but this algorithm's "
                         f"{state_type.__name__} has {sorted(want)}: it was written by another version of the algorithm")
    return state_type(**fields)


class Checkpointer:
    """Saves a runner's state_dict to `path` at most every `every` seconds."""

    def __init__(self, runner, path, every: float) -> None:
        self.runner, self.path, self.every = runner, Path(path), every
        self.last = time.perf_counter()

    def due(self) -> None:
        if time.perf_counter() - self.last >= self.every:
            self.save()

    def save(self) -> None:
        save(self.runner.state_dict(), self.path)
        self.last = time.perf_counter()
