"""Benchmark suites as data: which problems, in which dimensions, with which budget, and where
the error f - f* is recorded. `heuriscale compare` runs an algorithm set over one of them.

- `cec2022`: the 12 functions of CEC 2022 at D = 10 and 20; MaxFES = 200,000 at D = 10 and
  1,000,000 at D = 20; 30 runs; f - f* recorded after D^(k/5 - 3) MaxFES evaluations,
  k = 0, 1, ..., 15 (16 points from D^-3 MaxFES to MaxFES: they depend on D). Source: Kumar,
  Price, Mohamed, Hadi & Suganthan, "Problem Definitions and Evaluation Criteria for the CEC
  2022 Special Session and Competition on Single Objective Bound Constrained Numerical
  Optimization", Technical Report, Dec. 2021, sec. 2.1-2.2 ("CEC2022 TR.pdf" in
  github.com/P-N-Suganthan/2022-SO-BO). The exponent is typeset as an equation; the report's
  own worked example pins it: at D = 10, k = 10 is "D^-1 * MaxFES = 20,000 function
  evaluations". A trial stops once the error is below 1e-8; here every run uses its whole
  budget, and an error below 1e-8 is reported as 0 (the convention of every suite, below).
- `cec2017`: F1 and F3-F30 (the organisers left F2 out of the suite, "unstable in high D")
  at D = 10, 30, 50, 100; MaxFES = 10,000 D; 51 runs; f - f* recorded after (0.01, 0.02,
  0.03, 0.05, 0.1, 0.2, ..., 0.9, 1.0) MaxFES; "error value smaller than 10^-8 will be taken
  as zero". Source: Awad, Ali, Liang, Qu & Suganthan, "Problem Definitions and Evaluation
  Criteria for the CEC 2017 Special Session and Competition on Single Objective Real-Parameter
  Numerical Optimization", Technical Report, Nov. 2016, sec. 2.1-2.2 ("Definitions of CEC2017
  benchmark suite final version updated.pdf" in github.com/P-N-Suganthan/CEC2017-BoundContrained).
- `bbob`: COCO's 24 noiseless functions (`problems.bbob`) at D = 2, 3, 5, 10, 20, 40, following
  COCO's experimental procedure (Hansen, Tusar, Mersmann, Auger & Brockhoff, "COCO: The
  Experimental Procedure", arXiv:1603.08776): the repeated runs are the instances, run r
  (0-based) of a function on instance r + 1, so the official 15 runs are instances 1-15
  (`runs=` takes instances 1..runs); a function's instances advance together as one run set,
  whose problem holds one instance per run (problem_params={"instance": [1, ..., runs]}).
  Budget 10,000 x D evaluations (COCO states budgets as multiples of D; this one, as
  CEC 2017's, is the size of the usual full campaign; `evals_per_dim=`, --evals-per-dim, sets
  another). A campaign runs all six dimensions unless told otherwise (COCO's standard
  experiment, what cocopp's figures compare across); D = 40 is at least three quarters of
  its work, --dims 2,3,5,10,20 a quicker campaign. Errors are f - fopt of the run's own
  instance; COCO's final target is precision 1e-8 above fopt, the precision below which every
  suite here reports 0. Recording points: 10^(k/5 - 3) of the
  budget, k = 0..15 (five per decade, from 10 D to 10,000 D evaluations at the default
  budget: the log scale of evaluations / D on which COCO reads runtimes). No restarts: the
  library's algorithms never stop early (each runs its whole budget; one that has converged
  keeps sampling near its best), so every run is one run of the whole budget; COCO's
  runtimes to each target come from the evaluations at which the run first reached it
  (`--export coco`).
- `classic`: Yao, Liu & Lin (1999) f1-f23 in their own dimensions (f1-f13 at n = 30, f14-f23
  at 2, 4, 2, 2, 2, 3, 6, 4, 4, 4), boxes and optima (`problems.yao`). Budget: the number of
  generations of the paper's Table I times its population of 100 (f1: 1,500 generations =
  150,000 evaluations; f5: 20,000 = 2,000,000; f14: 100 = 10,000; ...), so it differs per
  function. Yao et al. ran 50 runs and report only final values; the recording points here are
  CEC 2017's 14 fractions (our choice).

- `zdt`, `dtlz`: multi-objective suites, ZDT1-4, 6 (two objectives, pymoo's dimensions: 30
  for ZDT1-3, 10 for ZDT4 and 6) and DTLZ1-7 with M = 3 objectives (D = M + k - 1 with the
  paper's k: 7 for DTLZ1, 12 for DTLZ2-6, 22 for DTLZ7). Budgets as pymoo's examples run
  them, a population of 100 for a number of generations G (N x G evaluations, the initial
  population included): ZDT 250 generations (25,000 evaluations); DTLZ 300 (30,000), DTLZ1
  400 and DTLZ3 1,000 (their g has 11^k - 1 local fronts). 31 runs (the field's usual count).
  A run's result is its final non-dominated set, scored by its hypervolume (the engine's
  reference point, `engine.fronts.reference_point`: 1.1 x the nadir of the true front, 1.1
  in every objective for ZDT1, 2, 4 and DTLZ2-4) and its IGD to the problem's
  `pareto_front()` (`metrics`); the report tests both (higher hypervolume, lower IGD is
  better).

One convention for every suite (`statistics.reported_error`): an error below 1e-8 is 0, the
CEC 2017 rule, so that no report prints rounding noise (2.67e-14) or a negative error (float
rounding can put a best f a hair below a stored f*). The results store keeps the raw values.

`Suite.custom(problems, budget=...)` makes a suite of one's own problems. An error is
`best f - optimum_f`; a problem without a known optimum records its best f itself.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from .. import problems
from ..names import unknown_name
from .statistics import error_of

__all__ = ["Suite", "SUITES", "get_suite", "suite_names", "CEC2017_FRACTIONS", "cec2022_fractions",
           "YAO_GENERATIONS", "BBOB_FRACTIONS", "MO_GENERATIONS"]

#: CEC 2017's recording points, fractions of MaxFES (technical report, sec. 2.2).
CEC2017_FRACTIONS = (0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def cec2022_fractions(dim: int) -> tuple[float, ...]:
    """CEC 2022's recording points at dimension `dim`: D^(k/5 - 3), k = 0..15 (sec. 2.2)."""
    return tuple(1.0 if k == 15 else float(dim) ** (k / 5 - 3) for k in range(16))


