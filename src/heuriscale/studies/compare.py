"""`heuriscale compare`: a benchmarking campaign of several algorithms over a suite, stored in
the resumable results store and written up by `campaign_report`.

    compare(["pso", "apo", "fep"], "cec2022", dims=[10, 20], runs=30, params={"apo": {"pf_max": 0.2}})

- **Runs.** One `RunConfig` per (algorithm, function, dimension) whose `runs` repeats advance
  together (one unit of the study). Each algorithm runs at its library defaults, or its
  `presets[algo]`, then `params[algo]`, with `pops[algo]` as its population. Its iterations
  come from the budget: (budget - evaluations of the initial population) // evaluations per
  iteration, so no run exceeds the suite's budget (`evals` replaces the suite's budgets,
  `evals_per_dim` replaces them by that many evaluations x D).
- **Instances.** In a suite whose runs are instances (bbob), run r of a function is on
  instance r + 1: the configuration's problem holds one instance per run
  (`problem_params={"instance": [1, ..., runs]}`), so the instances advance together like
  any run set, and the report measures each run's error from its instance's optimum.
- **Resumable, sharded.** The study goes through `sharded.run_study`, like `reproduce`:
  finished configurations are skipped, an interrupted campaign resumes where it stopped, and
  under torchrun the units are shared over the ranks (rank 0 alone writes store and report).
  On the CPU, outside torchrun, several cells run at once in worker processes when they are
  too small for every core (`cells`; `parallel_cells`, `--parallel-cells`), this process
  alone writing the store: the stored numbers, runs.csv and the report are the serial ones.
  A configuration's key holds everything that changes its numbers (algorithm settings,
  function, dimension, iterations, runs, device, dtype, the campaign's seed), so a campaign
  that adds an algorithm to a finished one computes only the new algorithm's runs.
- **Errors.** error = best f - f*, reported as 0 below 1e-8 in every suite and format
  (`statistics.reported_error`; the store keeps the raw best values). The curve
  of a run holds the error at each recording point: after the last whole iteration that fits
  in `floor(fraction x budget)` evaluations (populations are evaluated whole), read from the
  run's stored best-so-far history. The history keeps every iteration of a run of up to
  1,999 iterations (so CEC 2022 at D = 10 with a population of 100 is exact), every 2nd, 4th,
  ... of longer ones (`engine.history.HISTORY_SIZE`); a point that falls between two kept
  iterations reads the earlier one, a pessimistic value (at D = 20, 9,999 iterations: up to
  7 iterations early), and a point before the first population is complete reads that
  population's best. `campaign.json` counts such points. The last point is the final error.
- **dtype.** float32 on CUDA by default (much faster), float64 on the CPU and for bbob
  everywhere (COCO's targets go down to 1e-8 above f*); recorded in the report. In float32 a best value, and with it the error, is resolved to about 1e-7 f*
  (2e-4 at CEC 2022's f* = 2700): errors near 0 are compared in float64.
- **Recording points in one report.** CEC 2022's points depend on D (D^(k/5 - 3)); the report
  takes one list, so a campaign over several dimensions records every run at the union of
  the points of its dimensions (each dimension's official 16 are among them).
- **Exports.** `exports=("coco", "ioh")` (`--export coco,ioh`) also writes the runs in COCO's
  and IOHprofiler's formats under `<out>/coco/<algorithm>/` and `<out>/ioh/<algorithm>/`
  (`studies/exports`); `export(folder, formats)` does it for a finished campaign's folder,
  from its store, without running anything.
- **Several objectives.** In a multi-objective suite (`zdt`, `dtlz`) a run's result is its
  final non-dominated set (stored with the run); the report scores it by its hypervolume
  (reference point `engine.fronts.reference_point`: 1.1 x the true front's nadir) and its IGD to the
  problem's `pareto_front()` (`metrics`), and tests each in its own direction (higher
  hypervolume, lower IGD is better). Only algorithms for several objectives run there
  (nsga2, moead); the exports (COCO, IOHprofiler: single-objective formats) are refused.
- **Deterministic report.** Everything in report.md, tables.tex, runs.csv and campaign.json
  comes from the plan and the stored rows: the header's wall time is the campaign's compute
  time, the sum of the stored runs' wall times (a batch of runs advanced together counts
  once: each run carries its share); this invocation's wall clock is printed by the command
  line, not written. Rerunning a finished campaign computes nothing and rewrites the same
  bytes.
"""

