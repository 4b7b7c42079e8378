import json, sys, torch
import heuriscale as hs
from heuriscale.engine import set_cpu_threads
from heuriscale.algorithms.registry import get_algorithm
set_cpu_threads(int(sys.argv[1]))
out = {}
cfgs = [
  ("prs", "rastrigin", 30, 100, 300, "float32", 1),
  ("prs", "rastrigin", 30, 1024, 60, "float32", 1),
  ("prs", "sphere", 2, 32, 500, "float64", 3),
  ("prs", "cec2022-f1", 10, 300, 50, "float64", 2),
  ("prs", "rosenbrock", 8, 2000, 30, "float32", 2),
  ("firefly", "rastrigin", 30, 100, 50, "float32", 1),
  ("firefly", "sphere", 32, 1024, 3, "float32", 1),
  ("firefly", "sphere", 2, 32, 200, "float64", 3),
  ("firefly", "cec2022-f1", 10, 600, 5, "float64", 2),
  ("firefly", "rastrigin", 5, 300, 20, "float64", 4),
]
for alg, prob, dim, pop, iters, dt, runs in cfgs:
    r = hs.minimize(prob, get_algorithm(alg, pop_size=pop), dim=dim, iters=iters, engine="native", seed=3, device="cpu", dtype=dt, runs=runs)
    out[f"{alg}-{prob}-{dim}-{pop}-{dt}-{runs}"] = (r.best_f.tolist(), float(torch.as_tensor(r.history_f).double().sum()), r.extra.get("engine"))
print(json.dumps(out, indent=0))
