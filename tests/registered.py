"""Every registered algorithm, read from the registry and from what each declares on its class
(`min_pop`, `presets`, `kernels`, `state_type`): the shared tests run for each one, so an
algorithm registered tomorrow is tested the same way without touching a test file."""

from __future__ import annotations

import dataclasses

import pytest

import heuriscale as hs
from heuriscale.algorithms import algorithm_class

def takes_one_objective(name: str) -> bool:
    """True for the algorithms that minimise one objective (every one but those that need
    several, as MOEA/D's decomposition does; NSGA-II takes one as a plain elitist GA)."""
    try:
        algorithm_class(name)(pop_size=None if name == "moead" else 100).for_objectives(1)
    except ValueError:
        return False
    return True


#: Every registered algorithm that minimises one objective, by name: the shared tests' problems
#: have one objective and check a best value. Those that need several objectives (MOEA/D) are
#: tested in tests/test_multiobjective_algorithms.py.
NAMES = [n for n in hs.algorithm_names() if takes_one_objective(n)]


def small(name: str, pop: int = 20, horizon: int = 200, **params) -> hs.Algorithm:
    """`name` with a small population (at least its declared minimum) and, for algorithms that
    schedule their steps over `max_iters` (or `max_evals`), a schedule of `horizon` steps (of
    its first population's size), so that a Runner can take it too."""
    cls = algorithm_class(name)
    fields = {f.name for f in dataclasses.fields(cls)}
    if "max_iters" in fields:
        params.setdefault("max_iters", horizon)
    if "max_evals" in fields:  # a schedule over the evaluation budget (L-SHADE's population reduction)
        params.setdefault("max_evals", max(pop, cls.min_pop) * (horizon + 1))
    return hs.get_algorithm(name, pop_size=max(pop, cls.min_pop), **params)


def with_kernels(device_type: str) -> list[str]:
    """The registered algorithms that declare kernels for `device_type` ("cuda" or "cpu")."""
    return [n for n in NAMES if (k := algorithm_class(n).kernels) is not None and k.has(device_type)]


def spec_only(device_type: str) -> list[str]:
    """The registered algorithms that run their torch step only on `device_type`."""
    return [n for n in NAMES if n not in with_kernels(device_type)]


def each(names: list[str], marks=()) -> list:
    """pytest params, one per name (with `marks`), for algorithms that may be none yet."""
    return [pytest.param(n, id=n, marks=marks) for n in names]


#: The registered algorithms whose step a CUDA graph can capture (the graph and compiled engines).
CAPTURABLE = [n for n in NAMES if not algorithm_class(n).uncapturable]

#: The registered algorithms that offer islands under torchrun.
ISLANDS = [n for n in NAMES if algorithm_class(n).islands_offered]