from __future__ import annotations

import bisect
import dataclasses
import json
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .. import algorithms
from ..version import __version__
from . import exports as _exports
from .campaign_report import FORMATS, rebuild_report, write_report
from .cells import whole_number as _count
from .sharded import run_study, study_group
from .statistics import ERROR_FLOOR, significance_sentence
from .store import ResultStore, StoreError
from .study import RunConfig
from .suites import Suite, get_suite

__all__ = ["compare", "plan", "Campaign", "stored_runs", "DTYPES", "significance_warnings", "rebuild_report", "export",
           "check_exports"]

DTYPES = ("float32", "float64")


@dataclass(frozen=True)
class Campaign:
    """A campaign resolved and checked: what runs, where its results go, how it is named."""

    suite: Suite
    algorithms: tuple[str, ...]
    reference: str
    functions: tuple[str, ...]
    cells: tuple[tuple[str, int], ...]  # (function, dim)
    runs: int
    evals: int | None
    device: str
    dtype: str
    seed: int
    alpha: float
    settings: Mapping[str, dict]  # algorithm -> {"preset": ..., "params": {...}} as given
    configs: tuple[tuple[tuple[str, str, int], RunConfig], ...]  # ((algorithm, function, dim), config)
    out: Path
    command: str
    evals_per_dim: int | None = None

    @property
    def study(self) -> str:
        return f"compare-{self.suite.name}"

    @property
    def store_path(self) -> Path:
        return self.out / "results.sqlite"

    @property
    def dims(self) -> tuple[int, ...]:
        return tuple(sorted({d for _, d in self.cells}))

    def budget(self, function: str, dim: int) -> int:
        return _budget(self.suite, function, dim, self.evals, self.evals_per_dim)

    def fractions(self) -> list[float]:
        """Every dimension's recording points, merged (the report's one list)."""
        return sorted({x for d in self.dims for x in self.suite.fractions(d)})

    def total_runs(self) -> int:
        return sum(config.runs for _, config in self.configs)


