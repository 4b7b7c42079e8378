"""Issue 27 item 5: the baselines' speed per generation, ours beside EvoX 1.4 and pycma.

(a) sphere on [-100, 100], on --device (CUDA by default), pop 100 x D 10 and 1,000 x D 100:
    ours `de` (rand/1/bin, F = 0.5, CR = 0.9: EvoX DE's defaults, which are Storn & Price's
    "good initial choice") and `lshade`, on the path the engine's `auto` picks (Runner(engine=
    "auto"): the fastest there is, e.g. the compiled step in a CUDA graph) and eagerly,
    against `evox.algorithms.DE` (its defaults: rand/1, F 0.5, CR 0.9) and `SHADE` (its only
    option, diff_padding_num, at its default), stepped as EvoX's quickstart does
    (workflow.init_step(), then workflow.step() in a loop, torch.cuda.synchronize around
    the timed loop), and with the step compiled, `torch.compile(workflow.step)`, as EvoX's
    docs suggest (a compile that fails or outlasts --timeout is recorded as such).
    Issue targets: ours >= 5x faster than EvoX DE, `lshade` >= 50x faster than EvoX SHADE.
(b) CMA-ES on the CPU, D 10 / lambda 10 and D 100 / lambda 100, float64: ours `cmaes` (the
    CPU path `auto` picks) against pycma (CMA_active=False, ask/tell on a NumPy sphere, no
    bounds, x0 uniform in [-100, 100]^D, sigma0 60 = ours), the same generations, each
    generation timed; medians over the generations both sides ran. Target: >= 10x pycma.
(c) CMA-ES on --device: 1,000 runs of D 10 (lambda 10) advancing together against 1 run,
    per generation. Target: <= 2x.

Timing: after the set-up (construction, initial population, compile and graph capture:
reported as `setup_s`, not in the per-generation time) and a warm-up, per generation =
the median of --repeats blocks, each a loop of generations with a device synchronisation
before and after, lasting about --budget / --repeats seconds together ((b): every generation
timed on its own). Each measurement is in a try/except: an error is recorded in the JSON
and the script goes on. Measurements that compile (EvoX compiled, ours on CUDA) run in a
child process of this script, killed after --timeout seconds.

Keys (for --only, fnmatch patterns or prefixes, comma-separated):
    a/<pop>x<D>/{ours-de,ours-de-eager,ours-lshade,ours-lshade-eager,evox-de,evox-de-compiled,
                 evox-shade,evox-shade-compiled}
    b/d<D>-l<lambda>/{ours-cmaes,pycma}        c/d10-l10/{ours-cmaes-runs1,ours-cmaes-runs1000}

On the device (EvoX and pycma from the wheels in the git-ignored .whl/, carried with the tree):

    pip install --no-index --no-deps --target /tmp/site .whl/evox-1.4.0-py3-none-any.whl \
        .whl/cma-4.5.0-py3-none-any.whl
    PYTHONPATH=src:/tmp/site python3 benchmarks/baselines_speed.py --out $OUT/baselines
    # everything may outlast a 10-minute command (each compile is paid anew on a fresh machine):
    # part by part, each run writing its files after every measurement (a killed run keeps them)
    B="PYTHONPATH=src:/tmp/site python3 benchmarks/baselines_speed.py --out $OUT/baselines"
    $B --only 'a/*/ours-*'                              # 4 compiles (children) + eager
    $B --only 'a/*/evox-de,a/*/evox-de-compiled,a/*/evox-shade'
    $B --only a/100x10/evox-shade-compiled              # SHADE's step loops over the population:
    $B --only a/1000x100/evox-shade-compiled --timeout 540   # dynamo unrolls it (minutes)
    $B --only b,c
    # one table from several runs' JSON files:
    python3 benchmarks/baselines_speed.py --report run1/baselines.json run2/baselines.json --out merged

A smoke test anywhere (small sizes, short budgets; EvoX on the CPU too):
    PYTHONPATH=src:/tmp/evox_site python3 benchmarks/baselines_speed.py --device cpu --quick --out /tmp/bl

EvoX 1.4 needs only torch and numpy for DE and SHADE; pycma (`cma`) only numpy.
--out DIR writes DIR/baselines.json (provenance + one row per measurement) and
DIR/baselines.md (the tables, with the ratios and the issue's targets).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

import heuriscale as hs
from heuriscale.engine.device import synchronize
from heuriscale.engine.threads import default_cpu_threads, set_cpu_threads

# (pop, D) of part (a); (D, lambda) of part (b); (D, lambda, runs) of part (c)
SIZES_A = [(100, 10), (1000, 100)]
SIZES_B = [(10, 10), (100, 100)]
SIZES_C = [(10, 10, (1, 1000))]
QUICK_A = [(20, 5), (100, 10)]
QUICK_B = [(10, 10), (20, 20)]
QUICK_C = [(10, 10, (1, 100))]
BOUND = 100.0
#: L-SHADE's evaluation budget, in generations of N_init: its population then stays above
#: 90 % of N_init for the first 1,000 generations (our tensors keep N_init rows regardless).
LSHADE_HORIZON = 10_000
TARGETS = {"de": (">=", 5.0), "lshade": (">=", 50.0), "cmaes-cpu": (">=", 10.0), "cmaes-batch": ("<=", 2.0)}


@dataclass
class Measurement:
    key: str
    run: callable  # (Options) -> dict
    isolate: bool = False  # in a child process, killed after --timeout (it compiles)


@dataclass
class Options:
    device: torch.device
    budget: float
    repeats: int
    gens_b: int
    timeout: float
    quick: bool


# -- timing -----------------------------------------------------------------------------------
def blocks(advance, device: torch.device, unit: int, opts: Options, max_gens: int | None = None) -> dict:
    """Seconds per generation of `advance(n)` (n a multiple of `unit`): one block to warm up
    and estimate, then --repeats blocks of about budget / repeats seconds (at most `max_gens`
    generations together), each synchronised before and after; the median of the blocks."""
    synchronize(device)
    t0 = time.perf_counter()
    advance(unit)
    synchronize(device)
    one = (time.perf_counter() - t0) / unit
    gens = int(opts.budget / opts.repeats / max(one, 1e-7))
    if max_gens is not None:
        gens = min(gens, max_gens // opts.repeats)
    gens = max(unit, gens // unit * unit)
    per_gen = []
    for _ in range(opts.repeats):
        synchronize(device)
        t0 = time.perf_counter()
        advance(gens)
        synchronize(device)
        per_gen.append((time.perf_counter() - t0) / gens)
    return {"per_gen_s": statistics.median(per_gen), "blocks_per_gen_s": per_gen, "gens_per_block": gens,
            "warmup_per_gen_s": one}


# -- ours -------------------------------------------------------------------------------------
def ours(algorithm, dim: int, runs: int, device: torch.device, engine: str, dtype: str, opts: Options,
         max_gens: int | None = None) -> dict:
    """Our algorithm per generation with `engine` ('auto': the fastest path there is)."""
    problem = hs.get_problem("sphere", dim=dim, bounds=(-BOUND, BOUND))
    started = time.perf_counter()
    runner = hs.Runner(problem, algorithm, runs=runs, device=device, engine=engine, seed=0, dtype=dtype)
    synchronize(runner.device)
    built = time.perf_counter() - started
    unit = runner.chunk if runner.replays_graphs else 1
    started = time.perf_counter()
    runner.step(unit)  # compile + capture on the graph engines
    synchronize(runner.device)
    first = time.perf_counter() - started
    row = blocks(runner.step, runner.device, unit, opts, max_gens)
    row.update(engine=runner._engine_used(), engine_reason=runner._extra.get("engine_reason", ""),
               setup_s=built + first, construct_s=built, first_steps_s=first, capture_s=runner.setup_time,
               first_steps=unit, dtype=dtype, runs=runs, pop=runner.algorithm.pop_size, dim=dim,
               best_f=float(runner.best_f.min()), generations=runner.iteration)
    if runner.device.type == "cpu":
        row["cpu_threads"] = torch.get_num_threads()
    return row


def ours_de(pop: int, dim: int, engine: str):
    return lambda o: ours(hs.DE(pop_size=pop, F=0.5, CR=0.9, strategy="rand/1"), dim, 1, o.device, engine,
                          "float32", o)


def ours_lshade(pop: int, dim: int, engine: str):
    algo = hs.LSHADE(pop_size=pop, max_evals=pop * LSHADE_HORIZON)
    return lambda o: ours(algo, dim, 1, o.device, engine, "float32", o)


# -- EvoX 1.4 -----------------------------------------------------------------------------------
def evox(name: str, pop: int, dim: int, compiled: bool):
    def run(o: Options) -> dict:
        import evox as ev
        from evox.algorithms import DE, SHADE
        from evox.problems.numerical import Sphere
        from evox.workflows import StdWorkflow

        torch.manual_seed(0)
        row = {"evox": getattr(ev, "__version__", _dist_version("evox")), "pop": pop, "dim": dim, "dtype": "float32",
               "compiled": compiled}
        with o.device:  # EvoX creates its tensors on the default device (its quickstart's way)
            lb, ub = torch.full((dim,), -BOUND), torch.full((dim,), BOUND)
            started = time.perf_counter()
            algo = DE(pop, lb, ub) if name == "de" else SHADE(pop, lb, ub)
            workflow = StdWorkflow(algo, Sphere())
            workflow.init_step()
            step = workflow.step
            if compiled:
                graph_breaks(clear=True)
                step = torch.compile(workflow.step)
            for _ in range(3):  # compiles (and recompiles once the state is set) on the first calls
                step()
            synchronize(o.device)
            row["setup_s"] = time.perf_counter() - started
            if compiled:
                breaks = graph_breaks()
                row["graph_breaks"] = None if breaks is None else sum(breaks.values())
                row["graph_break_reasons"] = [str(k)[:200] for k in list(breaks or {})[:5]]

            def advance(n: int) -> None:
                for _ in range(n):
                    step()

            row.update(blocks(advance, o.device, 1, o))
            row["best_f"] = float(workflow.algorithm.fit.min())
        return row

    return run


def graph_breaks(clear: bool = False) -> dict | None:
    """Dynamo's graph breaks so far, by reason (None where this torch does not say)."""
    try:
        from torch._dynamo.utils import counters
    except ImportError:
        return None
    if clear:
        counters.clear()
    return dict(counters.get("graph_break", {}))