#: Generations of Yao, Liu & Lin (1999), Table I, per function f1-f23 (population 100).
YAO_GENERATIONS = {1: 1500, 2: 2000, 3: 5000, 4: 5000, 5: 20000, 6: 1500, 7: 3000, 8: 9000, 9: 5000, 10: 1500,
                   11: 2000, 12: 1500, 13: 1500, 14: 100, 15: 4000, 16: 100, 17: 100, 18: 100, 19: 100, 20: 200,
                   21: 100, 22: 100, 23: 100}
YAO_POPULATION = 100

#: bbob's recording points: 10^(k/5 - 3) of the budget, k = 0..15 (five per decade up to the budget).
BBOB_FRACTIONS = tuple(1.0 if k == 15 else 10.0 ** (k / 5 - 3) for k in range(16))


@dataclass(frozen=True)
class Suite:
    """A benchmark suite as data.

    `functions`: registered problem names, in the suite's order; `dims[f]`: the dimensions
    function f is defined in here; `default_dims`: what a campaign runs when no dimension is
    asked for (None: every dimension of every function); `budget(f, dim)`: evaluations per
    run; `fractions(dim)`: the recording points, fractions of the budget; `runs`: the
    official number of runs; `labels`: how the report names a function (default: its name);
    `instances`: True where the runs are the functions' instances (bbob: run r on instance
    r + 1, passed to the problem as `instance=`); `dtype`: the floating-point type its
    campaigns need on every device (bbob: float64, for COCO's 1e-8 targets above f* such as
    79.48), None for the default (float32 on CUDA, float64 on the CPU); `multi_objective`:
    the functions have several objectives, and a run is scored by the hypervolume and IGD of
    its final non-dominated set (`engine.fronts.reference_point`, `Problem.pareto_front`).
    Errors below 1e-8 are reported as 0 in every suite (`statistics.reported_error`).
    """

    name: str
    functions: tuple[str, ...]
    dims: Mapping[str, tuple[int, ...]]
    budget_of: Callable[[str, int], int]
    fractions_of: Callable[[int], Sequence[float]]
    default_dims: tuple[int, ...] | None = None
    runs: int = 30
    source: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    instances: bool = False
    dtype: str | None = None
    multi_objective: bool = False

    def budget(self, function: str, dim: int) -> int:
        return int(self.budget_of(function, dim))

    def fractions(self, dim: int) -> tuple[float, ...]:
        return tuple(float(x) for x in self.fractions_of(dim))

    def label(self, function: str) -> str:
        return self.labels.get(function, function)

    def all_dims(self, functions: Sequence[str] | None = None) -> tuple[int, ...]:
        return tuple(sorted({d for f in (functions or self.functions) for d in self.dims[f]}))

    def error(self, f: float, optimum: float | None) -> float:
        """The reported error of a best value f: f - optimum, 0 below 1e-8; f itself when the
        optimum is unknown (`statistics.error_of`). NaN stays NaN (a failed run)."""
        return error_of(f, optimum)

    def resolve(self, names: Sequence[str] | None) -> tuple[str, ...]:
        """The suite's functions named by `names` (all when None), in the suite's order: a full
        name (cec2022-f3), its number with or without f (f3, F3, 3) or the report's label."""
        if names is None:
            return self.functions
        chosen = []
        for name in names:
            fn = self._lookup(str(name).strip())
            if fn is None:
                raise ValueError(f"unknown function {name!r} in suite {self.name!r}; its functions: "
                                 f"{', '.join(self.label(f) for f in self.functions)}")
            chosen.append(fn)
        return tuple(f for f in self.functions if f in chosen)

    def _lookup(self, name: str) -> str | None:
        for f in self.functions:
            if name in (f, self.label(f)):
                return f
        m = re.fullmatch(r"[fF]?(\d+)", name)
        if m:
            for f in self.functions:
                if re.search(rf"-f{int(m.group(1))}$", f):
                    return f
        return None

    def cells(self, functions: Sequence[str], dims: Sequence[int] | None) -> list[tuple[str, int]]:
        """(function, dim) pairs of a campaign over `functions` at `dims` (None: the suite's
        default); a function runs at the asked dimensions it is defined in. A dimension none of
        the functions defines, or a function left with no dimension, is an error."""
        if dims is None:
            dims = self.default_dims or self.all_dims(functions)
        dims = sorted(set(int(d) for d in dims))
        known = self.all_dims(functions)
        for d in dims:
            if d not in known:
                raise ValueError(f"suite {self.name!r} does not define D = {d}"
                                 f"{'' if tuple(functions) == self.functions else ' for the functions chosen'}; "
                                 f"its dimensions: {', '.join(map(str, known))}")
        cells = [(f, d) for d in dims for f in functions if d in self.dims[f]]
        for f in functions:
            if not any(cf == f for cf, _ in cells):
                raise ValueError(f"{self.label(f)} is not defined at D = {', '.join(map(str, dims))} in suite "
                                 f"{self.name!r}; its dimensions: {', '.join(map(str, self.dims[f]))}")
        return cells

    @classmethod
    def custom(cls, items: Sequence, budget: int | Mapping[int, int] | Callable[[int], int], *,
               fractions: Sequence[float] | Callable[[int], Sequence[float]] = CEC2017_FRACTIONS,
               dims: Sequence[int] | None = None, name: str = "custom", runs: int = 30) -> Suite:
        """A suite of one's own problems: `Problem` objects (each in its own dimension) or
        registered problem names (in every one of `dims`).

        A problem object is registered as `<name>/<problem.name>` so that a study's
        configurations, and with them the results store, can name it: rerunning the same
        script (with the same suite name and problem names) resumes the campaign. `budget`:
        evaluations per run, one number, {dim: number} or a function of the dimension;
        `fractions`: the recording points, a list or a function of the dimension."""
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", name) or name in SUITES:
            raise ValueError(f"a custom suite needs a name of letters, digits, '.', '_' or '-' that is not one of "
                             f"the built-in suites ({', '.join(SUITES)}), got {name!r}")
        if not items:
            raise ValueError("a custom suite needs at least one problem")
        functions, dim_map, labels, instances = [], {}, {}, {}
        for item in items:
            if isinstance(item, problems.Problem):
                key = f"{name}/{item.name}"
                if (key, item.dim) in instances:
                    raise ValueError(f"two problems named {item.name!r} at D = {item.dim} in suite {name!r}: "
                                     "give them distinct names (problem.name = ...)")
                instances[key, item.dim] = item
                if key not in dim_map:
                    functions.append(key)
                    dim_map[key] = ()
                    labels[key] = item.name
                dim_map[key] = tuple(sorted(set(dim_map[key]) | {item.dim}))
            elif isinstance(item, str):
                problems.problem_entry(item)  # an unknown name fails here, listing the known ones
                if not dims:
                    raise ValueError(f"problem {item!r} is given by name: say in which dimensions (dims=...)")
                functions.append(item)
                dim_map[item] = tuple(sorted(set(int(d) for d in dims)))
            else:
                raise ValueError(f"a custom suite takes Problem objects or problem names, got {type(item).__name__}")
        if len(set(functions)) != len(functions):
            raise ValueError(f"suite {name!r} names a problem twice")
        for key in {k for k, _ in instances}:
            problems.register_problem(key, _instance_factory(key, {d: p for (k, d), p in instances.items() if k == key}),
                                      f"suite {name!r}: {labels[key]}", needs_dim=False)
        budget_of = _budget_function(budget)
        fractions_of = fractions if callable(fractions) else (lambda _dim, fx=tuple(fractions): fx)
        for d in {d for f in functions for d in dim_map[f]}:
            _check_fractions(fractions_of(d), name)
        return cls(name, tuple(functions), dim_map, lambda _f, dim: budget_of(dim), fractions_of, None, runs,
                   "custom", labels)