def plan(algorithms: str | Sequence[str], suite: str | Suite = "cec2022", dims: Sequence[int] | None = None, *,
         runs: int | None = None, evals: int | None = None, params: Mapping[str, Mapping] | None = None,
         presets: Mapping[str, str] | None = None, pops: Mapping[str, int] | None = None, reference: str | None = None,
         device: str = "auto", dtype: str | None = None, seed: int = 0, out: str | Path | None = None,
         functions: Sequence[str] | None = None, alpha: float = 0.05, evals_per_dim: int | None = None) -> Campaign:
    """Check a campaign's settings and build its configurations (no run starts): every bad
    input is a one-line ValueError naming the choices. See `compare` for the arguments."""
    suite = get_suite(suite)
    algos = _names(algorithms)
    if not algos:
        raise ValueError(f"give at least one algorithm; known algorithms: {', '.join(_registry.algorithm_names())}")
    for a in algos:
        cls = _registry.algorithm_class(a)  # unknown: "unknown algorithm ... known algorithms: ..."
        if suite.multi_objective != bool(getattr(cls, "multi_objective", False)):
            kind = "several objectives" if suite.multi_objective else "one objective"
            raise ValueError(f"suite {suite.name!r} has problems with {kind}; algorithm {a!r} "
                             f"{'optimises one' if suite.multi_objective else 'is for several'}: choose "
                             f"{'nsga2 or moead' if suite.multi_objective else 'another suite (zdt, dtlz) or algorithm'}")
    if len(set(algos)) != len(algos):
        raise ValueError(f"algorithm {next(a for a in algos if algos.count(a) > 1)!r} is listed twice")
    params, presets, pops = dict(params or {}), dict(presets or {}), dict(pops or {})
    for what, given in (("parameters", params), ("a preset", presets), ("a population size", pops)):
        for a in given:
            if a not in algos:
                raise ValueError(f"{what} given for algorithm {a!r}, which is not in the campaign; its algorithms: "
                                 f"{', '.join(algos)}")
    reference = algos[0] if reference is None else reference
    if reference not in algos:
        raise ValueError(f"reference algorithm {reference!r} is not in the campaign; choose one of: {', '.join(algos)}")
    chosen = suite.resolve(None if functions is None else _names(functions))
    cells = suite.cells(chosen, None if dims is None else [_count("dimension", d) for d in _names(dims)])
    runs = suite.runs if runs is None else _count("runs", runs)
    evals = None if evals is None else _count("evals", evals)
    evals_per_dim = None if evals_per_dim is None else _count("evals per dimension", evals_per_dim)
    if evals is not None and evals_per_dim is not None:
        raise ValueError("give the budget once: evals (one number for every run) or evals_per_dim (a multiple of D)")
    device = _device(device)
    if dtype is None:  # the suite's own (bbob: float64), else float32 on CUDA
        dtype = suite.dtype or ("float32" if device.startswith("cuda") else "float64")
    if dtype not in DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}; choose float32 or float64")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    if not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be a significance level in (0, 1), got {alpha!r}")

    settings, built = {}, {}
    for a in algos:
        algo_params = dict(params.get(a, {}))
        if a in pops:
            algo_params["pop_size"] = _count(f"the population of {a}", pops[a])
        built[a] = _registry.get_algorithm(a, preset=presets.get(a), **algo_params)  # unknown keys / presets fail here
        settings[a] = {"preset": presets.get(a), "params": algo_params}
    configs = []
    for function, dim in cells:
        budget = _budget(suite, function, dim, evals, evals_per_dim)
        for a in algos:
            algo = built[a].for_run(dim, budget)
            if suite.multi_objective:  # MOEA/D: its population is its number of weight vectors
                algo = algo.for_objectives(_registry_objectives(function, dim))
            iters = algo.steps_within(budget)
            params_a = settings[a]["params"]
            if algo is not built[a]:  # sizes from the dimension or the budget (L-SHADE): fixed in the config
                params_a = {**params_a, **{k: getattr(algo, k) for k in ("pop_size", "max_evals")
                                           if getattr(built[a], k, 0) is None}}
            if iters < 1:
                raise ValueError(f"a budget of {budget:,} evaluations leaves {a} no iteration after its initial "
                                 f"population ({algo.evals_per_init()} evaluations, then {algo.evals_per_step()} per "
                                 f"iteration) on {suite.label(function)} at D = {dim}: raise --evals or lower --pop")
            tags = {"suite": suite.name, "function": suite.label(function), "seed": seed}
            config = RunConfig(algorithm=a, problem=function, iters=iters, runs=runs, dim=dim,
                               algorithm_params=params_a, preset=settings[a]["preset"], device=device, dtype=dtype,
                               timing="batched", tags=tags,  # bbob: run r on instance r + 1, advancing together
                               problem_params={"instance": list(range(1, runs + 1))} if suite.instances else {})
            configs.append(((a, function, dim), config))
    out = Path("campaigns") / suite.name if out is None else Path(out)
    campaign = Campaign(suite, tuple(algos), reference, chosen, tuple(cells), runs, evals, device, dtype, seed,
                        float(alpha), settings, tuple(configs), out, "", evals_per_dim)
    return dataclasses.replace(campaign, command=_command(campaign, functions is not None))


