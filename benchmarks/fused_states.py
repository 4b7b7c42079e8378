"""Fused PSO and PRS runs' full results, saved to compare two trees bit for bit.

    PYTHONPATH=src python3 benchmarks/fused_states.py save before.pt     # with one tree's src
    PYTHONPATH=src python3 benchmarks/fused_states.py save after.pt      # with the other's
    python3 benchmarks/fused_states.py compare before.pt after.pt

Each configuration runs `--steps` iterations with the fused engine (on CUDA, graphs of 16
steps: two replays and 8 single steps at the default 40), then keeps the state, best-so-far,
target iterations, counts, NaN counts and history rows. On CUDA the configurations span both
dtypes, 1 to 100 runs, runs of 16 to 3,125 blocks, objectives inline and evaluated between
launches, and a target; without CUDA (Triton's interpreter: slowly) the small ones only.
"""

from __future__ import annotations

import argparse

import torch

import heuriscale as hs

RASTRIGIN_512 = dict(dim=4, bounds=(-5.12, 5.12))
CONFIGS = [  # (algorithm, problem, runs, dtype, target)
    (lambda: hs.PSO(pop_size=40), lambda: hs.get_problem("sphere", dim=40), 3, "float32", None),
    (lambda: hs.PSO(pop_size=37), lambda: hs.get_problem("euclidean", dim=2), 2, "float64", 0.5),
    (lambda: hs.PSO(pop_size=37), lambda: hs.get_problem("rastrigin", dim=200), 2, "float32", 1e3),
    (lambda: hs.PSO(pop_size=300), lambda: hs.get_problem("ackley", dim=200), 1, "float32", None),
    (lambda: hs.PSO(pop_size=37), lambda: hs.get_problem("rosenbrock", dim=5), 2, "float32", None),
    (lambda: hs.PRS(pop_size=40, max_iters=20), lambda: hs.get_problem("rastrigin", dim=4), 3, "float32", 10.0),
    (lambda: hs.PRS(pop_size=37, max_iters=20), lambda: hs.get_problem("sphere", dim=200), 2, "float64", None),
    (lambda: hs.PRS(pop_size=300, max_iters=20), lambda: hs.get_problem("griewank", dim=200), 1, "float32", None),
    (lambda: hs.PRS(pop_size=37, max_iters=20), lambda: hs.get_problem("rosenbrock", dim=5), 2, "float64", None),
]
CUDA_CONFIGS = [  # paper 001's and 000's, 100 PRS runs, a million-coordinate PSO
    (lambda: hs.PSO(pop_size=65_536), lambda: hs.get_problem("euclidean", dim=2), 1, "float32", None),
    (lambda: hs.PRS(pop_size=1024, max_iters=12_000), lambda: hs.get_problem("rastrigin", **RASTRIGIN_512), 1,
     "float32", None),
    (lambda: hs.PRS(pop_size=1024, max_iters=12_000), lambda: hs.get_problem("rastrigin", **RASTRIGIN_512), 100,
     "float64", 1.0),
    (lambda: hs.PSO(pop_size=100_000), lambda: hs.get_problem("sphere", dim=30), 1, "float32", None),
]


def save(path: str, steps: int) -> None:
    cuda = torch.cuda.is_available()
    out = {}
    for k, (algorithm, problem, runs, dtype, target) in enumerate(CONFIGS + (CUDA_CONFIGS if cuda else [])):
        r = hs.Runner(problem(), algorithm(), runs=runs, seed=11, device="cuda" if cuda else "cpu", dtype=dtype,
                      engine="fused", target=target, **({"chunk": 16} if cuda else {}))
        r.step(steps)
        kept = {f"state.{name}": value.cpu() for name, value in vars(r.state).items()}
        kept.update(best_f=r.best_f.cpu(), best_x=r.best_x.cpu(), hit=r._hit_iter.cpu(), it=r._it.cpu(),
                    counter=r._kernels.counter.cpu(), history=r._history.values().cpu(), nan=r._guarded.nan_evals.cpu())
        out[k] = kept
        print(k, r.what, float(r.best_f.min()), flush=True)
    torch.save(out, path)


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.contiguous().view(-1).view(torch.uint8) if t.is_floating_point() else t


def compare(a_path: str, b_path: str) -> int:
    a, b = torch.load(a_path), torch.load(b_path)
    differences = [(k, name) for k in a for name in a[k]
                   if a[k][name].shape != b[k][name].shape or not torch.equal(_bits(a[k][name]), _bits(b[k][name]))]
    for k, name in differences:
        print(f"configuration {k}: {name} differs")
    print(f"{len(a)} configurations, {len(differences)} differences")
    return 1 if differences or a.keys() != b.keys() else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    s = sub.add_parser("save")
    s.add_argument("path")
    s.add_argument("--steps", type=int, default=40)
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    args = ap.parse_args()
    if args.command == "save":
        save(args.path, args.steps)
    else:
        raise SystemExit(compare(args.a, args.b))


if __name__ == "__main__":
    main()