def _instance_factory(key: str, by_dim: dict):
    def factory(dim: int | None = None) -> problems.Problem:
        if dim is None and len(by_dim) == 1:
            return next(iter(by_dim.values()))
        if dim not in by_dim:
            raise ValueError(f"problem {key!r} is defined at D = {', '.join(map(str, sorted(by_dim)))}, not {dim}")
        return by_dim[dim]

    return factory


def _budget_function(budget) -> Callable[[int], int]:
    if callable(budget):
        return lambda dim: int(budget(dim))
    if isinstance(budget, Mapping):
        def lookup(dim: int) -> int:
            if dim not in budget:
                raise ValueError(f"the suite's budget has no entry for D = {dim}; it has D = "
                                 f"{', '.join(map(str, sorted(budget)))}")
            return int(budget[dim])

        return lookup
    if isinstance(budget, int) and budget > 0:
        return lambda _dim: budget
    raise ValueError(f"budget must be a number of evaluations > 0, {{dim: evaluations}} or a function of the dimension, "
                     f"got {budget!r}")


def _check_fractions(fractions, name: str) -> None:
    fx = list(fractions)
    if not fx or any(not (0 < x <= 1) or not math.isfinite(x) for x in fx) or sorted(fx) != fx or fx[-1] != 1.0:
        raise ValueError(f"suite {name!r}: recording fractions must increase within (0, 1] and end at 1.0, got {fx}")


