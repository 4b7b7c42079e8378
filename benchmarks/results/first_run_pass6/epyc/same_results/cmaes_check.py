import json, sys, torch
import heuriscale as hs
from heuriscale.algorithms import CMAES
out = {}
cfgs = [
  ("rastrigin", dict(dim=30, iters=300), {}, "float32", 1),
  ("rastrigin", dict(dim=10, iters=400), {"restarts": True}, "float64", 3),
  ("sphere", dict(dim=5, iters=2000), {"restarts": True}, "float32", 4),
  ("rosenbrock", dict(dim=20, iters=300), {}, "float64", 2),
  ("cec2022-f1", dict(dim=10, iters=200), {"restarts": True}, "float64", 2),
]
for prob, kw, alg, dt, runs in cfgs:
    r = hs.minimize(prob, CMAES(**alg), engine="native", seed=3, device="cpu", dtype=dt, runs=runs, **kw)
    bf = r.best_f.tolist() if hasattr(r.best_f, "tolist") else r.best_f
    h = r.history_f
    hs_ = float(torch.as_tensor(h).double().sum()) if h is not None else None
    out[f"{prob}-{dt}-{runs}-{alg}"] = (bf, hs_, r.extra.get("engine"))
print(json.dumps(out, indent=1))
