"""CMA-ES, the (mu/mu_w, lambda) Evolution Strategy with Covariance Matrix Adaptation
(Hansen's tutorial), with restarts as an option.

N. Hansen, "The CMA Evolution Strategy: A Tutorial", arXiv:1604.00772 (2016, revised 2023).
Restarts: A. Auger and N. Hansen, "A Restart CMA Evolution Strategy With Increasing
Population Size", IEEE CEC 2005 (IPOP-CMA-ES: each restart doubles lambda).

The search distribution of each run is N(m, sigma^2 C). A generation (the tutorial's
summary, equations numbered as there):

    z_k = N(0, I),  y_k = B D z_k,  x_k = m + sigma y_k,   k = 1..lambda   (38)-(40) sample,
                                                                  C = B D^2 B^T
    <y>_w = sum_{i<=mu} w_i y_{i:lambda}                           (41) recombination
    m   <- m + c_m sigma <y>_w                                     (42) (c_m = 1)
    p_s <- (1 - c_s) p_s + sqrt(c_s (2 - c_s) mu_eff) C^-1/2 <y>_w  (43) (C^-1/2 <y>_w = B <z>_w)
    sigma <- sigma exp(c_s / d_s (|p_s| / E|N(0,I)| - 1))          (44) cumulative step-size adaptation
    p_c <- (1 - c_c) p_c + h_s sqrt(c_c (2 - c_c) mu_eff) <y>_w    (45)
    C   <- (1 + c_1 delta(h_s) - c_1 - c_mu sum w_j) C
           + c_1 p_c p_c^T + c_mu sum_{i<=mu} w_i y_{i:lambda} y_{i:lambda}^T   (47) rank-one + rank-mu

where i:lambda is the i-th best of the lambda points, the h_sigma stall is
h_s = 1 if |p_s| / sqrt(1 - (1 - c_s)^(2(g+1))) < (1.4 + 2/(n+1)) E|N(0,I)|, else 0 (g counts
the generations before this one), delta(h_s) = (1 - h_s) c_c (2 - c_c), and
E|N(0,I)| = sqrt(n) (1 - 1/(4n) + 1/(21 n^2)). (46), the active weights w_i°, is the
identity here: every weight is >= 0 (this is the tutorial's non-active CMA-ES).

Defaults, Table 1 (n = dimension): lambda = 4 + floor(3 ln n) (48), mu = floor(lambda/2),
w'_i = ln((lambda + 1)/2) - ln i (49), w_i = w'_i / sum_{j<=mu} w'_j for i <= mu and 0 after
(53), mu_eff = (sum w'_i)^2 / sum w'_i^2 over i <= mu, c_m = 1 (54),
c_s = (mu_eff + 2) / (n + mu_eff + 5), d_s = 1 + 2 max(0, sqrt((mu_eff - 1)/(n + 1)) - 1) + c_s (55),
c_c = (4 + mu_eff/n) / (n + 4 + 2 mu_eff/n) (56), c_1 = 2 / ((n + 1.3)^2 + mu_eff) (57),
c_mu = min(1 - c_1, 2 (1/4 + mu_eff + 1/mu_eff - 2) / ((n + 2)^2 + mu_eff)) (58) (alpha_cov = 2).
`table1(n, lambda)` computes them all.

Choices:
- lambda is `pop_size`; left None (the default), a run takes Table 1's 4 + floor(3 ln n) (48)
  for its problem's dimension n (`default_pop`; `CMAES.default_lambda(n)` gives it up front).
- c_mu: the revised tutorial's (58) with its "1/4 +" in the numerator, as pycma computes it
  (`rankmu_offset = 0.25`); the 2016 text has alpha_cov (mu_eff - 2 + 1/mu_eff) (e.g.
  CyberAgentAILab/cmaes), a rate about 20 % lower at n = 10.
- Start: the tutorial leaves m and sigma to the user (pycma asks for x0 and sigma0). Here m
  is uniform in the box, and sigma0 = 0.3 x (upper - lower): sigma = 0.3 x the widest side
  and C = diag((side_i / widest side)^2), so each coordinate starts with a standard
  deviation of 0.3 x its side (C = I on a box with equal sides, as the tutorial starts;
  pycma's `CMA_stds` does the same). `sigma0=...` gives sigma in the problem's units with C = I
  (pycma's convention).
- The first generation is drawn from that start by `ask_init` and the first update is made
  by `tell_init`: every iteration, the initial one included, evaluates lambda points.
- Eigendecomposition: C = B D^2 B^T by one batched `torch.linalg.eigh` over the runs at the
  start of every step, on the device. The tutorial's lazy update, every 1/(10 n (c_1 + c_mu))
  generations, is every generation at Table 1's lambda up to n = 50 (0.26 generations at n = 10,
  0.67 at n = 50, 1.14 at n = 100; 0.20 at n = 100 with lambda = 100, where pycma too decomposes
  C in every generation) and would need the host to decide when (a step is pure tensor code
  with no branch on a value). Eigenvalues are floored at the dtype's `tiny`, and C is
  symmetrised after each update.
- Bounds: the points evaluated are the samples projected onto the box (clipped); the
  unclipped samples drive the update (41)-(47), ranked by f(clipped) + gamma |x - clipped|^2.
  That is pycma's `BoundPenalty` (its penalty sum_i w_i (x_i - xfeas_i)^2 with the initial
  weight w_i = 2 IQR(f) / mean_i(sigma^2 C_ii)), here with that weight recomputed from each
  generation's interquartile range rather than adapted over a history. Inside the box the
  penalty is 0 and the algorithm is exactly the tutorial's.
- `restarts=True`: each run restarts on its own, within the same tensors, when one of the
  tutorial's termination criteria (its Appendix B.3; IPOP's) holds at the end of one of its
  generations: TolFun (the best values of the last 10 + ceil(30 n / lambda) generations and all
  values of this one within 1e-12), TolX (sigma sqrt(C_ii) and sigma p_c,i all below 1e-12
  sigma0), TolXUp (sigma sqrt(max C_ii) above 1e4 sigma0), ConditionCov (cond(C) > 1e14),
  NoEffectAxis, NoEffectCoord, or a non-finite sigma, m or C. A restart draws a new uniform
  mean and resets sigma, C, the paths and the counters; not done: the Stagnation and
  EqualFunValues criteria. `restarted` counts the restarts of each run. By itself it restarts
  at the same lambda (`pop_increase=1`).
- IPOP (preset `ipop`: `restarts=True, pop_increase=2`): each restart multiplies the run's
  lambda by `pop_increase` (Auger & Hansen's 2), up to `max_pop`; Table 1 (the tutorial's mu,
  weights, rates and TolFun's history length, not the CEC 2005 paper's constants) follows the
  run's lambda. The engine's steps evaluate the same number of points in every run, so a step
  evaluates lambda0 = `pop_size` points of each run, and a run at lambda = lambda0 x
  pop_increase^k gathers its generation over pop_increase^k steps (its distribution does not
  change within a generation, so the samples are those of one generation of lambda drawn in
  parts, and C is decomposed again at each of them); at the step that completes it, (41)-(47)
  and the termination criteria run over all lambda points, the penalty's gamma from their
  interquartile range. Evaluations are counted as the paper counts them, lambda per
  generation; a budget may end inside a generation, whose points count (they were evaluated)
  and update nothing. The cost: every step writes, ranks and weighs the generation buffers of
  the largest lambda for every run, whatever its own lambda, so `max_pop` (a ceiling: the
  largest lambda is the largest lambda0 x pop_increase^k under it) left None is kept small:
  with a budget (`evals`, or `iters` steps of lambda0 points) the budget / IPOP_GENERATIONS
  (100: a lambda the budget holds 100 generations of; our choice, a larger one could hardly
  converge within it), at most lambda0 x pop_increase^9; without one (a bare `Runner`)
  lambda0 x pop_increase^9. A budget too small for one increase leaves the run without IPOP
  (`ipop` is False; it restarts at lambda0). Without IPOP the buffers are empty.
- Islands: migrants carry x and f only (`individual_fields`) and replace the worst points
  of the last generation, which the next generation, drawn from (m, sigma, C), does not
  use: islands of CMA-ES run independently.

This file is the algorithm's whole specification: eager on CUDA (`torch.linalg.eigh`
synchronises with the host, so a CUDA graph cannot capture the step: `uncapturable`, and
engine="graph" / "compiled" say so); on the CPU a native kernel computes the same generations
(engine/kernels/cmaes/cpu.py, tested against this step with the same random numbers), restarts
at one lambda included; IPOP runs this step on the CPU too (`auto` picks it).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass

import torch

from ..problems.base import Problem, is_integer
from .base import Algorithm, Kernels, Proposal, State, check_positive, uniform
from .registry import register_algorithm

TOL_FUN = 1e-12  # Appendix B.3's TolFun
TOL_X = 1e-12  # TolX, times sigma0
TOL_X_UP = 1e4  # TolXUp, times sigma0
TOL_CONDITION = 1e14  # ConditionCov
IPOP_GENERATIONS = 100  # the generations of its largest population a budget holds (our choice)


def table1(n: int, lam: int) -> dict:
    """Table 1's strategy parameters for dimension n and population lambda (floats, and the
    weights as a list of mu numbers that sum to 1)."""
    mu = lam // 2
    w_prime = [math.log((lam + 1) / 2) - math.log(i) for i in range(1, mu + 1)]  # (49)
    mu_eff = sum(w_prime) ** 2 / sum(w * w for w in w_prime)
    weights = [w / sum(w_prime) for w in w_prime]  # (53), positive part
    c_sigma = (mu_eff + 2) / (n + mu_eff + 5)  # (55)
    d_sigma = 1 + 2 * max(0.0, math.sqrt((mu_eff - 1) / (n + 1)) - 1) + c_sigma
    c_c = (4 + mu_eff / n) / (n + 4 + 2 * mu_eff / n)  # (56)
    alpha_cov = 2.0
    c_1 = alpha_cov / ((n + 1.3) ** 2 + mu_eff)  # (57)
    c_mu = min(1 - c_1, alpha_cov * (0.25 + mu_eff + 1 / mu_eff - 2) / ((n + 2) ** 2 + alpha_cov * mu_eff / 2))  # (58)
    chi_n = math.sqrt(n) * (1 - 1 / (4 * n) + 1 / (21 * n * n))  # E|N(0, I)|
    return dict(mu=mu, weights=weights, mu_eff=mu_eff, c_m=1.0, c_sigma=c_sigma, d_sigma=d_sigma, c_c=c_c,
                c_1=c_1, c_mu=c_mu, chi_n=chi_n)


@dataclass
class CMAESState(State):
    mean: torch.Tensor  # (runs, n) m
    sigma: torch.Tensor  # (runs,) step size
    C: torch.Tensor  # (runs, n, n) covariance matrix
    p_sigma: torch.Tensor  # (runs, n) conjugate evolution path
    p_c: torch.Tensor  # (runs, n) evolution path
    g: torch.Tensor  # (runs,) generations since the run's (re)start, int64
    best_hist: torch.Tensor  # (runs, 10 + ceil(30 n / lambda0)) best values of recent generations (TolFun;
    #                          a larger lambda reads its last 10 + ceil(30 n / lambda), a circular buffer)
    restarted: torch.Tensor  # (runs,) restarts so far, int64
    # IPOP (restarts with a growing population; empty or zero otherwise): the generation being
    # gathered, one step's lambda0 points at a time (see `CMAES.tell`)
    level: torch.Tensor  # (runs,) k: the run's lambda is lambda0 x pop_increase^k, int64
    filled: torch.Tensor  # (runs,) points of this generation evaluated so far, int64
    z_gen: torch.Tensor  # (runs, L, n) this generation's z_k so far, L = populations()[-1] (0 without IPOP)
    y_gen: torch.Tensor  # (runs, L, n) and y_k
    f_gen: torch.Tensor  # (runs, L) and f(x_k)
    out_gen: torch.Tensor  # (runs, L) and |x_k - clipped x_k|^2


@functools.lru_cache(maxsize=64)
def _level_table(n: int, lambdas: tuple[int, ...], dtype: torch.dtype, device: torch.device):
    """Table 1 for each population in `lambdas`, as tensors of the run's dtype on its device
    (made once: a step gathers each run's row). Columns: the rates combined as (43)-(47) use
    them, each computed in float64 first, as Python computes a scalar operand; the weights
    (53) as rows padded with zeros to the largest mu, made as `tell` always made them."""
    rows, weights = [], []
    mu_max = max(lambdas) // 2
    for lam in lambdas:
        P = table1(n, lam)
        c_s, c_c = P["c_sigma"], P["c_c"]
        rows.append([1 - c_s, math.sqrt(c_s * (2 - c_s) * P["mu_eff"]), c_s / P["d_sigma"], 1 - c_c,
                     math.sqrt(c_c * (2 - c_c) * P["mu_eff"]), c_c, 2 - c_c, P["c_1"], P["c_mu"]])
        w = math.log((lam + 1) / 2) - torch.log(torch.arange(1, P["mu"] + 1, dtype=dtype, device=device))  # (49)
        weights.append(torch.nn.functional.pad(w / w.sum(), (0, mu_max - P["mu"])))  # (53)
    sizes = [[lam, (lam + 1) // 4, min(3 * (lam + 1) // 4, lam - 1), 10 + math.ceil(30 * n / lam)] for lam in lambdas]
    return (torch.tensor(rows, dtype=dtype, device=device), torch.stack(weights),
            torch.tensor(sizes, dtype=torch.int64, device=device))


@register_algorithm
@dataclass(kw_only=True)
class CMAES(Algorithm):
    """CMA-ES (mu/mu_w, lambda) with rank-one and rank-mu updates and cumulative step-size
    adaptation; lambda = `pop_size`, `sigma0` the initial step size (default 0.3 x the box),
    `restarts` to restart each run on the tutorial's termination criteria, its population
    multiplied by `pop_increase` at each restart (IPOP; 1: the same population) up to `max_pop`."""

    pop_size: int | None = None  # None: Table 1's lambda for the problem's dimension (48)
    sigma0: float | None = None
    restarts: bool = False
    pop_increase: int = 1  # IPOP's factor at each restart: 2 (Auger & Hansen 2005; preset "ipop")
    max_pop: int | None = None  # IPOP's ceiling on lambda; None: from the budget (see Choices)

    name = "cmaes"
    paper = "Hansen, The CMA Evolution Strategy: A Tutorial, arXiv:1604.00772 (2016)"
    min_pop = 2  # mu = floor(lambda / 2) >= 1
    state_type = CMAESState
    uncapturable = "torch.linalg.eigh synchronises with the host"  # so: eager on CUDA
    kernels = Kernels(cpu=True, folder="cmaes")  # engine/kernels/cmaes/ (subclasses too; no fused CUDA kernels: eigh syncs)
    presets = {"ipop": {"restarts": True, "pop_increase": 2}}  # IPOP-CMA-ES (Auger & Hansen 2005)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.sigma0 is not None:
            check_positive(self.name, sigma0=self.sigma0)
        if not isinstance(self.restarts, bool):
            raise ValueError(f"cmaes: restarts must be True or False, got {self.restarts!r}")
        if not is_integer(self.pop_increase) or self.pop_increase < 1:
            raise ValueError(f"cmaes: pop_increase must be an integer >= 1 (IPOP's 2; 1, the default, restarts "
                             f"at the same population), got {self.pop_increase!r}")
        if self.max_pop is not None and (not is_integer(self.max_pop) or self.max_pop < 2
                                         or (self.pop_size is not None and self.max_pop < self.pop_size)):
            raise ValueError(f"cmaes: max_pop must be an integer >= pop_size ({self.pop_size}), got {self.max_pop!r}")

    @staticmethod
    def default_lambda(n: int) -> int:
        """Table 1's population for dimension n: 4 + floor(3 ln n) (48)."""
        return 4 + math.floor(3 * math.log(n))

    def default_pop(self, dim: int) -> int:
        return self.default_lambda(max(dim, 1))

    def check_problem(self, problem: Problem) -> None:
        """sigma0 = 0.3 x the widest side (the start below): a box of width 0 in every coordinate
        leaves no step size to adapt (C would be 0 / 0)."""
        if self.sigma0 is None and float((problem.upper - problem.lower).max()) == 0.0:
            raise ValueError(f"cmaes: problem {problem.name!r} has a box of width 0 (lower == upper in every "
                             "coordinate), so there is nothing to search and no step size to start from: widen its "
                             "bounds, or give sigma0")

    def for_run(self, dim: int, evals: int | None) -> CMAES:
        """Also IPOP's largest population, left None: see `with_budget`."""
        algo = super().for_run(dim, evals)
        return algo.with_budget(evals) if evals is not None else algo

    def with_horizon(self, steps: float) -> CMAES:
        """Also IPOP's largest population, left None, for a run of `steps` steps of lambda0 points."""
        algo = super().with_horizon(steps)
        if self.pop_size is None or not math.isfinite(steps):
            return algo
        return algo.with_budget(self.pop_size * (int(steps) + 1))

    def with_budget(self, evals: int) -> CMAES:
        """`max_pop` left None set for a budget of `evals` evaluations per run: lambda0 x
        pop_increase^9 at most, and a lambda of which it holds IPOP_GENERATIONS generations."""
        if not (self.restarts and self.pop_increase > 1 and self.max_pop is None and self.pop_size is not None):
            return self
        cap = min(evals // IPOP_GENERATIONS, self.pop_size * self.pop_increase ** 9)
        return dataclasses.replace(self, max_pop=max(cap, self.pop_size))

    @property
    def ipop(self) -> bool:
        """True when restarts grow the population (IPOP): `pop_increase` > 1 and room for it."""
        if not self.restarts or self.pop_increase == 1:
            return False
        return self.pop_size is None or self.max_pop is None or self.max_pop >= self.pop_size * self.pop_increase

    def populations(self) -> tuple[int, ...]:
        """The lambdas a run goes through: lambda0 (`pop_size`), and with IPOP lambda0 x
        pop_increase^k up to `max_pop` (a ceiling; None: k = 9)."""
        lambdas = [self.pop_size]
        largest = self.pop_size * self.pop_increase ** 9 if self.max_pop is None else self.max_pop
        while self.ipop and lambdas[-1] * self.pop_increase <= largest:
            lambdas.append(lambdas[-1] * self.pop_increase)
        return tuple(lambdas)

    def memory_bytes(self, runs: int, dim: int, itemsize: int) -> int:
        # x, y, z and their clipped / ranked copies, plus C, B and the rank-mu sum per run; IPOP's generation
        gathered = runs * self.populations()[-1] * (2 * dim + 2) if self.ipop else 0
        return (8 * runs * self.pop_size * (dim + 2) + 6 * runs * dim * dim + gathered) * itemsize

    def individual_fields(self, state: State) -> list[str]:
        return ["x", "f"]  # m, sigma, C, the paths are the run's, not an individual's

    # -- the start of a run: m uniform in the box, sigma0, C0 ---------------------------------
    def _start(self, problem: Problem, runs: int):
        """sigma0 (runs,) and C0 (runs, n, n) of a (re)start (the mean is drawn apart)."""
        span = problem.upper - problem.lower
        if self.sigma0 is None:
            widest = span.max()
            sigma = (0.3 * widest).expand(runs)
            C = torch.diag_embed((span / widest) ** 2).expand(runs, -1, -1)
        else:
            sigma = torch.full((runs,), self.sigma0, dtype=span.dtype, device=span.device)
            C = torch.eye(span.shape[-1], dtype=span.dtype, device=span.device).expand(runs, -1, -1)
        return sigma, C

    def _fresh(self, problem: Problem, mean: torch.Tensor) -> CMAESState:
        """The state of runs starting at `mean` (runs, n): sigma0, C0, zero paths and counters."""
        runs, n = mean.shape
        sigma, C = self._start(problem, runs)
        zeros = torch.zeros_like(mean)
        counter = torch.zeros(runs, dtype=torch.int64, device=mean.device)
        gathered = self.populations()[-1] if self.ipop else 0  # no generation to gather without IPOP
        return CMAESState(
            x=mean[:, None], f=torch.zeros(runs, 1, dtype=mean.dtype, device=mean.device), mean=mean,
            sigma=sigma.clone(), C=C.clone(), p_sigma=zeros, p_c=zeros.clone(), g=counter,
            best_hist=torch.full((runs, 10 + math.ceil(30 * n / self.pop_size)), math.inf, dtype=mean.dtype,
                                 device=mean.device),
            restarted=counter.clone(), level=counter.clone(), filled=counter.clone(),
            z_gen=mean.new_zeros(runs, gathered, n), y_gen=mean.new_zeros(runs, gathered, n),
            f_gen=mean.new_full((runs, gathered), math.inf), out_gen=mean.new_zeros(runs, gathered))

    def ask_init(self, problem: Problem, runs: int) -> Proposal:
        """The first generation, drawn around a mean uniform in the box."""
        self.check_dtype(problem.lower.dtype)
        mean = uniform(problem.lower, problem.upper, (runs,))
        p = self.ask(problem, self._fresh(problem, mean))
        p.mean0 = mean
        return p

    def tell_init(self, problem: Problem, proposal: Proposal, f: torch.Tensor) -> CMAESState:
        return self.tell(problem, self._fresh(problem, proposal.mean0), proposal, f)

    # -- one generation -------------------------------------------------------------------------
    def ask(self, problem: Problem, s: CMAESState) -> Proposal:
        """lambda0 samples of the run's distribution: its whole generation, or with IPOP the next
        lambda0 of its lambda (the distribution does not change within a generation)."""
        runs, n = s.mean.shape
        d2, B = torch.linalg.eigh(s.C)  # C = B D^2 B^T, batched over the runs
        d = d2.clamp(min=torch.finfo(d2.dtype).tiny).sqrt()
        z = torch.randn(runs, self.pop_size, n, dtype=s.mean.dtype, device=s.mean.device)  # (38)
        y = (z * d[:, None, :]) @ B.transpose(-1, -2)  # (39) y_k = B D z_k, as rows
        x = s.mean[:, None, :] + s.sigma[:, None, None] * y  # (40)
        return Proposal(torch.clamp(x, problem.lower, problem.upper), z=z, y=y, B=B, d=d)

    def _generation(self, s: CMAESState, p: Proposal, f: torch.Tensor, outside: torch.Tensor, lam: torch.Tensor):
        """The generation's z, y, f and squared distances clipped, (runs, L, ...) with L its largest
        size; which runs complete it (runs,); the state's gathering fields after this step. Without
        IPOP a step's lambda0 points are the generation; with it they are written at each run's
        `filled` offset, and the run's generation is complete once lambda_k points are in."""
        if not self.ipop:
            everyone = torch.ones_like(s.filled, dtype=torch.bool)
            return p.z, p.y, f, outside, everyone, dict(filled=s.filled, z_gen=s.z_gen, y_gen=s.y_gen,
                                                        f_gen=s.f_gen, out_gen=s.out_gen)
        runs, chunk, n = p.z.shape
        at = s.filled[:, None] + torch.arange(chunk, device=f.device)  # (runs, lambda0) slots
        z = s.z_gen.scatter(1, at[..., None].expand(-1, -1, n), p.z)
        y = s.y_gen.scatter(1, at[..., None].expand(-1, -1, n), p.y)
        f_all, out_all = s.f_gen.scatter(1, at, f), s.out_gen.scatter(1, at, outside)
        filled = s.filled + chunk
        complete = filled >= lam  # lam: each run's lambda
        return z, y, f_all, out_all, complete, dict(filled=torch.where(complete, 0, filled), z_gen=z, y_gen=y,
                                                    f_gen=f_all, out_gen=out_all)

    def tell(self, problem: Problem, s: CMAESState, p: Proposal, f: torch.Tensor) -> CMAESState:
        runs, n = s.mean.shape
        rates, weights, sizes = (t[s.level] for t in _level_table(n, self.populations(), p.y.dtype, p.y.device))
        one_minus_cs, ps_gain, damp, one_minus_cc, pc_gain, c_c, two_minus_cc, c_1, c_mu = rates.unbind(-1)
        lam, lo, hi, hist_len = sizes.unbind(-1)
        # ranking: f of the clipped point, plus pycma's BoundPenalty on the distance clipped
        outside = ((s.mean[:, None, :] + s.sigma[:, None, None] * p.y - p.x) ** 2).sum(-1)
        z, y, f_all, outside, complete, gathering = self._generation(s, p, f, outside, lam)
        w = weights  # (runs, mu): (49), (53) for the run's lambda, zeros past its mu
        mu, chi_n = w.shape[1], math.sqrt(n) * (1 - 1 / (4 * n) + 1 / (21 * n * n))
        in_generation = torch.arange(f_all.shape[1], device=f.device) < lam[:, None]

        ordered = torch.where(in_generation, f_all, math.inf).sort(-1).values  # the generation's values, sorted
        iqr = ordered.gather(1, hi[:, None])[:, 0] - ordered.gather(1, lo[:, None])[:, 0]
        var = s.sigma ** 2 * s.C.diagonal(dim1=-2, dim2=-1).mean(-1)
        gamma = torch.where(torch.isfinite(iqr) & (iqr > 0), 2 * iqr, torch.ones_like(iqr)) / var
        key = f_all + torch.where(outside > 0, gamma[:, None] * outside, torch.zeros_like(outside))
        if self.ipop:  # slots past the run's lambda last; so does a NaN key (f = -inf with a penalty of inf)
            key = torch.where(in_generation & ~key.isnan(), key, math.inf)
        best = key.argsort(dim=-1, stable=True)[:, :mu]  # i:lambda, i = 1..mu
        y_sel = y.gather(1, best[..., None].expand(-1, -1, n))
        z_sel = z.gather(1, best[..., None].expand(-1, -1, n))

        y_w = (w[..., None] * y_sel).sum(1)  # (41)
        mean = s.mean + s.sigma[:, None] * y_w  # (42), c_m = 1
        C_inv_sqrt_y_w = ((w[..., None] * z_sel).sum(1)[:, None, :] @ p.B.transpose(-1, -2))[:, 0]  # = B <z>_w
        p_sigma = one_minus_cs[:, None] * s.p_sigma + ps_gain[:, None] * C_inv_sqrt_y_w  # (43)
        norm = p_sigma.norm(dim=-1)
        sigma = s.sigma * torch.exp(damp * (norm / chi_n - 1))  # (44)

        stall = 1 - one_minus_cs ** (2 * (s.g + 1).to(p.y.dtype))
        h_sigma = (norm / stall.sqrt() < (1.4 + 2 / (n + 1)) * chi_n).to(p.y.dtype)
        p_c = one_minus_cc[:, None] * s.p_c + (h_sigma * pc_gain)[:, None] * y_w  # (45)
        delta = (1 - h_sigma) * c_c * two_minus_cc
        rank_one = p_c[:, :, None] * p_c[:, None, :]
        rank_mu = (w[..., None] * y_sel).transpose(-1, -2) @ y_sel  # sum_i w_i y_i y_i^T
        C = (1 + c_1 * delta - c_1 - c_mu * w.sum(-1))[:, None, None] * s.C \
            + c_1[:, None, None] * rank_one + c_mu[:, None, None] * rank_mu  # (47)
        C = (C + C.transpose(-1, -2)) / 2

        g = s.g + 1
        hist = s.best_hist.scatter(1, (s.g % s.best_hist.shape[1])[:, None], ordered[:, :1])  # the generation's best
        new = CMAESState(x=p.x, f=f, mean=mean, sigma=sigma, C=C, p_sigma=p_sigma, p_c=p_c, g=g, best_hist=hist,
                         restarted=s.restarted, level=s.level, **gathering)
        if self.ipop:  # a run whose generation is still being gathered keeps its distribution
            new = dataclasses.replace(new, **{
                k: torch.where(complete.view(-1, *[1] * (getattr(s, k).ndim - 1)), getattr(new, k), getattr(s, k))
                for k in ("mean", "sigma", "C", "p_sigma", "p_c", "g", "best_hist")})
        if not self.restarts:
            return new
        return self._restart(problem, new, ordered, lam, p, s.g, complete, hist_len)

    # -- restarts (Appendix B.3's criteria; IPOP's population increase) --------------------------
    def _restart(self, problem: Problem, s: CMAESState, ordered: torch.Tensor, lam: torch.Tensor, p: Proposal,
                 g_before, complete, hist_len) -> CMAESState:
        """s after (41)-(47) with each run that meets a termination criterion at the end of its
        generation started again (ordered: the generation's lam values, sorted, then +inf)."""
        runs, n = s.mean.shape
        new_mean = uniform(problem.lower, problem.upper, (runs,))
        sigma0, C0 = self._start(problem, runs)
        sigma0_ = sigma0[0] if self.sigma0 is None else self.sigma0
        std = s.sigma[:, None] * s.C.diagonal(dim1=-2, dim2=-1).clamp(min=0).sqrt()
        H = s.best_hist.shape[1]  # the history of lambda0; a larger lambda reads its last hist_len
        back = torch.arange(H, device=ordered.device)
        recent = s.best_hist.gather(1, (s.g[:, None] - 1 - back) % H)
        within = back < hist_len[:, None]
        spread = (torch.where(within, recent, -math.inf).max(-1).values
                  - torch.where(within, recent, math.inf).min(-1).values)
        tol_fun = ((s.g >= hist_len) & (spread < TOL_FUN)
                   & (ordered.gather(1, (lam - 1)[:, None])[:, 0] - ordered[:, 0] < TOL_FUN))
        tol_x = ((std < TOL_X * sigma0_).all(-1) & (s.sigma[:, None] * s.p_c.abs() < TOL_X * sigma0_).all(-1))
        tol_x_up = std.max(-1).values > TOL_X_UP * sigma0_
        condition = (p.d.max(-1).values / p.d.min(-1).values) ** 2 > TOL_CONDITION
        axis = (g_before % n)[:, None, None].expand(-1, n, 1)
        along = p.B.gather(2, axis).squeeze(-1) * p.d.gather(1, axis[:, 0])  # d_i b_i, i = g mod n
        no_axis = (s.mean + 0.1 * s.sigma[:, None] * along == s.mean).all(-1)
        no_coord = (s.mean + 0.2 * std == s.mean).any(-1)
        broken = ~(torch.isfinite(s.sigma) & torch.isfinite(s.mean).all(-1) & torch.isfinite(s.C).flatten(1).all(-1))
        stop = complete & (tol_fun | tol_x | tol_x_up | condition | no_axis | no_coord | broken)

        v, m = stop[:, None], stop[:, None, None]
        last = len(self.populations()) - 1
        return dataclasses.replace(
            s, mean=torch.where(v, new_mean, s.mean), sigma=torch.where(stop, sigma0, s.sigma),
            C=torch.where(m, C0, s.C), p_sigma=torch.where(v, 0.0, s.p_sigma), p_c=torch.where(v, 0.0, s.p_c),
            g=torch.where(stop, 0, s.g), best_hist=torch.where(v, math.inf, s.best_hist),
            restarted=s.restarted + stop.long(), level=torch.where(stop, (s.level + 1).clamp(max=last), s.level))