def compare(algorithms: str | Sequence[str], suite: str | Suite = "cec2022", dims: Sequence[int] | None = None, *,
            runs: int | None = None, evals: int | None = None, params: Mapping[str, Mapping] | None = None,
            presets: Mapping[str, str] | None = None, pops: Mapping[str, int] | None = None,
            reference: str | None = None, device: str = "auto", dtype: str | None = None, seed: int = 0,
            out: str | Path | None = None, functions: Sequence[str] | None = None, alpha: float = 0.05,
            evals_per_dim: int | None = None,
            progress: Callable[[RunConfig, int], None] | None = None, timeout: float | None = None,
            formats: Sequence[str] = FORMATS, exports: str | Sequence[str] = (),
            parallel_cells: int | str = "auto") -> dict[str, Path] | None:
    """Run (or resume) a benchmarking campaign and write its report; returns the written files
    ({"md", "html", "tex", "csv", "json", "store", figure stems: path}).

    `algorithms`: names (a list or "pso,apo"); `suite`: "cec2022", "cec2017", "classic" or a
    `Suite` (`Suite.custom(...)`); `dims`: dimensions (default: the suite's); `runs`: per
    algorithm, function and dimension (default: the suite's official count: 30, 51, 50);
    `evals`: one budget for every run instead of the suite's; `evals_per_dim`: a budget of that
    many evaluations x D instead (COCO's convention); `params` / `presets` / `pops`:
    per algorithm; `reference`: the algorithm the others are tested against (default: the
    first); `device`: "auto", "cpu", "cuda"; `dtype`: default float32 on CUDA, float64 on the
    CPU and for bbob (recorded in the report); `seed`: the campaign's base seed (every configuration
    derives its own); `out`: folder of the store and the report (default campaigns/<suite>);
    `functions`: a subset of the suite; `alpha`: significance level of the tests; `progress`:
    called with (config, runs) as runs are committed; `timeout`: under torchrun, seconds
    before a silent rank fails the job; `exports`: "coco", "ioh" (a list or "coco,ioh"): the
    runs also in those platforms' formats, under out/coco/<algorithm>/ and out/ioh/<algorithm>/
    (the returned dict has their folders under "coco" and "ioh"); `parallel_cells`: on the CPU,
    how many cells run at once in worker processes, "auto" or a number (`studies.cells`).

    Under torchrun the ranks share the runs; rank 0 writes store and report, the others
    return None.
    """
    campaign = plan(algorithms, suite, dims, runs=runs, evals=evals, params=params, presets=presets, pops=pops,
                    reference=reference, device=device, dtype=dtype, seed=seed, out=out, functions=functions,
                    alpha=alpha, evals_per_dim=evals_per_dim)
    exports = check_exports(campaign, exports)
    for text in significance_warnings(campaign):
        warnings.warn(text, stacklevel=2)
    return run_campaign(campaign, progress=progress, timeout=timeout, formats=formats, exports=exports,
                        parallel_cells=parallel_cells)


def check_exports(campaign: Campaign, exports: str | Sequence[str] | None) -> tuple[str, ...]:
    """The export names, checked against the campaign before it runs (a ValueError names the
    known exports, or says why the campaign cannot be written in one)."""
    names = _exports.export_names(exports)
    if names and campaign.suite.multi_objective:
        raise ValueError(f"the exports ({', '.join(names)}) are single-objective formats: suite "
                         f"{campaign.suite.name!r} has several objectives; drop --export")
    _exports.check(names, campaign.functions)
    return names


def run_campaign(campaign: Campaign, progress=None, timeout: float | None = None,
                 formats: Sequence[str] = FORMATS, exports: Sequence[str] = (),
                 parallel_cells: int | str = "auto") -> dict[str, Path] | None:
    """Run (or resume) a planned campaign, then write its report and `exports` (rank 0 only)."""
    group = study_group([campaign.device], timeout)
    lead = group is None or group.lead
    store = ResultStore(campaign.store_path) if lead else None
    try:
        run_study(campaign.study, [c for _, c in campaign.configs], store, group, progress, warm_timing=False,
                  parallel_cells=parallel_cells)
        if not lead:
            return None
        rows = {config.key(): store.runs(campaign.study, config.key()) for _, config in campaign.configs}
    finally:
        if store is not None:
            store.close()
    if campaign.suite.multi_objective:
        runs, notes, truths = front_runs(campaign, rows)
    else:
        (runs, notes), truths = report_runs(campaign, rows), None
    meta = report_meta(campaign, rows, runs)
    written = write_report(runs, meta, campaign.out, formats, truths)
    written["json"] = _write_json(campaign, meta, notes)
    written["store"] = campaign.store_path
    if exports:
        ordered = [row for _, config in campaign.configs for row in rows[config.key()]]
        for name in _exports.write(_exports.traces(ordered, campaign.suite.name), campaign.out, exports):
            written[name] = campaign.out / name
    return written