# -- the built-in suites ---------------------------------------------------------------------------
def _cec2022() -> Suite:
    functions = tuple(f"cec2022-f{k}" for k in range(1, 13))
    budgets = {10: 200_000, 20: 1_000_000}
    return Suite("cec2022", functions, {f: (10, 20) for f in functions}, lambda _f, dim: budgets[dim],
                 cec2022_fractions, (10, 20), runs=30,
                 source="Kumar, Price, Mohamed, Hadi & Suganthan, CEC 2022 technical report (Dec. 2021)")


def _cec2017() -> Suite:
    from ..problems.cec2017 import DIMS

    functions = tuple(f"cec2017-f{k}" for k in range(1, 31) if k != 2)  # F2 left out by the organisers
    return Suite("cec2017", functions, {f: DIMS for f in functions}, lambda _f, dim: 10_000 * dim,
                 lambda _dim: CEC2017_FRACTIONS, DIMS, runs=51,
                 source="Awad, Ali, Liang, Qu & Suganthan, CEC 2017 technical report (Nov. 2016)")


def _classic() -> Suite:
    from ..problems.yao import YAO

    functions = tuple(f"yao-f{k}" for k in YAO)
    dims = {f"yao-f{k}": (spec.fixed_dim or spec.dim,) for k, spec in YAO.items()}
    return Suite("classic", functions, dims, lambda f, _dim: YAO_GENERATIONS[int(f.rsplit("-f", 1)[1])] * YAO_POPULATION,
                 lambda _dim: CEC2017_FRACTIONS, None, runs=50,
                 source="Yao, Liu & Lin, Evolutionary programming made faster, IEEE TEC 3(2), 1999, Table I")


