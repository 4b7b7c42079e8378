"""The papers' figures drawn from our stored runs (matplotlib, PNG)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import NamedTuple

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import LogNorm, Normalize  # noqa: E402


class Drawn(NamedTuple):
    """A figure written to `path`, with the sentence that says what it shows."""

    path: Path
    caption: str


def for_experiment(exp, results, folder: Path) -> list[Drawn]:
    """Figures of one experiment (see `FIGURES`); an empty list when it has none."""
    draw = FIGURES.get(exp.kind)
    return draw(exp, results, folder) if draw else []


def _save(fig, path: Path, caption: str) -> Drawn:
    if fig.get_layout_engine() is None:  # figures made with layout="constrained" keep it
        fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Drawn(path, caption)


def _groups(results, key):
    out: dict = {}
    for row, config, agg in results:
        out.setdefault(config.tags[key], []).append((row, config, agg))
    return out


def time_vs_size(exp, results, folder):
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for device, marker in (("cpu", "o"), ("cuda", "s")):
        pts = [(c.tags["particles"], 1e6 * a["time"]["mean"] / c.iters) for _, c, a in results if c.device == device]
        if pts:
            ax.plot(*zip(*sorted(pts)), marker=marker, label=f"ours {device}")
    for device, marker in (("cpu", "x"), ("cuda", "+")):
        pts = [(r["tags"]["particles"], 1000 * r["paper"][device]["avg"] / r["config"]["iters"]) for r in exp.rows]
        ax.plot(*zip(*sorted(pts)), marker=marker, linestyle="--", label=f"paper {device}")
    ax.set(xscale="log", yscale="log", xlabel="particles", ylabel="time per iteration (us)",
           title="Execution time vs number of particles")
    ax.legend(fontsize=8)
    return [_save(fig, folder / f"{exp.name}_time_vs_particles.png",
                  "Time per iteration against the number of particles, ours (solid) and the paper's (dashed), on "
                  "the CPU and the GPU, log-log.")]


def snapshots(exp, results, folder):
    paths = []
    for row, config, agg in results:
        shots = agg["runs"][0]["extra"].get("snapshots", {})
        if not shots:
            continue
        label = "_".join(f"{k}{v}" for k, v in config.tags.items() if k not in ("experiment", "ran"))
        if config.dim == 2 or config.problem in ("euclidean",):
            paths.append(_positions(shots, config, folder / f"{exp.name}_{label}_{config.device}.png"))
        else:
            paths.append(_maps(shots, config, folder / f"{exp.name}_{label}_{config.device}_maps.png"))
    if exp.kind == "snapshots" and any("mu" in c.tags for _, c, _ in results):
        paths += _by_generation(exp, results, folder)
    return paths


def _positions(shots, config, path):
    its = sorted(shots, key=int)
    fig, axes = plt.subplots(1, len(its), figsize=(4 * len(its), 4), squeeze=False)
    for ax, it in zip(axes[0], its):
        x = np.asarray(shots[it]["x"])
        ax.scatter(x[:, 0], x[:, 1], s=6)
        ax.scatter([0], [0], marker="*", s=120, color="red", label="optimum")
        ax.set(title=f"iteration {it}", xlim=(-100, 100), ylim=(-100, 100), aspect="equal")
    axes[0][0].legend(loc="lower left", fontsize=8)
    fig.suptitle(f"{config.algorithm} particle positions, {config.problem}, {config.algorithm_params.get('pop_size')} particles")
    return _save(fig, path, f"Particle positions of one run at iterations {', '.join(its)} ({config.device}); the star "
                            "marks the optimum.")


def grid_shape(n: int) -> tuple[int, int]:
    """(h, w) of the grid holding n individuals (paper 004: a tile is w x h = mu): the most square
    exact factorisation (400 -> 20 x 20, 800 -> 25 x 32), or a padded near-square grid where that
    would be a strip (a prime n)."""
    h = max(d for d in range(1, math.isqrt(n) + 1) if n % d == 0)
    if n // h > 2 * h:
        w = math.ceil(math.sqrt(n))
        return math.ceil(n / w), w
    return h, n // h


def genome_tiles(x: np.ndarray, tiles_per_row: int = 4) -> np.ndarray:
    """Paper 004's Fig. 2 texture: genomes (mu, k) -> array (rows * h, cols * w, 4).

    Genes 4t+1..4t+4 of an individual are one (r, g, b, alpha) pixel of tile t; individual i is
    pixel (i // w, i % w) of every tile; tiles fill rows of `tiles_per_row` (k = 32: 2 x 4 tiles,
    as in the paper). Cells past mu individuals or k genes are NaN. Values are not scaled."""
    mu, k = x.shape
    h, w = grid_shape(mu)
    n = -(-k // 4)
    cols = min(tiles_per_row, n)
    rows = -(-n // cols)
    padded = np.full((h * w, rows * cols * 4), np.nan)
    padded[:mu, :k] = x
    return padded.reshape(h, w, rows, cols, 4).transpose(2, 0, 3, 1, 4).reshape(rows * h, cols * w, 4)


def fitness_grid(f: np.ndarray) -> np.ndarray:
    """Fitness (mu,) -> (h, w), individual i at (i // w, i % w) as in its genome tiles; NaN pads."""
    h, w = grid_shape(len(f))
    grid = np.full(h * w, np.nan)
    grid[: len(f)] = f
    return grid.reshape(h, w)


def _fitness_norm(values: np.ndarray):
    lo, hi = float(values.min()), float(values.max())
    if lo > 0 and hi / lo > 10:  # over a decade: linear would show only the first snapshot
        return LogNorm(lo, hi), f"[{lo:.3g}, {hi:.3g}], log scale"
    return Normalize(lo, hi if hi > lo else lo + 1), f"[{lo:.3g}, {hi:.3g}], linear"


def maps_figure(shots: dict, title: str):
    """Paper 004 Fig. 5: genome-convergence (texture tiles) and fitness-convergence maps.

    Every snapshot is drawn on one gene scale and one fitness scale (the range over all the
    snapshots), so a converged population shows as flat colours rather than as rescaled noise."""
    its = sorted(shots, key=int)
    xs = [np.asarray(shots[it]["x"], dtype=float) for it in its]
    fs = [np.asarray(shots[it]["f"], dtype=float) for it in its]
    lo, hi = min(np.nanmin(x) for x in xs), max(np.nanmax(x) for x in xs)
    genes = Normalize(lo, hi if hi > lo else lo + 1)
    fnorm, frange = _fitness_norm(np.concatenate([f[np.isfinite(f)] for f in fs]))
    h, w = grid_shape(len(fs[0]))
    tex_h, tex_w = genome_tiles(xs[0]).shape[:2]
    rows = (tex_h / tex_w, tex_h / tex_w, h / w)  # panel heights per unit width, so no row floats in blank space
    fig, axes = plt.subplots(3, len(its), figsize=(3.6 * len(its) + 1.6, 3.6 * sum(rows) + 2.4), squeeze=False,
                             layout="constrained", height_ratios=rows)
    for col, (it, x, f) in enumerate(zip(its, xs, fs)):
        tex = genome_tiles(x)
        rgb = np.clip((tex[..., :3] - genes.vmin) / (genes.vmax - genes.vmin), 0, 1)
        shown = np.isfinite(rgb).all(-1)  # padding cells stay transparent
        axes[0][col].imshow(np.dstack([np.nan_to_num(rgb), shown]), interpolation="nearest")
        axes[0][col].set_title(f"generation {it}\ngenes 1-3 of each quadruple = (r, g, b)", fontsize=9)
        alpha = axes[1][col].imshow(tex[..., 3], cmap="gray", norm=genes, interpolation="nearest")
        axes[1][col].set_title("gene 4 of each quadruple (alpha)", fontsize=9)
        for ax in axes[0][col], axes[1][col]:  # ticks on tile boundaries, nothing drawn over the image
            ax.set_xticks(np.arange(0, tex.shape[1] + 1, w) - 0.5, labels=[])
            ax.set_yticks(np.arange(0, tex.shape[0] + 1, h) - 0.5, labels=[])
        fit = axes[2][col].imshow(fitness_grid(f), cmap="gray", norm=fnorm, interpolation="nearest")
        axes[2][col].set(xticks=[], yticks=[])
        axes[2][col].set_title(f"fitness (best {np.nanmin(f):.3g})", fontsize=9)
    fig.colorbar(alpha, ax=axes[:2, :].ravel().tolist(), shrink=0.9,
                 label=f"gene value, each of r, g, b, alpha\n(shared: [{lo:.3g}, {hi:.3g}])")
    fig.colorbar(fit, ax=axes[2, :].ravel().tolist(), label=f"fitness (shared: {frange})")
    fig.suptitle(title)
    fig.supxlabel(f"One scale for all snapshots: genes over their range in all snapshots [{lo:.3g}, {hi:.3g}] "
                  f"(black to full colour), fitness {frange} (black = lowest). Texture as the paper's Fig. 2: "
                  f"tile t holds genes 4t+1..4t+4\nof every individual, tiles left to right then down; individual "
                  f"i is pixel (i // {w}, i % {w}) of each {h} x {w} tile and of the fitness map. "
                  "A converged tile is one flat colour.", fontsize=8)
    return fig


def _maps(shots, config, path):
    title = (f"Genome- and fitness-convergence (paper 004 Fig. 5), {config.problem}, "
             f"mu = {config.algorithm_params.get('pop_size')}, {config.device}")
    return _save(maps_figure(shots, title), path,
                 f"Genome- and fitness-convergence maps of one run at {len(shots)} generations ({config.device}): a "
                 "converged tile is one flat colour, as in the paper's Fig. 5.")


def _by_generation(exp, results, folder):
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for row, config, agg in results:
        run = agg["runs"][0]
        label = f"mu={config.tags['mu']} {config.device}"
        left.plot(run["history"]["iter"], run["history"]["f"], label=label)
        shots = run["extra"].get("snapshots", {})
        gens = sorted(int(k) for k in shots)
        right.plot(gens, [shots[str(g)]["elapsed"] for g in gens], marker="o", label=label)
    left.set(yscale="log", xlabel="generation", ylabel="best fitness", title="Best fitness by generation")
    right.set(xlabel="generation", ylabel="elapsed s", title="Time by generation")
    left.legend(fontsize=7)
    right.legend(fontsize=7)
    return [_save(fig, folder / f"{exp.name}_by_generation.png",
                  "Best fitness by generation (left) and elapsed time by generation (right), one run per population "
                  "size and device.")]


ZERO_AT = 1e-9  # where an error reported as 0 (below 1e-8) is drawn on a log axis


def hybrid_trials(exp, results, folder):
    """Paper 002's Figs. 7-8: per trial, the swarm's best before BFGS (blue) joined to the best
    after it (orange), both from the same run; errors reported as 0 (below 1e-8) drawn at 1e-9."""
    pairs = [(c, a) for _, c, a in results if c.refine and a["runs"]]
    return [hybrid_figure(pairs, folder / f"{exp.name}_per_trial.png")] if pairs else []


def hybrid_figure(pairs, path: Path) -> Drawn:
    """`pairs`: (config, agg) of refined configurations, agg["pairs"] their (before, after) errors."""
    fns = list(dict.fromkeys(c.tags["function"] for c, _ in pairs))
    devices = list(dict.fromkeys(c.device for c, _ in pairs))
    fig, axes = plt.subplots(len(devices), len(fns), figsize=(4.5 * len(fns), 3.6 * len(devices)), squeeze=False)
    for i, device in enumerate(devices):
        for j, fn in enumerate(fns):
            ax = axes[i][j]
            for c, a in pairs:
                if c.device != device or c.tags["function"] != fn:
                    continue
                before, after = (np.maximum(np.asarray(v, dtype=float), ZERO_AT) for v in a["pairs"])
                trials = np.arange(1, len(before) + 1)
                ax.vlines(trials, np.minimum(before, after), np.maximum(before, after), color="0.7", lw=0.8, zorder=1)
                ax.scatter(trials, before, s=14, color="tab:blue", label="Firefly (before BFGS)", zorder=2)
                ax.scatter(trials, after, s=14, color="tab:orange", label="Firefly + BFGS (same trial)", zorder=3)
            ax.axhline(ZERO_AT, color="0.5", lw=0.6, ls=":")
            ax.set(yscale="log", title=f"{fn} ({device})", xlabel="trial", ylabel="error f - f* (0 drawn at 1e-9)")
            ax.legend(fontsize=7)
    fig.suptitle("Per trial: the swarm's best before BFGS and after it, from the same run")
    return _save(fig, path, "Each trial's error before BFGS (blue) joined to its error after BFGS (orange), both from "
                            "the same run; errors below 1e-8 are reported as 0 and drawn at 1e-9.")


def time_modes(exp, results, folder):
    fns = list(dict.fromkeys(c.tags["function"] for _, c, _ in results))
    fig, axes = plt.subplots(1, len(fns), figsize=(4.5 * len(fns), 3.8), squeeze=False)
    for ax, fn in zip(axes[0], fns):
        data = [(c.tags["mode"], [1000 * (r["wall_time"] - r["setup_time"]) for r in a["runs"]])
                for _, c, a in results if c.tags["function"] == fn]
        ax.boxplot([d for _, d in data], tick_labels=[m for m, _ in data])
        ax.set(title=fn, ylabel="ms per run")
    fig.suptitle("Execution time per run: CPU vs GPU vs GPU with CPU fitness")
    paths = [_save(fig, folder / f"{exp.name}_distribution.png",
                   "Time per run by mode (CPU, GPU, GPU with CPU fitness), one box per mode and function.")]
    sphere = {c.tags["mode"]: a for _, c, a in results if c.tags["function"] == "sphere"}
    if "cpu" in sphere and "gpu" in sphere:
        fig, ax = plt.subplots(figsize=(6, 3.8))
        for mode in ("cpu", "gpu"):
            ax.scatter(range(1, sphere[mode]["n"] + 1), [max(r["best_f"], 1e-17) for r in sphere[mode]["runs"]], label=mode, s=14)
        ax.set(yscale="log", xlabel="run", ylabel="final f", title="Sphere: solution quality, CPU vs GPU")
        ax.legend()
        paths.append(_save(fig, folder / f"{exp.name}_quality_cpu_vs_gpu.png",
                           "Sphere: final value of each run on the CPU and on the GPU."))
    return paths


def phases(exp, results, folder):
    names = ("mutation", "evaluation", "selection")
    labels, stacks = [], {p: [] for p in names}
    for row, config, agg in results:
        labels.append(f"{config.tags['mu']}\n{config.device}")
        for p in names:
            stacks[p].append(np.mean([r["extra"]["phases"].get(p, 0.0) for r in agg["runs"]]))
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(labels)), 4))
    bottom = np.zeros(len(labels))
    for p in names:
        ax.bar(labels, stacks[p], bottom=bottom, label=p)
        bottom += np.asarray(stacks[p])
    ax.set(ylabel="seconds", title="Time per phase (f5)")
    ax.legend()
    return [_save(fig, folder / f"{exp.name}_per_phase.png",
                  "Time per phase (mutation, evaluation, selection) of f5 per population size and device, stacked.")]