def _dist_version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "?"


# -- CMA-ES -----------------------------------------------------------------------------------
def per_generation_times(advance, gens: int, limit_s: float, device: torch.device) -> list[float]:
    """Seconds of each of up to `gens` generations (stops after `limit_s` seconds)."""
    times, started = [], time.perf_counter()
    for _ in range(gens):
        synchronize(device)
        t0 = time.perf_counter()
        advance()
        synchronize(device)
        times.append(time.perf_counter() - t0)
        if time.perf_counter() - started > limit_s:
            break
    return times


def ours_cmaes_cpu(dim: int, lam: int):
    def run(o: Options) -> dict:
        cpu = torch.device("cpu")
        problem = hs.get_problem("sphere", dim=dim, bounds=(-BOUND, BOUND))
        started = time.perf_counter()
        runner = hs.Runner(problem, hs.CMAES(pop_size=lam), runs=1, device=cpu, engine="auto", seed=0,
                           dtype="float64")
        unit = runner.chunk if runner.engine == "native" else 1  # native kernels: many steps a call
        runner.step(unit)
        setup = time.perf_counter() - started
        for _ in range(3):
            runner.step(unit)
        limit = 4 * o.budget * o.repeats
        blocks_ = per_generation_times(lambda: runner.step(unit), max(1, o.gens_b // unit), limit, cpu)
        return {"engine": runner._engine_used(), "engine_reason": runner._extra.get("engine_reason", ""),
                "setup_s": setup, "per_gen_times_s": [t / unit for t in blocks_ for _ in range(unit)],
                "per_gen_s": statistics.median(blocks_) / unit,
                "cpu_threads": torch.get_num_threads(), "dtype": "float64", "dim": dim, "lambda": lam,
                "best_f": float(runner.best_f.min())}

    return run


def pycma_cpu(dim: int, lam: int):
    def run(o: Options) -> dict:
        import warnings

        import cma

        rng = np.random.default_rng(0)
        x0 = rng.uniform(-BOUND, BOUND, dim)
        started = time.perf_counter()
        es = cma.CMAEvolutionStrategy(x0, 0.3 * 2 * BOUND, {"popsize": lam, "seed": 1, "CMA_active": False,
                                                             "verbose": -9})
        setup = time.perf_counter() - started
        best, gens, decompositions = [math.inf], [0], [0]
        decompose = es.sm._decompose_C  # counted: how often pycma's lazy update decomposes C

        def counted(*args, **kwargs):
            decompositions[0] += 1
            return decompose(*args, **kwargs)

        es.sm._decompose_C = counted

        def generation() -> None:
            gens[0] += 1
            X = es.ask()
            f = np.sum(np.square(np.asarray(X)), axis=1)
            es.tell(X, f.tolist())
            best[0] = min(best[0], float(f.min()))

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pycma warns once its own stop criteria hold; we step on
            for _ in range(3):
                generation()
            times = per_generation_times(generation, o.gens_b, 4 * o.budget * o.repeats, torch.device("cpu"))
        C = np.array(es.sm.C)
        eigh = per_generation_times(lambda: np.linalg.eigh(C), 50, o.budget, torch.device("cpu"))
        return {"cma": cma.__version__, "setup_s": setup, "per_gen_times_s": times,
                "per_gen_s": statistics.median(times), "dim": dim, "lambda": lam, "best_f": best[0],
                "pycma_stop": {k: str(v) for k, v in es.stop().items()},
                "lazy_update_gap": es.sm.lazy_update_gap, "generations": gens[0],
                "decompositions": decompositions[0], "eigh_s": statistics.median(eigh)}

    return run


def ours_cmaes_batch(dim: int, lam: int, runs: int):
    # at most --gens generations timed: 1 run and 1,000 then time the same stage of the search
    # (a run stepped long past convergence would time eigh on a degenerate C)
    return lambda o: ours(hs.CMAES(pop_size=lam), dim, runs, o.device, "auto", "float64", o, max_gens=o.gens_b)


# -- the plan -------------------------------------------------------------------------------------
def plan(opts: Options) -> list[Measurement]:
    on_cuda = opts.device.type == "cuda"
    out = []
    for pop, dim in QUICK_A if opts.quick else SIZES_A:
        k = f"a/{pop}x{dim}"
        out += [Measurement(f"{k}/ours-de", ours_de(pop, dim, "auto"), isolate=on_cuda),
                Measurement(f"{k}/ours-de-eager", ours_de(pop, dim, "eager")),
                Measurement(f"{k}/ours-lshade", ours_lshade(pop, dim, "auto"), isolate=on_cuda),
                Measurement(f"{k}/ours-lshade-eager", ours_lshade(pop, dim, "eager")),
                Measurement(f"{k}/evox-de", evox("de", pop, dim, False)),
                Measurement(f"{k}/evox-de-compiled", evox("de", pop, dim, True), isolate=True),
                Measurement(f"{k}/evox-shade", evox("shade", pop, dim, False)),
                Measurement(f"{k}/evox-shade-compiled", evox("shade", pop, dim, True), isolate=True)]
    for dim, lam in QUICK_B if opts.quick else SIZES_B:
        out += [Measurement(f"b/d{dim}-l{lam}/ours-cmaes", ours_cmaes_cpu(dim, lam)),
                Measurement(f"b/d{dim}-l{lam}/pycma", pycma_cpu(dim, lam))]
    for dim, lam, runs in QUICK_C if opts.quick else SIZES_C:
        out += [Measurement(f"c/d{dim}-l{lam}/ours-cmaes-runs{n}", ours_cmaes_batch(dim, lam, n)) for n in runs]
    return out


def selected(key: str, patterns: list[str] | None) -> bool:
    return patterns is None or any(fnmatch.fnmatchcase(key, p) or key.startswith(p.rstrip("/") + "/")
                                   for p in patterns)


def measure(m: Measurement, opts: Options, argv: list[str], isolate: bool) -> dict:
    """One measurement's row: its numbers, or the error that stopped it."""
    started = time.perf_counter()
    try:
        row = child(m.key, opts, argv) if isolate and m.isolate else m.run(opts)
    except Exception as e:  # noqa: BLE001 - any failure becomes a row, the others still run
        row = {"error": f"{type(e).__name__}: {e}"[:2000], "traceback": traceback.format_exc().splitlines()[-12:]}
    finally:
        if opts.device.type == "cuda":
            torch.cuda.empty_cache()
    row["wall_s"] = time.perf_counter() - started
    row["isolated"] = bool(isolate and m.isolate)
    return {"key": m.key, **row}


def child(key: str, opts: Options, argv: list[str]) -> dict:
    """`key` measured in a child process of this script (its own CUDA context and compile
    caches in memory), the whole process group killed after --timeout seconds."""
    cmd = [sys.executable, __file__, *argv, "--child", key]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=opts.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the child and the compile workers it started
        proc.communicate()
        return {"error": f"timeout: not done after {opts.timeout:.0f} s (set-up, e.g. compilation, included)"}
    lines = [line for line in out.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = err.strip().splitlines()[-15:]
        return {"error": f"child exited {proc.returncode}" + (f": {tail[-1]}" if tail else ""), "stderr_tail": tail}
    return json.loads(lines[-1])


# -- the report --------------------------------------------------------------------------------
def fmt(seconds) -> str:
    if seconds is None:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"


def cell(row: dict | None, engine: bool = False) -> str:
    if row is None:
        return "not run"
    if "error" in row:
        return "failed: " + row["error"].splitlines()[0][:80].replace("|", "/")
    text = fmt(row["per_gen_s"])
    return f"{text} ({row['engine']})" if engine else text


def ratio(slow: dict | None, fast: dict | None) -> float | None:
    ok = slow and fast and "per_gen_s" in slow and "per_gen_s" in fast and fast["per_gen_s"] > 0
    return slow["per_gen_s"] / fast["per_gen_s"] if ok else None


def verdict(value: float | None, target: tuple[str, float]) -> str:
    if value is None:
        return "-"
    met = value >= target[1] if target[0] == ">=" else value <= target[1]
    return f"{value:.3g}x ({'met' if met else 'not met'})"


def cma_common(rows: dict, prefix: str) -> None:
    """(b): both sides' medians over the generations both ran."""
    a, b = rows.get(f"{prefix}/ours-cmaes"), rows.get(f"{prefix}/pycma")
    if not (a and b and "per_gen_times_s" in a and "per_gen_times_s" in b):
        return
    n = min(len(a["per_gen_times_s"]), len(b["per_gen_times_s"]))
    for r in (a, b):
        r["per_gen_s"] = statistics.median(r["per_gen_times_s"][:n]) if n else None
        r["generations_compared"] = n


def markdown(rows: dict, meta: dict) -> str:
    lines = [f"Commit {meta.get('commit')}, {meta.get('date')}; GPU {meta.get('gpu')}; CPU {meta.get('cpu')}; "
             f"torch {meta.get('torch')}, EvoX {meta.get('evox')}, pycma {meta.get('cma')}.", ""]
    sizes = sorted({k.split("/")[1] for k in rows if k.startswith("a/")}, key=lambda s: int(s.split("x")[0]))
    if sizes:
        lines += ["(a) Per generation, sphere on [-100, 100], float32, one run "
                  f"(device {meta.get('device')}). Ratio: EvoX's time / ours (auto path).", "",
                  "| pop x D | ours | ours, auto path | its set-up | ours, eager | EvoX | EvoX, eager | "
                  "EvoX, step compiled | ratio to EvoX | ratio to EvoX compiled | target |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for size in sizes:
            for mine, theirs, target in (("de", "de", "de"), ("lshade", "shade", "lshade")):
                a = rows.get(f"a/{size}/ours-{mine}")
                eager = rows.get(f"a/{size}/ours-{mine}-eager")
                e, ec = rows.get(f"a/{size}/evox-{theirs}"), rows.get(f"a/{size}/evox-{theirs}-compiled")
                sign, value = TARGETS[target]
                setup = fmt(a["setup_s"]) if a and "setup_s" in a else "-"
                lines.append(f"| {size} | {mine} | {cell(a, True)} | {setup} | {cell(eager)} | {theirs.upper()} | "
                             f"{cell(e)} | {cell(ec)} | {verdict(ratio(e, a), TARGETS[target])} | "
                             f"{verdict(ratio(ec, a), TARGETS[target])} | {sign} {value:g}x |")
        lines.append("")
    cases = sorted({k.rsplit("/", 1)[0] for k in rows if k.startswith("b/")}, key=lambda s: int(s[3:].split("-")[0]))
    if cases:
        lines += ["(b) CMA-ES per generation on the CPU, float64, median over the generations both ran. "
                  "Ratio: pycma / ours.", "",
                  "pycma's decompositions: how many of its generations decomposed C (its lazy update, every "
                  "1 / (10 n (c_1 + c_mu)) generations); one eigh: NumPy's on pycma's C, the least a generation "
                  "that decomposes C costs.", "",
                  "| D / lambda | generations | ours (path) | pycma | pycma's decompositions | one eigh | ratio | "
                  "target |", "|---|---|---|---|---|---|---|---|"]
        for case in cases:
            cma_common(rows, case)
            a, b = rows.get(f"{case}/ours-cmaes"), rows.get(f"{case}/pycma")
            gens = (a or {}).get("generations_compared", "-")
            dim, lam = case[3:].split("-l")
            decomposed = f"{b['decompositions']} of {b['generations']}" if b and "decompositions" in b else "-"
            eigh = fmt(b["eigh_s"]) if b and "eigh_s" in b else "-"
            lines.append(f"| {dim} / {lam} | {gens} | {cell(a, True)} | {cell(b)} | {decomposed} | {eigh} | "
                         f"{verdict(ratio(b, a), TARGETS['cmaes-cpu'])} | >= 10x |")
        lines.append("")
    batch = sorted(k for k in rows if k.startswith("c/"))
    if batch:
        one = next((rows[k] for k in batch if k.endswith("-runs1")), None)
        lines += [f"(c) CMA-ES per generation on {meta.get('device')}, D 10, lambda 10, float64: many runs "
                  "advancing together against one. Ratio: many / one.", "",
                  "| runs | per generation (path) | ratio to 1 run | target |", "|---|---|---|---|"]
        for k in sorted(batch, key=lambda k: int(k.rsplit("runs", 1)[1])):
            single = k.endswith("-runs1")
            lines.append(f"| {k.rsplit('runs', 1)[1]} | {cell(rows[k], True)} | "
                         f"{'-' if single else verdict(ratio(rows[k], one), TARGETS['cmaes-batch'])} | "
                         f"{'-' if single else '<= 2x'} |")
        lines.append("")
    return "\n".join(lines)


def write(out: Path, meta: dict, rows: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    md = markdown(rows, meta)  # (adds (b)'s common medians to the rows)
    tmp = out / "baselines.json.tmp"
    tmp.write_text(json.dumps({"meta": meta, "rows": list(rows.values())}, indent=1))
    tmp.replace(out / "baselines.json")
    (out / "baselines.md").write_text(md)


def metadata(opts: Options) -> dict:
    sys.path.insert(0, str(Path(__file__).parent))
    from provenance import provenance

    gpu = torch.cuda.get_device_name() if torch.cuda.is_available() else "none"
    return provenance(gpu=gpu, device=str(opts.device), cpu=f"{os.cpu_count()} logical cores",
                      cpu_threads_from=default_cpu_threads(), torch_threads=torch.get_num_threads(),
                      evox=_dist_version("evox"), cma=_dist_version("cma"),
                      numpy=np.__version__, quick=opts.quick, budget_s=opts.budget, repeats=opts.repeats,
                      timeout_s=opts.timeout, python=sys.version.split()[0],
                      notes={"de": "ours rand/1/bin F=0.5 CR=0.9 (distinct r1,r2,r3 != i; midpoint repair); EvoX DE "
                                   "rand/1 F=0.5 CR=0.9 (r's drawn with replacement; clamp)",
                             "lshade": f"ours N_init=pop, H=6, p=0.11, archive 2.6 N, max_evals={LSHADE_HORIZON} x pop "
                                       "(population >= 90% of N_init over 1,000 generations; tensors keep N_init rows)",
                             "shade": "EvoX SHADE defaults (memory of pop_size slots, p=0.05, no archive)",
                             "evox": "StdWorkflow(algorithm, evox.problems.numerical.Sphere()), no monitor, tensors "
                                     "made under `with torch.device(...)`; init_step() then step() in a loop",
                             "cmaes": "ours: tutorial CMA-ES, sigma0 = 0.3 x 200, float64; pycma: CMA_active=False, "
                                      "no bounds, same sigma0, x0 uniform in the box"})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--out", default=None, help="folder for baselines.json and baselines.md")
    ap.add_argument("--only", default=None, help="comma-separated keys: fnmatch patterns or prefixes (a, b/d10-l10)")
    ap.add_argument("--device", default=None, help="device of (a) and (c) (default cuda; (b) is always the CPU)")
    ap.add_argument("--quick", action="store_true", help="small sizes and short budgets: a smoke test")
    ap.add_argument("--budget", type=float, default=None, help="seconds of timed steps per measurement (3; quick 0.3)")
    ap.add_argument("--repeats", type=int, default=3, help="timed blocks per measurement (their median)")
    ap.add_argument("--gens", type=int, default=None, help="generations of (b) per side (300; quick 20)")
    ap.add_argument("--timeout", type=float, default=None, help="seconds a child measurement may take (240; quick 180)")
    ap.add_argument("--cpu-threads", type=int, default=None,
                    help="torch's (and the native kernels') CPU threads (default: heuriscale's, every core)")
    ap.add_argument("--no-isolate", action="store_true", help="run the compiling measurements in this process too")
    ap.add_argument("--list", action="store_true", help="print the selected keys and stop")
    ap.add_argument("--report", nargs="+", default=None, metavar="JSON",
                    help="only rebuild the tables from these files")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.report:
        rows, meta, sources = {}, {}, []
        for path in args.report:  # a key measured in several files: the last file's row
            data = json.loads(Path(path).read_text())
            meta = {**data["meta"], **meta}  # the first file's provenance; each file's below
            sources.append({"file": path, **{k: data["meta"].get(k) for k in ("date", "commit", "device", "gpu")},
                            "keys": [r["key"] for r in data["rows"]]})
            rows.update({r["key"]: r for r in data["rows"]})
        meta["merged_from"] = sources
        if args.out:
            write(Path(args.out), meta, rows)
        print(markdown(rows, meta))
        return

    if args.cpu_threads is not None:
        set_cpu_threads(args.cpu_threads)
    if args.repeats < 1 or (args.gens is not None and args.gens < 1) \
            or (args.budget is not None and not args.budget > 0):
        ap.error("--repeats and --gens must be >= 1 and --budget > 0")
    device = torch.device(args.device or "cuda")
    if device.type == "cuda" and not torch.cuda.is_available():
        ap.error("no CUDA device here: give --device cpu")
    opts = Options(device=device, budget=args.budget or (0.3 if args.quick else 3.0), repeats=args.repeats,
                   gens_b=args.gens or (20 if args.quick else 300),
                   timeout=args.timeout or (180 if args.quick else 240), quick=args.quick)
    # what a child needs to rebuild the same plan and options
    argv = [f"--device={device}", f"--budget={opts.budget}", f"--repeats={opts.repeats}", f"--gens={opts.gens_b}"] \
        + (["--quick"] if args.quick else []) \
        + ([f"--cpu-threads={args.cpu_threads}"] if args.cpu_threads is not None else [])
    measurements = plan(opts)
    if args.child:
        m = next(m for m in measurements if m.key == args.child)
        try:
            row = m.run(opts)
        except Exception as e:  # noqa: BLE001 - the parent records it
            row = {"error": f"{type(e).__name__}: {e}"[:2000], "traceback": traceback.format_exc().splitlines()[-12:]}
        print(json.dumps(row), flush=True)
        return
    patterns = None if args.only is None else [p.strip() for p in args.only.split(",") if p.strip()]
    chosen = [m for m in measurements if selected(m.key, patterns)]
    if args.list or not chosen:
        print("\n".join(m.key for m in chosen) or f"no key matches {args.only!r}; keys: "
              + ", ".join(m.key for m in measurements))
        return
    meta = metadata(opts)
    print(json.dumps(meta), flush=True)
    rows = {}
    for m in chosen:
        row = measure(m, opts, argv, isolate=not args.no_isolate)
        rows[m.key] = row
        what = row.get("error", "").splitlines()[0][:160] if "error" in row else (
            f"{fmt(row.get('per_gen_s'))}/gen" + (f" ({row['engine']})" if "engine" in row else "")
            + (f", setup {fmt(row['setup_s'])}" if "setup_s" in row else ""))
        print(f"{m.key:40s} {what}  [{row['wall_s']:.1f} s]", flush=True)
        if args.out:
            write(Path(args.out), meta, rows)  # after every measurement: a killed run keeps what it had
    print()
    print(markdown(rows, meta))


if __name__ == "__main__":
    main()
