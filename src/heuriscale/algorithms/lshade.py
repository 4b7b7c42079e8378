"""L-SHADE: success-history based adaptive DE with linear population size reduction.

R. Tanabe and A. S. Fukunaga, "Improving the Search Performance of SHADE Using Linear
Population Size Reduction", IEEE Congress on Evolutionary Computation (CEC 2014), 1658-1665.
Built on SHADE (R. Tanabe and A. Fukunaga, CEC 2013), whose mutation and archive come from
JADE (J. Zhang and A. C. Sanderson, IEEE Trans. Evol. Comput. 13(5), 2009).

Each generation G, for every individual x_i of the N_G alive ones:

    r_i   ~ U{1..H};  CR_i = randn(M_CR[r_i], 0.1) clipped to [0, 1], 0 where M_CR[r_i] = ⊥
                      F_i  = randc(M_F[r_i], 0.1), drawn again while <= 0, 1 where > 1
    v_i   = x_i + F_i (x_pbest - x_i) + F_i (x_r1 - x_r2)     current-to-pbest/1
            x_pbest one of the max(2, round(p N_G)) best, x_r1 from P \\ {x_i}, x_r2 from
            P ∪ A \\ {x_i, x_r1} (A the archive)
    u_ij  = v_ij if rand_ij <= CR_i or j = jrand_i, else x_ij  binomial crossover
            (a coordinate outside the box: the midpoint of x_ij and the bound it crossed)
    x_i  <- u_i if f(u_i) <= f(x_i); where f(u_i) < f(x_i), x_i goes to A and (CR_i, F_i,
            |f(u_i) - f(x_i)|) to (S_CR, S_F, S_Δf)

then, when S is not empty, memory slot k (cycling 1..H) takes the weighted Lehmer means
(weights w = Δf / ΣΔf):

    M_F[k]  = Σ w F² / Σ w F
    M_CR[k] = Σ w CR² / Σ w CR, or ⊥ where M_CR[k] = ⊥ or max(S_CR) = 0 (CR stays 0 after)

and the population shrinks linearly in the evaluations used (NFE) of the budget MAX_NFE:

    N_{G+1} = round((N_min - N_init) / MAX_NFE x NFE + N_init)       (the worst leave)

with the archive kept to round(r_arc x N_{G+1}) members (random ones leave).

Defaults, the paper's CEC 2014 settings: N_init = 18 D (r^Ninit = 18), N_min = 4, H = 6,
p = 0.11, r_arc = 2.6, M_F = M_CR = 0.5 at the start.

Choices where the paper leaves room, or where runs batched in tensors need one:
- runs advance together: every run has the same N_G at every generation (the schedule
  depends on the evaluations only), so the population tensor keeps N_init rows, sorted by
  fitness, the first N_G alive; the rows that left are proposed unchanged and ignored
  (their evaluations are computed but not counted: the budget counts N_G per generation);
- `round` is the C code's (halves away from zero); the run stops at the last whole
  generation within the budget (the paper's code stops mid-generation at MAX_NFE);
- F is drawn again up to 16 times (a draw <= 0 from randc(M_F, 0.1) has probability at
  most 1/2), then taken as the smallest positive normal of the dtype;
- ⊥ is stored as -1; the archive keeps a uniformly random subset of its members and the
  newcomers when they overflow it (the paper: random members are deleted);
- islands are not offered (`islands_offered`): the population reduction spans the whole
  population.

Its native CPU kernel (engine/kernels/lshade/cpu.py, jSO's too) computes the same generations
and is tested against this file; it neither proposes nor evaluates the rows that left (so a
NaN such a row would give is not counted there).
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import itertools
import math
from dataclasses import dataclass

import torch

from ..problems.base import Problem
from .base import Algorithm, Kernels, Proposal, State, check_positive, is_integer, is_real
from .de import archive_keep, binomial_crossover, current_to_pbest, midpoint_repair, rows
from .registry import register_algorithm

_TERMINAL = -1.0  # ⊥ of the CR memory


@dataclass
class SHADEState(State):
    archive: torch.Tensor  # (runs, A_max, dim): the first archive_n rows are members
    archive_n: torch.Tensor  # (runs,)
    m_cr: torch.Tensor  # (runs, H)
    m_f: torch.Tensor  # (runs, H)
    k: torch.Tensor  # (runs,) the next memory slot to update
    nfe: torch.Tensor  # (runs,) evaluations used
    n: torch.Tensor  # (runs,) alive population N_G (the same in every run)


def c_round(x: torch.Tensor) -> torch.Tensor:
    """C's round() for x >= 0: halves away from zero."""
    return torch.floor(x + 0.5)