def otsu(exp, results, folder):
    from ..problems.otsu import OtsuThresholding

    paths = []
    first = next(((r, c, a) for r, c, a in results if c.tags["size"] == min(x["tags"]["size"] for x in exp.rows)), None)
    if first is None:
        return paths
    _, config, agg = first
    problem = OtsuThresholding(**config.problem_params)
    best = min(agg["runs"], key=lambda r: r["best_f"])
    import torch

    labels = problem.segment(torch.tensor(best["best_x"]))
    fig, axes = plt.subplots(1, 2, figsize=(9, 4.6))
    axes[0].imshow(problem.image, cmap="gray")
    axes[0].set(title=f"input ({problem.image.shape[0]} px)", xticks=[], yticks=[])
    axes[1].imshow(labels, cmap="gray")
    axes[1].set(title=f"thresholded at {int(best['best_x'][0])}", xticks=[], yticks=[])
    paths.append(_save(fig, folder / f"{exp.name}_thresholded.png",
                       "The input image and the image thresholded at the best threshold of our runs."))
    fig, ax = plt.subplots(figsize=(6, 3.8))
    for _, c, a in results:
        if c.tags["size"] == config.tags["size"]:
            run = a["runs"][0]
            ax.plot(run["history"]["iter"], [-v for v in run["history"]["f"]], label=c.device)
    ax.set(xlabel="iteration", ylabel="best between-class variance", title=f"Convergence, {config.tags['size']} px")
    ax.ticklabel_format(axis="y", useOffset=False, style="plain")
    ax.legend()
    paths.append(_save(fig, folder / f"{exp.name}_convergence.png",
                       "Best between-class variance by iteration, one run per device."))
    return paths


FIGURES = {"timing": time_vs_size, "snapshots": snapshots, "hybrid": hybrid_trials, "time_modes": time_modes,
           "phases": phases, "otsu": otsu}
