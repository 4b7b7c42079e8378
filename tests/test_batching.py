"""Runs of one call do not interact. (That `runs = R` in one call is statistically
equivalent to R separate calls is checked for every algorithm in test_every_algorithm.py.)
"""

import torch

import heuriscale as hs

def test_runs_do_not_interact():
    """Changing one run's problem value landscape leaves another run's trajectory alone:
    each run's best depends only on its own population (checked via a per-run shift)."""

    class PerRunShift(hs.Problem):
        name = "per-run-shift"

        def __init__(self, shift):
            super().__init__(3, -5, 5)
            self.shift = torch.as_tensor(shift, dtype=torch.float64)

        def evaluate(self, x):
            return ((x - self.shift[:, None, None]) ** 2).sum(-1)

    a = hs.minimize(PerRunShift([0.0, 1.0]), hs.PSO(pop_size=10), iters=30, runs=2, seed=3, device="cpu", dtype="float64")
    b = hs.minimize(PerRunShift([0.0, 2.0]), hs.PSO(pop_size=10), iters=30, runs=2, seed=3, device="cpu", dtype="float64")
    assert torch.equal(a.best_f[0], b.best_f[0]) and not torch.equal(a.best_f[1], b.best_f[1])