def randc(location: torch.Tensor, scale: float) -> torch.Tensor:
    """Cauchy draws, one per element of `location`."""
    return location + scale * torch.tan(math.pi * (torch.rand_like(location) - 0.5))


def lehmer(values: torch.Tensor, weights: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Weighted Lehmer mean Σ w v² / Σ w v over the last axis, and Σ w v (0: no mean)."""
    den = (weights * values).sum(-1)
    return (weights * values * values).sum(-1) / torch.where(den > 0, den, 1.0), den


@register_algorithm
@dataclass(kw_only=True)
class LSHADE(Algorithm):
    """L-SHADE with `pop_size` = N_init (None: round(`pop_factor` x D)), memory of `H` slots,
    p-best rate `p`, archive rate `arc_rate`, down to `min_pop` at `max_evals`."""

    pop_size: int | None = None
    pop_factor: float = 18.0
    final_pop: int = 4
    H: int = 6
    p: float = 0.11
    arc_rate: float = 2.6
    max_evals: int | None = None

    name = "lshade"
    paper = "Tanabe & Fukunaga, CEC 2014"
    min_pop = 4  # current-to-pbest/1 needs the target, a p-best and two others
    state_type = SHADEState
    presets = {"cec2014": {"pop_factor": 18.0, "final_pop": 4, "H": 6, "p": 0.11, "arc_rate": 2.6}}  # the defaults
    islands_offered = False  # the population reduction spans the whole population
    kernels = Kernels(cpu=True, folder="lshade")  # engine/kernels/lshade/ (jSO's too: it inherits this)

    # the memory's starting values (jSO changes them)
    m_f0 = 0.5
    m_cr0 = 0.5

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive(self.name, pop_factor=self.pop_factor, arc_rate=self.arc_rate)
        if not (is_real(self.p) and 0 < self.p <= 1):
            raise ValueError(f"{self.name}: p must lie in (0, 1], got {self.p!r}")
        for key in ("H", "final_pop"):
            value = getattr(self, key)
            if not is_integer(value) or value < (self.min_pop if key == "final_pop" else 1):
                least = self.min_pop if key == "final_pop" else 1
                raise ValueError(f"{self.name}: {key} must be an integer >= {least}, got {value!r}")
        if self.pop_size is not None and self.pop_size < self.final_pop:
            raise ValueError(f"{self.name}: pop_size={self.pop_size} is below final_pop={self.final_pop}")
        if self.max_evals is not None and (not is_integer(self.max_evals) or self.max_evals < 1):
            raise ValueError(f"{self.name}: max_evals must be an integer >= 1, got {self.max_evals!r}")

    def default_pop(self, dim: int) -> int:
        return max(self.final_pop, int(c_round(torch.tensor(self.pop_factor * dim, dtype=torch.float64))))

    def with_horizon(self, steps: float) -> Algorithm:
        """Given iterations rather than evaluations: the smallest budget MAX_NFE whose schedule
        has `steps` generations (the population then reaches its final size at the last one)."""
        if self.max_evals is not None or self.pop_size is None:
            return self
        if not math.isfinite(steps):
            raise ValueError(f"{self.name} schedules its population over max_evals: give evals (or iters), "
                             "or set max_evals=...")
        steps = max(1, int(steps))
        low, high = self.pop_size + 1, self.pop_size * (steps + 1)  # gens(high) >= steps
        while low < high:
            mid = (low + high) // 2
            if sum(k for _, k in dataclasses.replace(self, max_evals=mid)._runs()) >= steps:
                high = mid
            else:
                low = mid + 1
        return dataclasses.replace(self, max_evals=low)

    def individual_fields(self, state: SHADEState) -> list[str]:
        return ["x", "f"]  # the archive and the memory belong to the run, not to individuals

    def rows_used(self, state: SHADEState | None) -> int | None:
        return None if state is None else int(state.n.max())  # the same in every run

    # -- the population schedule (the same in every run) ----------------------------------------
    def _next_n(self, nfe):
        """N_{G+1} after `nfe` evaluations (a float64 tensor or a Python number, same arithmetic)."""
        slope = (self.final_pop - self.pop_size) / self.max_evals
        if isinstance(nfe, torch.Tensor):
            return c_round(slope * nfe + self.pop_size).clamp(min=self.final_pop)
        return max(self.final_pop, math.floor(slope * nfe + self.pop_size + 0.5))

    @functools.cached_property
    def _sizes(self) -> tuple[int, ...]:
        """N_G of every generation that starts within the budget."""
        return tuple(itertools.chain.from_iterable(itertools.repeat(n, k) for n, k in self._runs()))

    def _runs(self):
        """The schedule as runs (N, how many generations of that size): generation by generation,
        N_G = min(N_{G-1}, _next_n(nfe)) after nfe += N_{G-1}, while nfe < max_evals. Runs are
        counted, not stepped through (`with_horizon` asks for a million generations: that took
        seconds a schedule), with the same float arithmetic as each step."""
        nfe, n = self.pop_size, self.pop_size
        while nfe < self.max_evals:
            k = self._run_of(nfe, n)
            yield n, k
            nfe += k * n
            n = min(n, self._next_n(float(nfe)))

    def _run_of(self, nfe: int, n: int) -> int:
        """How many generations of size n start at nfe, nfe + n, ...: the first k >= 1 after
        which the budget is spent or the schedule shrinks. Both stay so as k grows (the slope is
        never positive), so k is found from the line's own solution, then checked and moved
        to the first k for which the same arithmetic as one step at a time says so."""
        def ends(k: int) -> bool:
            return nfe + k * n >= self.max_evals or self._next_n(float(nfe + k * n)) < n

        k = -(-(self.max_evals - nfe) // n)  # the budget's bound
        slope = (self.final_pop - self.pop_size) / self.max_evals
        if slope < 0:  # _next_n(x) < n once slope x + N_init + 1/2 < n
            k = min(k, int((self.pop_size + 0.5 - n) / -slope - nfe) // n + 1)
        k = max(k, 1)
        while k > 1 and ends(k - 1):
            k -= 1
        while not ends(k):
            k += 1
        return k

    @functools.cached_property
    def _used(self) -> tuple[int, ...]:
        """Evaluations after 0, 1, ... generations of the schedule (the initial population first)."""
        return tuple(itertools.accumulate(self._sizes, initial=self.pop_size))

    def _beyond(self) -> tuple[int, int]:
        """Past the budget (iterations or a time limit that outlast it): the first extra
        generation's size, then every later one's (tell's recurrence shrinks to final_pop)."""
        return (self.final_pop, self.final_pop) if self._sizes else (self.pop_size, self.final_pop)

    def evals_after(self, steps: int) -> int:
        used = self._used
        if steps < len(used):
            return used[steps]
        first, later = self._beyond()
        extra = steps - (len(used) - 1)
        return used[-1] + first + (extra - 1) * later

    def steps_within(self, evals: int) -> int:
        if evals < self.pop_size:
            return -1
        used = self._used
        if evals < used[-1] + self._beyond()[0]:
            return bisect.bisect_right(used, evals) - 1
        first, later = self._beyond()
        return len(used) + (evals - used[-1] - first) // later

    def memory_bytes(self, runs: int, dim: int, itemsize: int) -> int:
        return (self.population_copies + math.ceil(self.arc_rate)) * runs * self.pop_size * (dim + 2) * itemsize

    # -- init ----------------------------------------------------------------------------------
    def tell_init(self, problem: Problem, p: Proposal, f: torch.Tensor) -> SHADEState:
        runs, n, dim = p.x.shape
        order = f.argsort(-1)
        dev, dt = p.x.device, p.x.dtype
        capacity = max(1, int(c_round(torch.tensor(self.arc_rate * n, dtype=torch.float64))))
        count = lambda v: torch.full((runs,), v, device=dev, dtype=torch.long)  # noqa: E731
        return SHADEState(
            x=rows(p.x, order), f=f.gather(1, order),
            archive=torch.zeros(runs, capacity, dim, device=dev, dtype=dt), archive_n=count(0),
            m_cr=torch.full((runs, self.H), self.m_cr0, device=dev, dtype=dt),
            m_f=torch.full((runs, self.H), self.m_f0, device=dev, dtype=dt),
            k=count(0), nfe=count(n), n=count(n))

    # -- jSO's changes hook in here (identity in L-SHADE) ---------------------------------------
    def p_rate(self, progress: torch.Tensor) -> torch.Tensor:
        """The p-best rate at `progress` = NFE / MAX_NFE (runs,)."""
        return torch.full_like(progress, self.p)

    def adjust(self, F: torch.Tensor, CR: torch.Tensor, progress: torch.Tensor):
        """F and CR as drawn, and the F of the p-best term (L-SHADE: F itself)."""
        return F, CR, F

    def memory_value(self, old: torch.Tensor, mean: torch.Tensor) -> torch.Tensor:
        """A memory slot's new value from its old one and the successes' Lehmer mean (or ⊥)."""
        return mean

    def cr_terminal(self, old_cr: torch.Tensor, cr_sum: torch.Tensor) -> torch.Tensor:
        """Where the CR memory becomes ⊥: it is ⊥ already, or every successful CR was 0."""
        return (old_cr == _TERMINAL) | (cr_sum <= 0)

    def sampled_memory(self, m_f: torch.Tensor, m_cr: torch.Tensor):
        """The memory values an individual draws around (jSO fixes its last slot at 0.9)."""
        return m_f, m_cr

    def pbest_avoids_target(self, progress: torch.Tensor) -> torch.Tensor:
        """Whether the p-best may not be the target itself (iL-SHADE, jSO: the first half)."""
        return torch.zeros_like(progress, dtype=torch.bool)

    # -- one generation ------------------------------------------------------------------------
    def ask(self, problem: Problem, s: SHADEState) -> Proposal:
        runs, n0, dim = s.x.shape
        dev, dt = s.x.device, s.x.dtype
        i = torch.arange(n0, device=dev).expand(runs, n0)
        alive = i < s.n[:, None]
        progress = s.nfe.double() / self.max_evals  # float64 as the C code, whatever the run's dtype

        r = torch.randint(0, self.H, (runs, n0), device=dev)
        m_f, m_cr = self.sampled_memory(s.m_f, s.m_cr)
        m_cr, m_f = m_cr.gather(1, r), m_f.gather(1, r)
        CR = torch.where(m_cr < 0, 0.0, (m_cr + 0.1 * torch.randn_like(m_cr)).clamp(0.0, 1.0))
        F = randc(m_f, 0.1)
        for _ in range(16):
            F = torch.where(F <= 0, randc(m_f, 0.1), F)
        F = torch.where(F <= 0, torch.finfo(dt).tiny, F).clamp(max=1.0)
        F, CR, Fw = self.adjust(F, CR, progress[:, None].to(dt))

        best = c_round(self.p_rate(progress) * s.n.double()).long().clamp(min=2)  # (runs,): p-best pool
        v = current_to_pbest(s.x, i, s.n, best, s.archive, s.archive_n, F, Fw,  # the population is sorted
                             avoid=self.pbest_avoids_target(progress)[:, None].expand(runs, n0))
        u = binomial_crossover(s.x, v, CR, moving=alive)  # the rows that left stay as they are
        return Proposal(midpoint_repair(problem, u, s.x), F=F, CR=CR)

    def tell(self, problem: Problem, s: SHADEState, p: Proposal, fu: torch.Tensor) -> SHADEState:
        runs, n0, dim = s.x.shape
        dt = s.x.dtype
        alive = torch.arange(n0, device=s.x.device) < s.n[:, None]
        replaced = alive & (fu <= s.f)
        success = alive & (fu < s.f)
        x = torch.where(replaced[..., None], p.x, s.x)
        f = torch.where(replaced, fu, s.f)

        # the memory: weighted Lehmer means of the successful F and CR, slot k
        delta = torch.where(success, (s.f - fu).abs(), 0.0)
        delta = delta.clamp(max=torch.finfo(dt).max / n0)  # a first finite value after inf: weights stay finite
        total = delta.sum(-1, keepdim=True)
        w = delta / torch.where(total > 0, total, 1.0)
        mean_f, _ = lehmer(p.F, w)
        mean_cr, cr_sum = lehmer(p.CR, w)
        any_success = success.any(-1)
        slot = s.k[:, None]
        old_f, old_cr = s.m_f.gather(1, slot)[:, 0], s.m_cr.gather(1, slot)[:, 0]
        mean_cr = torch.where(self.cr_terminal(old_cr, cr_sum), _TERMINAL, mean_cr)
        new_cr = self.memory_value(old_cr, mean_cr)
        new_f = self.memory_value(old_f, mean_f)
        m_f = s.m_f.scatter(1, slot, torch.where(any_success, new_f, old_f)[:, None])
        m_cr = s.m_cr.scatter(1, slot, torch.where(any_success, new_cr, old_cr)[:, None])
        k = torch.where(any_success, (s.k + 1) % self.H, s.k)

        # the population shrinks: sort, the worst beyond N_{G+1} leave
        nfe = s.nfe + s.n
        n = torch.minimum(self._next_n(nfe.double()).long(), s.n)
        order = torch.where(alive, f, torch.inf).argsort(-1)
        x, f = rows(x, order), f.gather(1, order)
        keep = torch.arange(n0, device=s.x.device) < n[:, None]
        f = torch.where(keep, f, torch.inf)

        # the archive: its members and the replaced parents, a random subset of the capacity
        capacity = (self.arc_rate * n.double()).long().clamp(max=s.archive.shape[1])  # the code's (int) truncation
        archive, archive_n = archive_keep(s.archive, s.archive_n, s.x, success, capacity)
        return SHADEState(x=x, f=f, archive=archive, archive_n=archive_n, m_cr=m_cr, m_f=m_f, k=k, nfe=nfe, n=n)
