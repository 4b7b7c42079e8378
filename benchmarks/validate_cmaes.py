"""heuriscale's `cmaes` against pycma (`cma` on the package index) at equal budgets.

For each (function, D, lambda, budget): RUNS runs of each side, on the same problem code (our
torch function, float64, evaluated on the CPU), with the same start distribution: x0 uniform
in the box (a new one per run), sigma0 = 0.3 x (upper - lower), population lambda. A run
succeeds when its best f - f* <= 1e-8 within the budget; its evaluations to target are those
of the generation in which it first got there (both sides evaluate a whole generation at a
time). Reported: success rates, median evaluations to target of the successful runs,
the Mann-Whitney U two-sided p-value on those samples (scipy.stats.mannwhitneyu) and
Fisher's exact test on the success counts.

pycma is run with CMA_active=False (the tutorial's non-active (mu/mu_w, lambda) update that
`cmaes` implements; pycma's default is active CMA) and the box as its bounds, handled by its
default BoundaryHandler, BoundTransform (`--boundary penalty` takes its BoundPenalty, which our
bound handling follows, instead); by default (`--pycma table1`) with the tutorial's c_sigma and d_sigma set through pycma's
own overrides (pycma 4 computes them otherwise; `--pycma defaults` keeps its own);
everything else at its defaults (its termination criteria
included: a run it ends before the target is a failure; ours run to the budget).

    PYTHONPATH=src python3 benchmarks/validate_cmaes.py --runs 51 --out benchmarks/results/validate_cmaes
    PYTHONPATH=src python3 benchmarks/validate_cmaes.py --runs 5 --only sphere   # a quick look

`--ipop`: IPOP restarts on multimodal functions (IPOP_CASES): ours with preset `ipop`, pycma
restarted by this script the same way (a new uniform x0, the same sigma0, lambda doubled,
until the target or the budget, each restart given what is left of the budget as its
`maxfevals`); pycma ends each restart on its own termination criteria, ours on the
tutorial's (see algorithms/cmaes.py).

    PYTHONPATH=src python3 benchmarks/validate_cmaes.py --ipop --runs 25 --out benchmarks/results/validate_cmaes_ipop
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from scipy import stats

import heuriscale as hs
from provenance import provenance

TARGET = 1e-8
#: (function, D, lambda, evaluation budget per run)
CASES = [
    ("sphere", 10, 10, 10_000),
    ("elliptic", 10, 10, 20_000),
    ("rosenbrock", 10, 10, 30_000),
    ("rastrigin", 10, 100, 100_000),
    ("sphere", 20, 12, 20_000),
    ("rosenbrock", 20, 12, 80_000),
]
#: IPOP: multimodal functions whose global structure larger populations see (Auger & Hansen 2005)
IPOP_CASES = [
    ("rastrigin", 5, 8, 50_000),
    ("rastrigin", 10, 10, 200_000),
    ("griewank", 10, 10, 100_000),
]


def ours(problem, lam: int, budget: int, runs: int, seed: int, sigma0: float | None = None, ipop: bool = False):
    """Evaluations to target per run (-1: not reached) and best values, and the seconds taken."""
    t = time.perf_counter()
    algo = hs.CMAES(pop_size=lam, sigma0=sigma0, restarts=ipop, pop_increase=2 if ipop else 1)
    r = hs.minimize(problem, algo, evals=budget, runs=runs, seed=seed, device="cpu",
                    dtype="float64", target=(problem.optimum_f or 0.0) + TARGET,
                    engine="eager")
    return r.evals_to_target.numpy(), r.best_f.numpy(), time.perf_counter() - t


def pycma(problem, lam: int, budget: int, runs: int, seed: int, boundary: str = "transform", constants: str = "table1",
          sigma0: float | None = None, ipop: bool = False):
    import cma
    from cma import sigma_adaptation

    from heuriscale.algorithms.cmaes import table1

    # pycma 4's step-size constants are not the tutorial's Table 1 (its c_sigma is
    # (mu_eff + 2) / (n + mu_eff + 3), its d_sigma another formula): "table1" sets them to
    # Table 1's through pycma's own module-level overrides; "defaults" leaves pycma's.

    handler = {"transform": cma.BoundTransform, "penalty": cma.BoundPenalty}[boundary]

    lower, upper = problem.lower.double().numpy(), problem.upper.double().numpy()
    sigma0 = 0.3 * float((upper - lower).max()) if sigma0 is None else sigma0
    rng = np.random.default_rng(seed)
    hit, best = np.full(runs, -1), np.full(runs, np.inf)
    t = time.perf_counter()
    for run in range(runs):
        used, size = 0, lam
        while used < budget and hit[run] < 0:  # one start, or (IPOP) a start and its restarts
            x0 = lower + (upper - lower) * rng.random(problem.dim)
            P = table1(problem.dim, size)  # Table 1's step-size constants for this start's lambda
            sigma_adaptation._CSA_cs = P["c_sigma"] if constants == "table1" else None
            sigma_adaptation._CSA_damps = P["d_sigma"] if constants == "table1" else None
            es = cma.CMAEvolutionStrategy(x0, sigma0, {
                "popsize": size, "seed": int(rng.integers(1, 2**31 - 1)), "CMA_active": False,
                "bounds": [list(lower), list(upper)], "BoundaryHandler": handler,
                "maxfevals": budget - used, "verbose": -9})
            while not es.stop():
                X = es.ask()
                f = problem.evaluate(torch.from_numpy(np.asarray(X))).numpy()
                es.tell(X, f.tolist())
                best[run] = min(best[run], float(f.min()))
                if best[run] - (problem.optimum_f or 0.0) <= TARGET:
                    hit[run] = used + es.countevals  # the generation that reached it
                    break
            used += es.countevals
            if not ipop or es.countevals == 0:
                break
            size *= 2
    return hit, best, time.perf_counter() - t


def summary(hit: np.ndarray) -> dict:
    ok = hit[hit >= 0]
    return {"successes": int(ok.size), "median_evals": float(np.median(ok)) if ok.size else None,
            "evals_to_target": hit.tolist()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=51)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--boundary", choices=["transform", "penalty"], default="transform",
                    help="pycma's BoundaryHandler: BoundTransform (its default) or BoundPenalty")
    ap.add_argument("--pycma", choices=["table1", "defaults"], default="table1",
                    help="pycma's step-size constants c_sigma, d_sigma: the tutorial's Table 1 or pycma's own")
    ap.add_argument("--sigma0", type=float, default=None,
                    help="the initial step size of both sides (default: 0.3 x the box's side)")
    ap.add_argument("--only", default="", help="comma-separated function names")
    ap.add_argument("--ipop", action="store_true", help="IPOP restarts on both sides, on IPOP_CASES")
    ap.add_argument("--out", default="benchmarks/results/validate_cmaes", help="writes OUT.json and OUT.md")
    args = ap.parse_args()
    torch.set_num_threads(1)
    import cma

    rows = []
    for name, dim, lam, budget in IPOP_CASES if args.ipop else CASES:
        if args.only and name not in args.only.split(","):
            continue
        problem = hs.get_problem(name, dim=dim)
        a_hit, a_best, a_s = ours(problem, lam, budget, args.runs, args.seed, args.sigma0, args.ipop)
        b_hit, b_best, b_s = pycma(problem, lam, budget, args.runs, args.seed, args.boundary, args.pycma, args.sigma0,
                                   args.ipop)
        a_ok, b_ok = a_hit[a_hit >= 0], b_hit[b_hit >= 0]
        mw = stats.mannwhitneyu(a_ok, b_ok).pvalue if a_ok.size and b_ok.size else None
        fisher = stats.fisher_exact([[a_ok.size, args.runs - a_ok.size], [b_ok.size, args.runs - b_ok.size]]).pvalue
        row = {"function": name, "dim": dim, "lambda": lam, "budget": budget, "runs": args.runs,
               "ours": {**summary(a_hit), "seconds": a_s, "median_best": float(np.median(a_best))},
               "pycma": {**summary(b_hit), "seconds": b_s, "median_best": float(np.median(b_best))},
               "mannwhitney_p": mw, "fisher_p": float(fisher)}
        rows.append(row)
        print(f"{name} D={dim} lambda={lam}: ours {a_ok.size}/{args.runs} median {row['ours']['median_evals']}, "
              f"pycma {b_ok.size}/{args.runs} median {row['pycma']['median_evals']}, MW p={mw}, Fisher p={fisher:.3g}"
              f" ({a_s:.1f} s / {b_s:.1f} s)", flush=True)

    meta = provenance(cma=cma.__version__, pycma_boundary=args.boundary, pycma_constants=args.pycma, ipop=args.ipop,
                      sigma0=args.sigma0 or "0.3 x side", threads=1, target=TARGET, seed=args.seed)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))

    def med(v):
        return "-" if v is None else f"{v:,.0f}"

    lines = ["| function | D | lambda | budget | success ours | success pycma | median evals ours | "
             "median evals pycma | Mann-Whitney p | Fisher p |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        a, b = r["ours"], r["pycma"]
        mw = "-" if r["mannwhitney_p"] is None else f"{r['mannwhitney_p']:.3g}"
        lines.append(f"| {r['function']} | {r['dim']} | {r['lambda']} | {r['budget']:,} | {a['successes']}/{r['runs']} | "
                     f"{b['successes']}/{r['runs']} | {med(a['median_evals'])} | {med(b['median_evals'])} | {mw} | "
                     f"{r['fisher_p']:.3g} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(json.dumps(meta))


if __name__ == "__main__":
    main()