def _bbob() -> Suite:
    from ..problems.bbob import DIMS

    functions = tuple(f"bbob-f{k}" for k in range(1, 25))
    return Suite("bbob", functions, {f: DIMS for f in functions}, lambda _f, dim: 10_000 * dim,
                 lambda _dim: BBOB_FRACTIONS, DIMS, runs=15, instances=True, dtype="float64",
                 source="Hansen, Finck, Ros & Auger, INRIA RR-6829 (2009); COCO's experimental procedure, "
                        "arXiv:1603.08776: instances 1-15 as the runs")


#: Generations of 100 in the multi-objective suites' budgets (N x G evaluations).
MO_GENERATIONS = {"zdt1": 250, "zdt2": 250, "zdt3": 250, "zdt4": 250, "zdt6": 250, "dtlz1": 400, "dtlz2": 300,
                  "dtlz3": 1000, "dtlz4": 300, "dtlz5": 300, "dtlz6": 300, "dtlz7": 300}
MO_POPULATION = 100


def _multi_objective(name: str, functions: tuple[str, ...], source: str) -> Suite:
    dims = {f: (problems.get_problem(f).dim,) for f in functions}  # pymoo's / the paper's default dimension
    return Suite(name, functions, dims, lambda f, _dim: MO_GENERATIONS[f] * MO_POPULATION, lambda _dim: (1.0,),
                 None, runs=31, source=source, dtype="float64", multi_objective=True)


def _zdt() -> Suite:
    return _multi_objective("zdt", ("zdt1", "zdt2", "zdt3", "zdt4", "zdt6"),
                            "Zitzler, Deb & Thiele, Evolutionary Computation 8(2), 2000; as pymoo 0.6.2 defines them")


def _dtlz() -> Suite:
    return _multi_objective("dtlz", tuple(f"dtlz{k}" for k in range(1, 8)),
                            "Deb, Thiele, Laumanns & Zitzler, Scalable test problems for evolutionary multiobjective "
                            "optimization, 2005; M = 3; as pymoo 0.6.2 defines them")


SUITES: dict[str, Callable[[], Suite]] = {"cec2022": _cec2022, "cec2017": _cec2017, "classic": _classic,
                                          "bbob": _bbob, "zdt": _zdt, "dtlz": _dtlz}


def suite_names() -> list[str]:
    return list(SUITES)


def get_suite(suite: str | Suite) -> Suite:
    """The built-in suite of that name (a `Suite` is returned as it is)."""
    if isinstance(suite, Suite):
        return suite
    if suite not in SUITES:
        raise ValueError(unknown_name("suite", suite, SUITES))
    return SUITES[suite]()
