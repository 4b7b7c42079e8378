"""Final non-dominated sets against the true Pareto front (matplotlib, Agg, PNG): a 2-D
scatter for two objectives, a 3-D one for three (more objectives: the first three)."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

__all__ = ["front_panels"]


def front_panels(fronts: dict, truths: dict, path, title: str = "") -> Path:
    """One panel per problem: each algorithm's front (`fronts[problem][algorithm]`, an (n, M)
    array, e.g. its median-hypervolume run) as points over the true front `truths[problem]`
    (a grey line or cloud). Problems with three or more objectives get 3-D panels."""
    names = list(fronts)
    cols = min(3, len(names))
    rows = math.ceil(len(names) / cols)
    fig = plt.figure(figsize=(4.6 * cols, 4.2 * rows))
    colours = plt.get_cmap("tab10")
    algorithms = sorted({a for per in fronts.values() for a in per})
    for i, name in enumerate(names):
        truth = np.asarray(truths.get(name) if truths.get(name) is not None else np.empty((0, 2)), dtype=float)
        m = max([truth.shape[1]] + [np.asarray(F).shape[1] for F in fronts[name].values() if len(F)])
        ax = fig.add_subplot(rows, cols, i + 1, projection="3d" if m >= 3 else None)
        if len(truth):
            if m >= 3:
                ax.scatter(*truth[:, :3].T, s=2, c="0.7", alpha=0.5, label="true front")
            else:
                order = np.argsort(truth[:, 0])
                ax.plot(truth[order, 0], truth[order, 1], ".", ms=2, c="0.6", label="true front")
        for j, algo in enumerate(algorithms):
            F = np.asarray(fronts[name].get(algo, []), dtype=float).reshape(-1, m)
            F = F[np.isfinite(F).all(axis=1)]
            if not len(F):
                continue
            if m >= 3:
                ax.scatter(*F[:, :3].T, s=10, color=colours(j % 10), label=algo, depthshade=False)
            else:
                ax.scatter(F[:, 0], F[:, 1], s=12, color=colours(j % 10), label=algo, zorder=3)
        ax.set_title(name)
        ax.set_xlabel("$f_1$")
        ax.set_ylabel("$f_2$")
        if m >= 3:
            ax.set_zlabel("$f_3$")
            ax.view_init(elev=25, azim=45)
        ax.legend(fontsize=7, loc="upper right")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
