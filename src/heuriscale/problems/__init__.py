"""What is optimised: `Problem`, the built-in benchmark problems and their registry.

`get_problem(name, dim=..., **params)` builds a problem from the names the command line
uses; `problem_names()` lists them and `register_problem` adds one.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

from ..names import natural_sorted, unknown_name
from .adapters import NumpyFunction, ScalarFunction, TorchFunction
from .parallel import Workers
from .base import Problem, check_fitness, make_bounds
from .classic import CLASSIC, FEP_FUNCTIONS, ClassicProblem
from .transforms import Rotated, Shifted
from .yao import YAO, YaoProblem


@dataclass(frozen=True)
class ProblemEntry:
    factory: Callable[..., Problem]
    summary: str
    needs_dim: bool = True  # False: the problem has a default or fixed dimension


_REGISTRY: dict[str, ProblemEntry] = {}


def register_problem(name: str, factory: Callable[..., Problem], summary: str, *, needs_dim: bool = True):
    """Make `factory(dim=..., **params) -> Problem` available under `name`."""
    _REGISTRY[name] = ProblemEntry(factory, summary, needs_dim)


def problem_names() -> list[str]:
    """Registered problems in natural order (cec2017-f2 before cec2017-f10)."""
    return natural_sorted(_REGISTRY)


def problem_entry(name: str) -> ProblemEntry:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(unknown_name("problem", name, _REGISTRY)) from None


def get_problem(name: str, dim: int | None = None, *, shift: int | None = None, rotate: int | None = None,
                **params) -> Problem:
    """Build the registered problem `name` in dimension `dim` with its own `params`.

    `shift=seed` / `rotate=seed` give it the CEC treatment (see `transforms`): a random
    shift, then a random rotation around the moved minimiser, each drawn from its seed;
    both are plain data, so a study's configuration can say {"shift": 0, "rotate": 0}.

    Examples:
        >>> get_problem("rastrigin", dim=10)
        ClassicProblem(name='rastrigin', dim=10, bounds=[-5.12, 5.12])
        >>> get_problem("rosenbrock", dim=4, bounds=(-5, 10)).describe()["bounds"]
        [-5.0, 10.0]
        >>> get_problem("sphere", dim=3, shift=1, rotate=1).name
        'rotated(shifted(sphere))'
    """
    entry = problem_entry(name)
    if dim is None and entry.needs_dim:
        raise ValueError(f"problem {name!r} needs a dimension: pass dim=... (--dim on the command line)")
    check_params(f"problem {name!r}", entry.factory, params, skip={"dim"})
    problem = entry.factory(dim=dim, **params)
    if shift is not None:
        problem = Shifted(problem, shift)
    if rotate is not None:
        problem = Rotated(problem, rotate)
    return problem


def rebuild(described: dict) -> Problem:
    """The registered problem that `described` (a `Problem.describe()`, e.g. a checkpoint's)
    names, in its dimension, with the parameters the description records that its factory
    takes (bbob's `instance`, Yao f7's `noise_seed`): the same problem again."""
    factory = problem_entry(described["name"]).factory
    accepted = inspect.signature(factory).parameters
    params = {k: v for k, v in described.items() if k in accepted and k != "dim"}
    return get_problem(described["name"], dim=described["dim"], **params)


def check_params(what: str, factory: Callable, params: dict, skip: set[str] = frozenset()) -> None:
    """Reject parameter names `factory` does not take, listing the ones it does."""
    sig = inspect.signature(factory)
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return
    known = [n for n in sig.parameters if n not in skip]
    unknown = [k for k in params if k not in known]
    if unknown:
        raise ValueError(
            f"{what} has no parameter {unknown[0]!r}; its parameters are: {', '.join(known) or 'none'}"
        )


def _classic_factory(function: str):
    def factory(dim: int, bounds: tuple[float, float] | None = None) -> Problem:
        return ClassicProblem(function, dim, bounds)

    return factory


def _fep_factory(name: str, function: str, lo: float, hi: float):
    def factory(dim: int | None = None) -> Problem:
        return ClassicProblem(function, 32 if dim is None else dim, (lo, hi), name=name)

    return factory


def _fixed_dim(name: str, dim: int | None, fixed: int) -> None:
    if dim is not None and dim != fixed:
        raise ValueError(f"problem {name!r} has dimension {fixed}; drop dim (--dim) or set it to {fixed}")


def _spring(dim: int | None = None, handling: str = "penalty", weight: float = 1e5) -> Problem:
    """Spring design with its constraints handled by `handling` ('penalty' or 'deb')."""
    from .constraints import Constrained
    from .engineering import SpringDesign

    _fixed_dim("spring", dim, 3)
    return Constrained(SpringDesign(), method=handling, weight=weight)


def _otsu(dim: int | None = None, image: str = "camera", levels: int | None = None, size: int | None = None) -> Problem:
    """Otsu thresholding with `levels` thresholds (default: dim, else 1) on `image` resized to `size`."""
    from .otsu import OtsuThresholding

    levels = levels if levels is not None else (dim if dim is not None else 1)
    _fixed_dim("otsu", dim, levels)
    return OtsuThresholding(image=image, levels=levels, size=size)


def _cec2022_factory(function: int):
    def factory(dim: int) -> Problem:
        from .cec2022 import CEC2022

        return CEC2022(function, dim)

    return factory


for _k in range(1, 13):
    register_problem(f"cec2022-f{_k}", _cec2022_factory(_k), f"CEC 2022 F{_k} (official), D = 2, 10, 20, [-100, 100]")


# -- CEC 2017 --
def _cec2017_factory(function: int):
    def factory(dim: int) -> Problem:
        from .cec2017 import CEC2017

        return CEC2017(function, dim)

    return factory


for _k in range(1, 31):
    _left_out = " (left out of the suite by its organisers)" if _k == 2 else ""
    register_problem(
        f"cec2017-f{_k}", _cec2017_factory(_k), f"CEC 2017 F{_k} (official){_left_out}, D = 10, 30, 50, 100, [-100, 100]"
    )
# -- end CEC 2017 --


# -- COCO's bbob --
def _bbob_factory(function: int):
    def factory(dim: int, instance: int = 1) -> Problem:
        from .bbob import BBOB

        return BBOB(function, dim, instance)

    return factory


def _bbob_summary(function: int) -> str:
    from .bbob import NAMES, UNROTATED

    dims = "any D >= 2" if function in UNROTATED else "D = 2-44"
    return f"COCO bbob f{function} ({NAMES[function]}), instance=1, 2, ... (COCO's), {dims}, [-5, 5]"


for _k in range(1, 25):
    register_problem(f"bbob-f{_k}", _bbob_factory(_k), _bbob_summary(_k))
# -- end COCO's bbob --

for _name, _spec in CLASSIC.items():
    register_problem(_name, _classic_factory(_name), f"{_spec.summary} on [{_spec.lower:g}, {_spec.upper:g}]")
for _name, (_fn, _lo, _hi) in FEP_FUNCTIONS.items():
    register_problem(_name, _fep_factory(_name, _fn, _lo, _hi), f"paper 004: {_fn} on [{_lo:g}, {_hi:g}], D = 32", needs_dim=False)
register_problem("spring", _spring, "tension/compression spring design, 3 variables, 4 constraints", needs_dim=False)
register_problem("otsu", _otsu, "multi-level Otsu thresholding of a grey image (dim = levels)", needs_dim=False)


# -- Yao et al. 1999 --
def _yao_factory(number: int):
    """f1-f13 take any dim (default 30, the paper's); f14-f23 only their own; f7 also noise_seed."""
    spec = YAO[number]
    if spec.fixed_dim is not None:
        def fixed(dim: int | None = None) -> Problem:
            _fixed_dim(f"yao-f{number}", dim, spec.fixed_dim)
            return YaoProblem(number)

        return fixed
    if spec.noisy:
        def noisy(dim: int | None = None, noise_seed: int = 0) -> Problem:
            return YaoProblem(number, dim, noise_seed=noise_seed)

        return noisy

    def scalable(dim: int | None = None) -> Problem:
        return YaoProblem(number, dim)

    return scalable


for _k, _yao in YAO.items():
    _dims = f"D = {_yao.fixed_dim}" if _yao.fixed_dim else f"D = {_yao.dim} by default"
    register_problem(f"yao-f{_k}", _yao_factory(_k), f"Yao et al. 1999 f{_k}: {_yao.summary}, {_dims}", needs_dim=False)
# -- end Yao et al. 1999 --

# -- ZDT and DTLZ (several objectives) --
def _zdt_factory(name: str):
    def factory(dim: int | None = None, objectives: int = 2) -> Problem:
        from .zdt import ZDT

        if objectives != 2:
            raise ValueError(f"problem {name!r} has 2 objectives; drop objectives or set it to 2")
        return ZDT(name, dim)

    return factory


def _dtlz_factory(name: str):
    if name == "dtlz4":
        def biased(dim: int | None = None, objectives: int = 3, alpha: float = 100.0) -> Problem:
            from .dtlz import DTLZ

            return DTLZ(name, dim, objectives, alpha)

        return biased

    def factory(dim: int | None = None, objectives: int = 3) -> Problem:
        from .dtlz import DTLZ

        return DTLZ(name, dim, objectives)

    return factory


_ZDT_SUMMARIES = {
    "zdt1": "convex front, D = 30 by default",
    "zdt2": "concave front, D = 30 by default",
    "zdt3": "front in five pieces, D = 30 by default",
    "zdt4": "multimodal (21^9 local fronts), D = 10 by default, x_2.. in [-5, 5]",
    "zdt6": "non-uniform, biased front, D = 10 by default",
}
_DTLZ_SUMMARIES = {
    "dtlz1": "linear front, multimodal g, D = M + 4 by default",
    "dtlz2": "spherical front, D = M + 9 by default",
    "dtlz3": "spherical front, multimodal g, D = M + 9 by default",
    "dtlz4": "spherical front, biased density (alpha=100), D = M + 9 by default",
    "dtlz5": "degenerate curve front, D = M + 9 by default",
    "dtlz6": "degenerate curve front, harder g, D = M + 9 by default",
    "dtlz7": "disconnected front, D = M + 19 by default",
}
for _name, _summary in _ZDT_SUMMARIES.items():
    register_problem(_name, _zdt_factory(_name), f"ZDT (2 objectives): {_summary}, [0, 1]", needs_dim=False)
for _name, _summary in _DTLZ_SUMMARIES.items():
    register_problem(_name, _dtlz_factory(_name), f"DTLZ (objectives=M, 3 by default): {_summary}, [0, 1]",
                     needs_dim=False)
# -- end ZDT and DTLZ --

__all__ = [
    "Problem",
    "ClassicProblem",
    "Shifted",
    "Rotated",
    "TorchFunction",
    "NumpyFunction",
    "NumbaFunction",
    "TritonFunction",
    "ScalarFunction",
    "Workers",
    "get_problem",
    "register_problem",
    "problem_names",
    "check_fitness",
    "make_bounds",
]


def __getattr__(name: str):
    """`NumbaFunction` and `TritonFunction` on first use: they import Numba and Triton, which
    `import heuriscale` does not need."""
    if name == "NumbaFunction":
        from .compiled import NumbaFunction

        return NumbaFunction
    if name == "TritonFunction":
        from .triton_function import TritonFunction

        return TritonFunction
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
