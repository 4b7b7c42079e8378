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
import warnings
from pathlib import Path

import torch

#: Bumped when what a checkpoint holds changes.
FORMAT = 1


def version() -> str:
    from .. import __version__

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