def export(folder: str | Path, formats: str | Sequence[str] = ("coco", "ioh")) -> dict[str, Path]:
    """Write a finished campaign's runs in `formats` ("coco", "ioh") from its folder's store,
    without running anything: `<folder>/coco/<algorithm>/`, `<folder>/ioh/<algorithm>/`.
    Returns {format: folder}.

    The campaign's runs are those of the configurations its campaign.json lists (written by
    `compare`); a campaign.json from before that list existed takes every run of its study in
    the store, and refuses when the store holds two configurations of one algorithm, function
    and dimension (e.g. an earlier campaign with another budget in the same folder): export
    then from `compare(..., exports=...)`, which knows its configurations."""
    folder = Path(folder)
    names = _exports.export_names(formats)
    if not names:
        raise ValueError(f"give at least one export; known exports: {', '.join(_exports.EXPORTS)}")
    doc_path = folder / "campaign.json"
    if not doc_path.is_file():
        raise ValueError(f"{folder} has no campaign.json: give the --out folder of a finished `heuriscale compare`")
    doc = json.loads(doc_path.read_text(encoding="utf-8"))
    with ResultStore(folder / doc.get("store", "results.sqlite"), readonly=True) as store:
        rows = store.runs(doc["study"])
    keys = doc.get("config_keys")
    if keys is not None:
        order = {k: i for i, k in enumerate(keys)}
        rows = sorted((r for r in rows if r["config_key"] in order),
                      key=lambda r: (order[r["config_key"]], r["repeat"]))
    else:
        _single_configuration(rows, doc_path)
    if not rows:
        raise ValueError(f"the store of {folder} holds no run of this campaign: run it first")
    suite = doc.get("suite", {}).get("name") or doc["meta"]["suite"]
    _exports.check(names, [r["config"]["problem"] for r in rows])
    written = _exports.write(_exports.traces(rows, suite), folder, names)
    return {name: folder / name for name in written}


def _single_configuration(rows: list[dict], doc_path: Path) -> None:
    """Refuse rows in which one algorithm, function and dimension has two configurations."""
    seen: dict[str, str] = {}
    for r in rows:
        c = r["config"]
        cell = f"{c['algorithm']} on {c['problem']} {json.dumps(c.get('problem_params') or {})} at D = {c['dim']}"
        if seen.setdefault(cell, r["config_key"]) != r["config_key"]:
            raise ValueError(f"{doc_path} does not list its configurations (written by an older heuriscale) and the "
                             f"store holds two of {cell}: rerun the campaign's command with --export (it computes "
                             f"nothing new) to export exactly its runs")


def significance_warnings(campaign: Campaign) -> list[str]:
    """One sentence per dimension where the campaign's runs per algorithm and its number of
    functions (Holm's family) cannot give a significant rank-sum result at its alpha, saying the
    smallest attainable adjusted p and the runs needed; empty when every dimension can (or when
    there is no second algorithm to test)."""
    if len(campaign.algorithms) < 2:
        return []
    out = []
    for d in campaign.dims:
        m = sum(1 for _, dd in campaign.cells if dd == d)
        possible, text = significance_sentence(campaign.runs, m, campaign.alpha, f" at D = {d}")
        if not possible:
            out.append(text)
    return out


def stored_runs(campaign: Campaign) -> tuple[int, int, Path]:
    """(runs of the campaign in its store, runs it has in all, the store's path), read without
    the writer's lock; a store that is missing or unreadable counts as empty."""
    stored = 0
    if campaign.store_path.is_file():
        try:
            with ResultStore(campaign.store_path, readonly=True) as store:
                for _, config in campaign.configs:
                    stored += len(store.finished(campaign.study, config.key()) & set(range(config.runs)))
        except StoreError:
            pass
    return stored, campaign.total_runs(), campaign.store_path


# -- from stored rows to the report's runs ------------------------------------------------------
def report_runs(campaign: Campaign, rows: Mapping[str, list[dict]]) -> tuple[list[dict], dict]:
    """The report's runs (see `campaign_report.write_report`) from the stored rows, and what the
    conversion had to approximate."""
    suite, fractions = campaign.suite, campaign.fractions()
    runs, rough, optima, named = [], [0, 0], {}, {}
    for (algo, function, dim), config in campaign.configs:
        instances = config.problem_params.get("instance")  # bbob: one per run
        cell = (function, dim, config.runs)
        if cell not in optima:  # each run's f* (bbob: its instance's)
            optima[cell] = _exports.runs.run_optima(function, dim, config.runs, config.problem_params)
        built = _registry.get_algorithm(algo, preset=config.preset, **config.algorithm_params)
        budget = campaign.budget(function, dim)
        for row in rows[config.key()]:
            curve, early, earlier = _curve(row, config.iters, fractions, budget, built)
            rough[0] += early
            rough[1] += earlier
            repeat = row["repeat"]
            optimum = None if optima[cell] is None else optima[cell][repeat]
            named[f"{suite.label(function)} D={dim}" + (f" instance {instances[repeat]}" if instances else "")] = optimum
            runs.append({"algorithm": algo, "function": suite.label(function), "dim": dim, "repeat": repeat,
                         "known_optimum": optimum is not None,
                         "seed": row["seed"], "error": suite.error(row["best_f"], optimum),
                         "curve": [suite.error(v, optimum) for v in curve], "evals": row["evals"],
                         "wall_s": row["wall_time"] / max(1, int(row["extra"].get("batched_runs", 1)))})
    return runs, {"curve_points": {"before_the_first_population": rough[0], "read_from_an_earlier_iteration": rough[1],
                                   "in_all": len(runs) * len(fractions)},
                  "optima": named}


