"""Engineering design problems with constraints (paper 003's application)."""

from __future__ import annotations

import torch

from .base import Problem


class SpringDesign(Problem):
    """Tension/compression spring design: minimise the weight (N + 2) D d^2.

    x = (d, D, N): wire diameter d in [0.05, 2], mean coil diameter D in [0.25, 1.3], number
    of active coils N in [2, 15]; constraints (feasible when all <= 0):

        g1 = 1 - D^3 N / (71785 d^4)                                   (deflection)
        g2 = (4 D^2 - d D) / (12566 (D d^3 - d^4)) + 1 / (5108 d^2) - 1   (shear stress)
        g3 = 1 - 140.45 d / (D^2 N)                                     (surge frequency)
        g4 = (d + D) / 1.5 - 1                                          (outer diameter)

    Best known (SLSQP-polished): (0.05168906, 0.35671769, 11.28896861), f = 0.01266523.
    """

    name = "spring"
    n_constraints = 4
    BEST_KNOWN = (0.05168906, 0.35671769, 11.28896861)

    def __init__(self) -> None:
        super().__init__(3, [0.05, 0.25, 2.0], [2.0, 1.3, 15.0], optimum_f=0.01266523, optimum_x=self.BEST_KNOWN)

    def evaluate(self, x: torch.Tensor) -> torch.Tensor:
        d, D, N = x[..., 0], x[..., 1], x[..., 2]
        return (N + 2.0) * D * d * d

    def constraints(self, x: torch.Tensor) -> torch.Tensor:
        d, D, N = x[..., 0], x[..., 1], x[..., 2]
        return torch.stack(
            [
                1.0 - D**3 * N / (71785.0 * d**4),
                (4.0 * D**2 - d * D) / (12566.0 * (D * d**3 - d**4)) + 1.0 / (5108.0 * d**2) - 1.0,
                1.0 - 140.45 * d / (D**2 * N),
                (d + D) / 1.5 - 1.0,
            ],
            -1,
        )

    def decode(self, x: torch.Tensor) -> dict:
        g = self.constraints(x)
        return {"d": float(x[0]), "D": float(x[1]), "N": float(x[2]), "weight": float(self.evaluate(x)),
                "constraints": [float(v) for v in g]}
