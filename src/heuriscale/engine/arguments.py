"""The engine's checks of what it is given: a problem, an algorithm, counts and numbers."""

from __future__ import annotations

import math

from ..algorithms import Algorithm, get_algorithm
from ..problems import Problem, get_problem


def as_problem(problem: Problem | str, dim: int | None = None) -> Problem:
    """A Problem instance from an instance or a registered name (with `dim`)."""
    if isinstance(problem, str):
        return get_problem(problem, dim=dim)
    if not isinstance(problem, Problem):
        raise ValueError(
            f"problem must be a heuriscale Problem or a registered name, got {type(problem).__name__}; "
            "wrap a function with TorchFunction, NumpyFunction or ScalarFunction"
        )
    if dim is not None and dim != problem.dim:
        raise ValueError(f"dim={dim} was given but problem {problem.name!r} has dimension {problem.dim}")
    return problem


def as_algorithm(algorithm: Algorithm | str) -> Algorithm:
    """An Algorithm instance from an instance or a registered name (its defaults)."""
    if isinstance(algorithm, str):
        return get_algorithm(algorithm)
    if not isinstance(algorithm, Algorithm):
        raise ValueError(f"algorithm must be a heuriscale Algorithm or a registered name, got {type(algorithm).__name__}")
    return algorithm


def for_problem(algorithm: Algorithm, problem: Problem) -> Algorithm:
    """`algorithm` fitted to the problem's number of objectives, or a one-line error where it
    optimises one objective and the problem has several."""
    M = problem.objectives
    if M > 1 and not algorithm.stepping().multi_objective:
        raise ValueError(f"{algorithm.name} minimises one objective; problem {problem.name!r} has {M}: "
                         "use a multi-objective algorithm (nsga2, moead)")
    if M > 1 and type(algorithm).finish is not Algorithm.finish:
        raise ValueError(f"{algorithm.name} refines a best point after its steps, which needs one objective; "
                         f"problem {problem.name!r} has {M}: drop the refinement (--refine)")
    algorithm.stepping().check_problem(problem)
    return algorithm.for_objectives(M)


def check_count(name: str, value, minimum: int = 1, required: bool = False) -> int | None:
    """`value` as an integer >= minimum (None passes unless required), or a clear error."""
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


def check_real(name: str, value) -> float:
    """`value` as a float (a real number, not NaN), or a clear error."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise ValueError(f"{name} must be a number, got {value!r}")
    return float(value)


def steps_allowed(algorithm: Algorithm, iters: int | None, evals: int | None) -> float:
    """The iterations a budget of `iters` iterations and `evals` evaluations per run allows
    (the first reached; inf without either): `evals` pays for the initial population first."""
    steps = math.inf if iters is None else iters
    if evals is not None:
        if evals < algorithm.evals_per_init():
            raise ValueError(
                f"evals={evals} is less than one initial population ({algorithm.evals_per_init()} evaluations "
                f"for pop_size={algorithm.pop_size}): raise evals or lower pop_size"
            )
        steps = min(steps, algorithm.steps_within(evals))
    return steps
