"""Seconds per iteration with a user's own objective (issue 26): PSO (library defaults) on the
sphere, written by the user in each way heuriscale takes one, next to the plain NumPy PSO
loop, pyswarms and mealpy 3 with the same NumPy function.

    PYTHONPATH=src python3 benchmarks/user_objectives.py --out objectives.json --markdown objectives.md
    PYTHONPATH=src python3 benchmarks/user_objectives.py --quick          # 32 x 2 only
    PYTHONPATH=src python3 benchmarks/user_objectives.py --ratios 15 --target 0.2 --out r.json  # callbacks / loop

Sizes: pop 32 x D 2, 1,024 x D 30, 65,536 x D 2. Objectives:

- built-in: `hs.get_problem("sphere", dim=D)` (computed inside the kernels);
- Numba: `hs.NumbaFunction(fn)`, `fn` a `numba.njit` sphere of one point (inside the native
  CPU kernels, through a function pointer);
- Triton (CUDA): `hs.TritonFunction(fn)`, `fn` a `@triton.jit` sphere of a block of points
  (inside the fused kernels);
- torch: `hs.TorchFunction(lambda x: (x * x).sum(-1))`;
- NumPy: `hs.NumpyFunction(lambda X: (X * X).sum(1))`;
- scalar: `hs.ScalarFunction(lambda x: float((x * x).sum()))` (one Python call per point).

CPU: the native engine on 1 thread and on all cores (Numba and torch threads). CUDA (when
present): the fused engine (replayed from CUDA graphs where the objective runs on the
device; launched around each evaluation for host objectives) and, for host objectives,
eager. The timing method is benchmarks/cpu.py's (`best_per_iteration`: a warm-up that
estimates one iteration, then REPEATS batches of about TARGET_S seconds, the best kept);
on CUDA each batch ends with a device synchronisation. The baselines need
benchmarks/requirements-cpu.txt (a missing one leaves its column empty and says why).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cpu  # noqa: E402 - benchmarks/cpu.py: the timing method, machine facts and the baselines
from cpu import Row, Unavailable, best_per_iteration, one_line, set_threads  # noqa: E402

import heuriscale as hs  # noqa: E402

SIZES = [(32, 2), (1024, 30), (65_536, 2)]
OBJECTIVES = ("built-in", "Numba", "Triton", "torch", "NumPy", "scalar")


def numpy_sphere(X):
    return (X * X).sum(1)


def torch_sphere(x):
    return (x * x).sum(-1)


def scalar_sphere(x):
    return float((x * x).sum())


def _numba_sphere():
    import numba

    @numba.njit
    def sphere(x):  # in float64, as the built-in one computes (float32 squares of tiny numbers are subnormal)
        s = 0.0
        for i in range(x.shape[0]):
            v = np.float64(x[i])
            s += v * v
        return s

    return sphere


def _triton_sphere():
    import triton
    import triton.language as tl

    @triton.jit
    def sphere(x, mask):
        return tl.sum(x * x, 1)

    return sphere


def problem(objective: str, dim: int) -> hs.Problem:
    box = dict(dim=dim, lower=-100.0, upper=100.0)
    if objective == "built-in":
        return hs.get_problem("sphere", dim=dim)
    if objective == "Numba":
        return hs.NumbaFunction(_numba_sphere(), **box)
    if objective == "Triton":
        return hs.TritonFunction(_triton_sphere(), **box)
    if objective == "torch":
        return hs.TorchFunction(torch_sphere, **box)
    if objective == "NumPy":
        return hs.NumpyFunction(numpy_sphere, **box)
    return hs.ScalarFunction(scalar_sphere, **box)


def time_runner(objective: str, pop: int, dim: int, device: str, engine: str, target_s: float) -> dict:
    try:
        runner = hs.Runner(problem(objective, dim), hs.PSO(pop_size=pop), device=device, engine=engine, seed=0)
    except (ImportError, ValueError) as error:
        raise Unavailable(one_line(error)) from None
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)

    def run(n: int) -> None:
        runner.step(n)
        sync()

    with torch.no_grad():
        started = time.perf_counter()
        run(runner.chunk)  # builds the kernels and captures the graph (setup, not steps)
        setup = time.perf_counter() - started
        timing = best_per_iteration(run, target_s, 20_000)
    timing.setup = setup
    return {**timing.as_json(), "engine": runner._engine_used()}


def baseline_row(pop: int, dim: int) -> Row:
    return Row(f"pso-{pop}x{dim}", "user objectives", "pso", f"PSO sphere, pop {pop:,} x D {dim}",
               lambda: hs.get_problem("sphere", dim=dim), lambda n: hs.PSO(pop_size=n), pop, dim, "sphere")


def measure(pop: int, dim: int, threads_all: int, target_s: float, cuda: bool) -> dict:
    results: dict[str, dict] = {}

    def attempt(column: str, fn) -> None:
        try:
            results[column] = fn()
        except Unavailable as why:
            results[column] = {"unavailable": str(why)}
        except Exception as error:  # noqa: BLE001 - a failed column is reported, the others still run
            results[column] = {"error": one_line(error)}
        print(f"  {column}: {summary(results[column])}", flush=True)

    print(f"pop {pop:,} x D {dim}", flush=True)
    for threads in (1, threads_all):
        set_threads(threads)
        for objective in OBJECTIVES:
            if objective == "Triton":
                continue  # CUDA only (on a CPU, only Triton's interpreter runs it)
            if objective == "scalar" and pop * dim > 2 * 10**5 and threads > 1:
                continue  # one Python call per point: threads change nothing
            attempt(f"cpu {threads}T {objective}",
                    lambda: time_runner(objective, pop, dim, "cpu", "native", target_s))
    set_threads(1)
    row = baseline_row(pop, dim)
    attempt("NumPy loop", lambda: cpu.time_numpy_pso(row, target_s).as_json())
    with tempfile.TemporaryDirectory() as scratch, contextlib.chdir(scratch):  # pyswarms' import writes report.log
        attempt("pyswarms", lambda: cpu.time_pyswarms(row, target_s).as_json())
    attempt("mealpy", lambda: cpu.time_mealpy(row, target_s).as_json())
    set_threads(threads_all)
    if cuda:
        for objective in OBJECTIVES:
            attempt(f"cuda fused {objective}", lambda: time_runner(objective, pop, dim, "cuda", "fused", target_s))
            if objective in ("Numba", "NumPy", "scalar"):
                attempt(f"cuda eager {objective}", lambda: time_runner(objective, pop, dim, "cuda", "eager", target_s))
    return results


def summary(result: dict) -> str:
    if "per_iter_s" in result:
        return f"{cpu.fmt_time(result['per_iter_s'])}" + (f" ({result['engine']})" if "engine" in result else "")
    return result.get("unavailable") or result.get("error", "")


def markdown(report: dict) -> str:
    m = report["machine"]
    sizes = [f"{r['pop']:,} x {r['dim']}" for r in report["rows"]]
    columns = sorted({c for r in report["rows"] for c in r["results"]}, key=_column_order)
    lines = [f"- Machine: {m['cpu']}, {m['usable_cores']} usable cores; GPU: {report['gpu'] or 'none'}; Python "
             f"{m['python']}, torch {m['torch']}, Numba {m['numba']}, NumPy {m['numpy']}, pyswarms {m['pyswarms'] or '-'}, "
             f"mealpy {m['mealpy'] or '-'}.",
             f"- Date: {m['date']}. Code: commit `{m['commit'] or 'unknown'}`. Command: `{report['command']}`.",
             "- Seconds per iteration (best batch); `1T` / `{0}T`: one thread / all cores.".format(report["threads_all"]),
             "", "| objective, engine | " + " | ".join(sizes) + " |", "|---|" + "---|" * len(sizes)]
    for column in columns:
        cells = [summary(r["results"].get(column, {})) for r in report["rows"]]
        lines.append(f"| {column} | " + " | ".join(cells) + " |")
    lines += ["", "| ratio to the NumPy loop (1 thread) | " + " | ".join(sizes) + " |", "|---|" + "---|" * len(sizes)]
    for column in [c for c in columns if c.startswith("cpu 1T")]:
        cells = []
        for r in report["rows"]:
            mine, loop = r["results"].get(column, {}), r["results"].get("NumPy loop", {})
            cells.append(f"{mine['per_iter_s'] / loop['per_iter_s']:.2f}x" if "per_iter_s" in mine
                         and "per_iter_s" in loop else "")
        lines.append(f"| {column} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _column_order(column: str) -> tuple:
    kind = next((i for i, k in enumerate(("cpu 1T", "cpu", "NumPy loop", "pyswarms", "mealpy", "cuda fused", "cuda eager"))
                 if column.startswith(k)), 9)
    objective = next((i for i, o in enumerate(OBJECTIVES) if column.endswith(o)), 9)
    return kind, objective, column


def interleaved_ratios(rounds: int, target_s: float) -> dict:
    """The NumPy loop, the NumPy callback and the torch callback at 32 x 2 on one thread, each
    timed once per round in that order, `rounds` times: on a shared machine the load changes
    between two measurements, and taking each one's best over interleaved rounds compares them
    under the same conditions. Returns every sample and the ratios of the best ones."""
    set_threads(1)
    row, samples = baseline_row(32, 2), {"NumPy loop": [], "NumPy": [], "torch": []}
    for _ in range(rounds):
        samples["NumPy loop"].append(cpu.time_numpy_pso(row, target_s).as_json()["per_iter_s"])
        for objective in ("NumPy", "torch"):
            samples[objective].append(time_runner(objective, 32, 2, "cpu", "native", target_s)["per_iter_s"])
    best = {k: min(v) for k, v in samples.items()}
    return {"samples_s": samples, "best_s": best,
            "ratios": {k: best[k] / best["NumPy loop"] for k in ("NumPy", "torch")}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    parser.add_argument("--markdown", type=Path, help="write the tables as Markdown here")
    parser.add_argument("--quick", action="store_true", help="pop 32 x D 2 only")
    parser.add_argument("--target", type=float, default=0.3, help="seconds per timed batch")
    parser.add_argument("--no-cuda", action="store_true")
    parser.add_argument("--ratios", type=int, metavar="ROUNDS", help="only the NumPy and torch callbacks against "
                        "the NumPy loop at 32 x 2, one thread, in ROUNDS interleaved rounds (best of each)")
    args = parser.parse_args()
    if args.ratios:
        report = {"machine": cpu.machine(), "command": " ".join(["python3", *sys.argv]),
                  **interleaved_ratios(args.ratios, args.target)}
        print(json.dumps({k: report[k] for k in ("best_s", "ratios")}, indent=1))
        if args.out:
            args.out.write_text(json.dumps(report, indent=1))
        return
    threads_all = len(__import__("os").sched_getaffinity(0))
    cuda = torch.cuda.is_available() and not args.no_cuda
    report = {"machine": cpu.machine(), "gpu": torch.cuda.get_device_name() if cuda else None,
              "threads_all": threads_all, "command": " ".join(["python3", *sys.argv]), "rows": []}
    started = time.perf_counter()
    for pop, dim in SIZES[:1] if args.quick else SIZES:
        report["rows"].append({"pop": pop, "dim": dim, "results": measure(pop, dim, threads_all, args.target, cuda)})
    report["wall_s"] = time.perf_counter() - started
    text = markdown(report)
    print(text)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1, default=lambda v: None if isinstance(v, float) and
                                       math.isnan(v) else str(v)))
    if args.markdown:
        args.markdown.write_text(text)


if __name__ == "__main__":
    main()
