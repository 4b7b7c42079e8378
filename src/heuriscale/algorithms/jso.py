"""jSO: L-SHADE with iL-SHADE's and jSO's changes, second at CEC 2017.

J. Brest, M. S. Maučec and B. Bošković, "Single Objective Real-Parameter Optimization:
Algorithm jSO", IEEE Congress on Evolutionary Computation (CEC 2017), 1311-1318; it extends
iL-SHADE (Brest, Maučec and Bošković, CEC 2016), itself L-SHADE (`lshade.py`) changed.

Everything of L-SHADE stays (memory of successful F and CR, weighted Lehmer means, archive,
linear population size reduction) except, with NFE the evaluations used and MAX_NFE the
budget:

    N_init = round(25 ln(D) sqrt(D)), H = 5, r_arc = 1, M_F = 0.3 and M_CR = 0.8 at the start
    the last memory slot always gives M_F = M_CR = 0.9 to the individuals that draw it
    CR_i  = max(CR_i, 0.7) while NFE < 0.25 MAX_NFE, max(CR_i, 0.6) while NFE < 0.5 MAX_NFE
    F_i   = min(F_i, 0.7) while NFE < 0.6 MAX_NFE
    v_i   = x_i + F_w (x_pbest - x_i) + F_i (x_r1 - x_r2)            current-to-pbest-w/1
            F_w = 0.7 F_i (NFE < 0.2 MAX_NFE), 0.8 F_i (NFE < 0.4 MAX_NFE), else 1.2 F_i
    p     = p_max (1 - 0.5 NFE / MAX_NFE), p_max = 0.25 (from 0.25 down to 0.125)
            and the p-best is not the target itself while NFE < 0.5 MAX_NFE (iL-SHADE)
    M[k] <- (mean_WL(S) + M[k]) / 2 for F and CR (the new mean averaged with the old value)

Where the paper's text and the authors' code differ, the code is followed, since the
published numbers came from it: the slot update cycles through all H slots (the last one's
stored value is never drawn); the CR memory turns ⊥ (stored as -1) only when every
successful CR was 0, and the ⊥ is then averaged with the old value like any mean, so a slot
recovers. The other choices of `lshade.py` hold here too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .lshade import LSHADE, c_round
from .registry import register_algorithm


@register_algorithm
@dataclass(kw_only=True)
class JSO(LSHADE):
    """jSO: `pop_size` = N_init (None: round(`pop_factor` ln D sqrt D)), memory of `H` slots,
    p-best rate from `p` down to p / 2, archive rate `arc_rate`."""

    pop_factor: float = 25.0
    H: int = 5
    p: float = 0.25
    arc_rate: float = 1.0

    name = "jso"
    paper = "Brest, Maucec & Boskovic, CEC 2017"
    presets = {"cec2017": {"pop_factor": 25.0, "final_pop": 4, "H": 5, "p": 0.25, "arc_rate": 1.0}}  # the defaults

    m_f0 = 0.3
    m_cr0 = 0.8

    def default_pop(self, dim: int) -> int:
        return max(self.final_pop, int(c_round(torch.tensor(self.pop_factor * math.log(max(dim, 1)) * math.sqrt(dim),
                                                            dtype=torch.float64))))

    def p_rate(self, progress: torch.Tensor) -> torch.Tensor:
        return self.p * (1.0 - 0.5 * progress)

    def adjust(self, F: torch.Tensor, CR: torch.Tensor, progress: torch.Tensor):
        CR = torch.where(progress < 0.25, CR.clamp(min=0.7), CR)
        CR = torch.where(progress < 0.5, CR.clamp(min=0.6), CR)
        F = torch.where(progress < 0.6, F.clamp(max=0.7), F)
        scale = torch.where(progress < 0.4, torch.full_like(F, 0.8), torch.full_like(F, 1.2))  # in F's dtype
        Fw = F * torch.where(progress < 0.2, torch.full_like(F, 0.7), scale)
        return F, CR, Fw

    def sampled_memory(self, m_f: torch.Tensor, m_cr: torch.Tensor):
        last = torch.arange(self.H, device=m_f.device) == self.H - 1
        return torch.where(last, 0.9, m_f), torch.where(last, 0.9, m_cr)

    def pbest_avoids_target(self, progress: torch.Tensor) -> torch.Tensor:
        return progress < 0.5

    def cr_terminal(self, old_cr: torch.Tensor, cr_sum: torch.Tensor) -> torch.Tensor:
        return cr_sum <= 0

    def memory_value(self, old: torch.Tensor, mean: torch.Tensor) -> torch.Tensor:
        return (mean + old) / 2

