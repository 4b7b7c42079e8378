"""Figures of a benchmarking campaign (`heuriscale compare`): critical-difference diagram and
convergence panels (matplotlib, Agg, PNG)."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import EngFormatter, MaxNLocator  # noqa: E402

FLOOR = 1e-8  # CEC convention: errors below 1e-8 count as 0; on a log axis they are drawn at the floor

__all__ = ["cd_diagram", "convergence_panels", "cliques", "FLOOR"]


def cliques(ranks: list[float], cd: float) -> list[tuple[int, int]]:
    """Maximal runs (i, j), i < j, of the sorted `ranks` whose spread is below `cd`: the groups
    that Nemenyi does not tell apart (two mean ranks differ significantly when they differ by
    at least CD). A run inside an earlier one is not repeated."""
    out, reach = [], 0
    for i in range(len(ranks)):
        j = max(j for j in range(i, len(ranks)) if ranks[j] - ranks[i] < cd) if cd > 0 else i
        if j > i and j > reach:
            out.append((i, j))
            reach = j
    return out


def cd_diagram(mean_ranks: dict, cd: float, path, title: str = "") -> Path:
    """Demsar's (2006) critical-difference diagram.

    The rank axis runs from 1 (best, left) to k; each algorithm hangs from its mean rank, the
    better half to the left, the rest to the right, labelled with name and mean rank; thick bars
    join the algorithms whose mean ranks differ by less than the Nemenyi CD (drawn above the axis).
    The figure is laid out in inches, so long names widen it instead of overlapping the axis."""
    names = sorted(mean_ranks, key=lambda a: (mean_ranks[a], a))
    ranks = [float(mean_ranks[a]) for a in names]
    k = len(names)
    hi = max(k, 2)
    labels = [f"{a} ({r:.2f})" for a, r in zip(names, ranks)]
    half = math.ceil(k / 2)
    text_l, text_r = (0.085 * max((len(s) for s in part), default=4) + 0.45 for part in (labels[:half], labels[half:]))
    axis_w = max(4.0, 0.8 * hi)  # inches; text_l, text_r: inches of labels beside the axis
    width = text_l + axis_w + text_r
    groups = cliques(ranks, cd)
    top, step, bar_step = 1.05 if title else 0.75, 0.28, 0.14
    first = top + 0.18 + bar_step * len(groups) + 0.1  # depth of the first label line
    height = first + step * max(half - 1, k - half - 0.5) + 0.3

    def x(rank: float) -> float:
        return text_l + (rank - 1) / (hi - 1) * axis_w

    fig = plt.figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set(xlim=(0, width), ylim=(-height, 0))
    ax.axis("off")
    if title:
        ax.text(width / 2, -0.12, title, ha="center", va="top", fontsize=10)
    ax.plot([x(1), x(hi)], [-top, -top], color="black", lw=1)
    for t in np.arange(1, hi + 0.01, 0.5):
        major = float(t).is_integer()
        ax.plot([x(t), x(t)], [-top, -top + (0.1 if major else 0.05)], color="black", lw=0.8)
        if major:
            ax.text(x(t), -top + 0.13, f"{int(t)}", ha="center", va="bottom", fontsize=9)
    if cd > 0:  # the CD interval, from rank 1, above the tick labels; cut at the axis end if longer
        y, end = -top + 0.48, min(1 + cd, hi)
        ax.plot([x(1), x(end)], [y, y], color="black", lw=1)
        ax.plot([x(1)] * 2, [y - 0.05, y + 0.05], color="black", lw=1)
        ax.plot([x(end)] * 2, [y - 0.05, y + 0.05], color="black", lw=1, ls="-" if end == 1 + cd else ":")
        note = "" if end == 1 + cd else " (longer than the axis: no pair can differ)"
        ax.text((x(1) + x(end)) / 2, y + 0.06, f"CD = {cd:.2f}{note}", ha="center", va="bottom", fontsize=9)
    for i, (r, label) in enumerate(zip(ranks, labels)):
        left = i < half
        # outermost ranks on the shortest lines, so none cross; the right side half a line lower, so that
        # equal ranks on both sides do not read as one line
        y = -first - step * (i if left else k - 1 - i + 0.5)
        end = text_l - 0.1 if left else width - text_r + 0.1
        ax.plot([x(r), x(r), end], [-top, y, y], color="black", lw=0.8)
        ax.text(end + (-0.05 if left else 0.05), y, label, ha="right" if left else "left", va="center", fontsize=9)
    for g, (i, j) in enumerate(groups):
        y = -top - 0.18 - bar_step * g
        ax.plot([x(ranks[i]) - 0.06, x(ranks[j]) + 0.06], [y, y], color="black", lw=3.5, solid_capstyle="butt")
    path = Path(path)
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path


def _band(a: np.ndarray, log: bool) -> np.ndarray:
    """Quartiles and median over runs (axis 0), linear interpolation as numpy's default, with a
    failed run (NaN) as +inf: a quantile that falls on a finite value stays finite (numpy's own
    lerp gives NaN there), one that reaches the failed runs is inf and not drawn."""
    a = np.sort(np.where(np.isnan(a), np.inf, a), axis=0)
    if log:
        a = np.maximum(a, FLOOR)
    out = []
    for q in (0.25, 0.5, 0.75):
        h = (len(a) - 1) * q
        lo, g = int(h), h - int(h)
        with np.errstate(invalid="ignore"):  # inf - inf, answered by the where
            v = a[lo] if g == 0 else np.where(np.isinf(a[lo + 1]), np.inf, a[lo] + g * (a[lo + 1] - a[lo]))
        out.append(np.where(np.isfinite(v), v, np.nan))
    return np.array(out)


def convergence_panels(curves: dict, fractions, budget: int, path, title: str = "", log: bool = True) -> Path:
    """One panel per function: per algorithm the median error over runs against evaluations,
    with the inter-quartile band; one legend for all panels, below them.

    `curves` is {function: {algorithm: array (runs, len(fractions))}}; x = fraction * budget.
    On the log axis errors below FLOOR (0 included) are drawn at FLOOR, and the axis label says so."""
    functions = list(curves)
    algorithms = list(dict.fromkeys(a for f in functions for a in curves[f]))
    colors = {a: plt.get_cmap("tab10")(i % 10) for i, a in enumerate(algorithms)}
    styles = ("-", "--", "-.", ":")
    x = np.asarray(fractions, dtype=float) * budget
    cols = min(4, max(1, len(functions)))
    rows = max(1, math.ceil(len(functions) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols + 0.6, 2.7 * rows + 1.0), squeeze=False, layout="constrained")
    for ax, fn in zip(axes.flat, functions):
        for i, (algo, a) in enumerate(curves[fn].items()):
            lo, med, up = _band(np.asarray(a, dtype=float).reshape(-1, len(x)), log)
            ax.fill_between(x, lo, up, color=colors[algo], alpha=0.2, lw=0)
            ax.plot(x, med, color=colors[algo], ls=styles[algorithms.index(algo) % 4], lw=1.4, label=algo,
                    marker="o" if len(x) <= 20 else None, ms=2.5)
        ax.set_title(fn, fontsize=10)
        ax.tick_params(labelsize=8)
        ax.xaxis.set_major_locator(MaxNLocator(5))
        ax.xaxis.set_major_formatter(EngFormatter(sep=""))  # 50k, 100k, 1.5M: no offset text to misread
        if log:
            ax.set_yscale("log")
        ax.grid(alpha=0.3, lw=0.5)
    for i, ax in enumerate(axes.flat):
        if i >= len(functions):
            ax.set_visible(False)
        elif i + cols >= len(functions):  # lowest panel of its column
            ax.set_xlabel(f"evaluations (budget {budget:,})", fontsize=9)
    floor = f"1e{round(math.log10(FLOOR))}"
    ylabel = f"error f - f* (log scale)\nvalues below {floor}, 0 too, drawn at {floor}" if log else "error f - f*"
    fig.supylabel(ylabel, fontsize=9)
    handles = [plt.Line2D([], [], color=colors[a], ls=styles[i % 4], lw=1.6, label=a) for i, a in enumerate(algorithms)]
    fig.legend(handles=handles, loc="outside lower center", ncol=min(len(algorithms), 6), fontsize=9, frameon=False,
               title="line: median over runs, band: inter-quartile range", title_fontsize=9)
    if title:
        fig.suptitle(title, fontsize=11)
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