#: The indicators of a multi-objective campaign's report (`campaign_report.ERROR` for the form).
INDICATORS = [{"key": "hv", "label": "final hypervolume", "short": "hypervolume", "higher": True},
              {"key": "igd", "label": "final IGD", "short": "IGD", "higher": False}]


def front_runs(campaign: Campaign, rows: Mapping[str, list[dict]]) -> tuple[list[dict], dict, dict]:
    """A multi-objective campaign's report runs: each run's final non-dominated set (stored in
    its row) scored by hypervolume and IGD; the notes (reference points); and the true fronts
    ({function label: (n, M) array}) the report draws."""
    from .. import metrics, problems
    from ..engine.fronts import reference_point

    suite, runs, refs, truths = campaign.suite, [], {}, {}
    for (algo, function, dim), config in campaign.configs:
        label = suite.label(function)
        if label not in truths:
            problem = problems.get_problem(function, dim=dim, **config.problem_params)
            truths[label], refs[label] = problem.pareto_front().numpy(), reference_point(problem, None).tolist()
        for row in rows[config.key()]:
            front = row["extra"].get("front_f")
            if front is None:
                raise ValueError(f"the stored run {row['repeat']} of {algo} on {label} has no final front (written by "
                                 "a heuriscale without several objectives): run the campaign again in a new --out")
            F = np.asarray(front, dtype=float).reshape(-1, truths[label].shape[1])
            runs.append({"algorithm": algo, "function": label, "dim": dim, "repeat": row["repeat"],
                         "known_optimum": False, "seed": row["seed"], "error": math.nan,
                         "hv": metrics.hypervolume(F, refs[label]), "igd": metrics.igd(F, truths[label]),
                         "front": F, "curve": [], "evals": row["evals"],
                         "wall_s": row["wall_time"] / max(1, int(row["extra"].get("batched_runs", 1)))})
    return runs, {"reference_points": refs}, truths


def _curve(row: dict, iters: int, fractions: Sequence[float], budget: int, algo) -> tuple[list, int, int]:
    """Best-so-far after the last whole iteration within floor(x * budget) evaluations, per x;
    and how many of these points came before the first population was complete (they read its
    best) or from an earlier iteration than that (the history kept every 2nd, 4th, ... only)."""
    its, values = row["history"]["iter"], row["history"]["f"]
    curve, early, earlier = [], 0, 0
    for x in fractions:
        e = math.floor(x * budget + 1e-9)
        started = e >= algo.evals_per_init()  # the first population is complete
        t = min(iters, algo.steps_within(e)) if started else 0
        if t >= iters:
            curve.append(row["best_f"])
            continue
        i = bisect.bisect_right(its, t) - 1
        curve.append(values[max(i, 0)])
        early += not started
        earlier += started and (i < 0 or its[i] != t)
    return curve, early, earlier


