"""What `heuriscale list` prints, kept as data (`catalog.json`) so that the command line can
list the built-in algorithms and problems, and check a name, without importing torch.

`build()` reads the registries (importing the library); `python -m heuriscale.catalog`
writes its output to `catalog.json`, and a test fails when the two differ: after adding or
changing an algorithm, a problem, a default or a preset, run

    python -m heuriscale.catalog
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
from pathlib import Path

from .names import unknown_name

PATH = Path(__file__).with_name("catalog.json")


def build() -> dict:
    """The catalogue from the registries (imports torch and every built-in algorithm and problem)."""
    from . import algorithms, problems

    algos = []
    for name in algorithms.algorithm_names():
        cls = algorithms.algorithm_class(name)
        algos.append({
            "name": name,
            "paper": cls.paper,
            "parameters": ", ".join(f"{f.name}={f.default}" for f in dataclasses.fields(cls)),
            "presets": "; ".join(f"{k}: {v}" for k, v in cls.presets.items()),
            "kernels": [kind for kind in ("cuda", "cpu") if cls.kernels is not None and cls.kernels.has(kind)],
        })
    probs = []
    for name in problems.problem_names():
        entry = problems.problem_entry(name)
        params = inspect.signature(entry.factory).parameters.values()
        probs.append({
            "name": name,
            "summary": entry.summary,
            "parameters": ", ".join(p.name if p.default is p.empty else f"{p.name}={p.default}" for p in params),
        })
    return {"algorithms": algos, "problems": probs}


@functools.cache
def load() -> dict:
    """The catalogue as written by `python -m heuriscale.catalog` (no torch import)."""
    return json.loads(PATH.read_text())


def _check(kind: str, name: str) -> None:
    known = [entry["name"] for entry in load()[f"{kind}s"]]
    if name not in known:
        raise ValueError(unknown_name(kind, name, known))


def check_algorithm(name: str) -> None:
    """Raise ValueError (naming the closest built-in algorithm) for an unknown name."""
    _check("algorithm", name)


def check_problem(name: str) -> None:
    """Raise ValueError (naming the closest built-in problem) for an unknown name."""
    _check("problem", name)


if __name__ == "__main__":
    PATH.write_text(json.dumps(build(), indent=1) + "\n")
    print(f"wrote {PATH}")