def report_meta(campaign: Campaign, rows: Mapping[str, list[dict]], runs: list[dict]) -> dict:
    """The report's header, from the plan and the stored rows only (so reruns write the same bytes)."""
    import scipy

    stored = [r for rs in rows.values() for r in rs]
    budgets = {}
    for d in campaign.dims:
        values = {campaign.budget(f, dd) for f, dd in campaign.cells if dd == d}
        budgets[d] = values.pop() if len(values) == 1 else None  # classic: a budget per function (campaign.json)
    names = sorted({r["device_name"] for r in stored})
    ids = sorted({r["device"] for r in stored})
    engines = sorted({str(r["extra"].get("engine")) for r in stored if r["extra"].get("engine")})
    kinds = sorted({i.split(":")[0] for i in ids}) or [campaign.device.split(":")[0]]
    device = (f"{', '.join(kinds)} ({', '.join(names) or 'nothing run'}"
              f"{f'; {len(ids)} devices' if len(ids) > 1 else ''}), {campaign.dtype}"
              f"{'; engine ' + ', '.join(engines) if engines else ''}")
    torch_versions = sorted({str(r["extra"]["torch"]) for r in stored if r["extra"].get("torch")})
    versions = {"heuriscale": __version__, "torch": ", ".join(torch_versions) or torch.__version__,
                "scipy": scipy.__version__}
    parameters = {}
    for a in campaign.algorithms:
        s = campaign.settings[a]
        full = _registry.get_algorithm(a, preset=s["preset"], **s["params"]).params()
        shown = {k: v for k, v in full.items() if not (k == "max_iters" and v is None)}
        parameters[a] = ({"preset": s["preset"]} if s["preset"] else {}) | shown
    indicators = {"indicators": INDICATORS} if campaign.suite.multi_objective else {}
    return {**indicators, "suite": campaign.suite.name, "fractions": campaign.fractions(), "budgets": budgets,
            "reference": campaign.reference, "alpha": campaign.alpha, "device": device, "versions": versions,
            "seeds": (f"campaign seed {campaign.seed}; each configuration and batch of runs derives its own "
                      "(RunConfig.seed), listed per run in runs.csv"),
            "wall_s": round(sum(r["wall_s"] for r in runs), 6), "command": campaign.command, "parameters": parameters}


def _write_json(campaign: Campaign, meta: dict, notes: dict) -> Path:
    suite = campaign.suite
    cells = [{"function": suite.label(f), "dim": d, "budget": campaign.budget(f, d)} for f, d in campaign.cells]
    doc = {"meta": meta, "suite": {"name": suite.name, "source": suite.source, "official_runs": suite.runs,
                                   "errors_below": ERROR_FLOOR, "recorded_as": 0.0,
                                   "recording_fractions": {d: list(suite.fractions(d)) for d in campaign.dims}},
           "study": campaign.study, "store": campaign.store_path.name, "cells": cells,
           "config_keys": [config.key() for _, config in campaign.configs],
           "wall_s": "the campaign's compute time: the sum of its stored runs' wall times", **notes}
    path = campaign.out / "campaign.json"
    path.write_text(json.dumps(doc, indent=1, sort_keys=True, default=str) + "\n", encoding="utf-8")
    return path


# -- helpers ---------------------------------------------------------------------------------------
_registry = algorithms  # the module, under a name the `algorithms` argument does not shadow


def _registry_objectives(function: str, dim: int) -> int:
    from .. import problems

    return problems.get_problem(function, dim=dim).objectives


def _names(value) -> list:
    """A list from a list or a comma-separated string ("pso,apo" or "10,20")."""
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, int):
        return [value]
    return list(value)


def _budget(suite: Suite, function: str, dim: int, evals: int | None, evals_per_dim: int | None) -> int:
    """Evaluations per run: `evals`, else `evals_per_dim` x D, else the suite's budget."""
    if evals is not None:
        return evals
    return evals_per_dim * dim if evals_per_dim is not None else suite.budget(function, dim)


def _device(device: str) -> str:
    from ..engine.device import resolve_device

    resolved = resolve_device(device)  # a clear error for a device that is not there
    name = str(device).strip().lower()
    return resolved.type if name == "auto" else name


def _command(c: Campaign, subset: bool) -> str:
    """The campaign as one canonical command line (the same from Python and from the CLI)."""
    parts = ["heuriscale compare", f"--suite {c.suite.name}", f"--algorithms {','.join(c.algorithms)}",
             f"--dims {','.join(map(str, c.dims))}", f"--runs {c.runs}"]
    if c.evals is not None:
        parts.append(f"--evals {c.evals}")
    if c.evals_per_dim is not None:
        parts.append(f"--evals-per-dim {c.evals_per_dim}")
    if subset:
        parts.append(f"--functions {','.join(c.suite.label(f) for f in c.functions)}")
    for a in c.algorithms:
        s = c.settings[a]
        if s["preset"]:
            parts.append(f"--preset {a}={s['preset']}")
        for k, v in s["params"].items():
            parts.append(f"--pop {a}={v}" if k == "pop_size" else f"-p {a}.{k}={v!r}")
    parts += [f"--reference {c.reference}", f"--device {c.device}", f"--dtype {c.dtype}", f"--seed {c.seed}"]
    if c.alpha != 0.05:
        parts.append(f"--alpha {c.alpha:g}")
    if c.suite.source == "custom":
        parts[0] = "compare() in Python, custom suite:"
    return " ".join(parts)
