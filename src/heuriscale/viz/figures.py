"""The papers' figures drawn from our stored runs (matplotlib, PNG)."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def for_experiment(exp, results, folder: Path) -> list[Path]:
    """Figures of one experiment (see `FIGURES`); an empty list when it has none."""
    draw = FIGURES.get(exp.kind)
    return draw(exp, results, folder) if draw else []


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


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
    return [_save(fig, folder / f"{exp.name}_time_vs_particles.png")]


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
    return _save(fig, path)


def _maps(shots, config, path):
    """Paper 004 Fig. 5: genome map (individuals x genes, colour = value) and fitness map."""
    its = sorted(shots, key=int)
    fig, axes = plt.subplots(2, len(its), figsize=(3.2 * len(its), 6.4), squeeze=False)
    for col, it in enumerate(its):
        x, f = np.asarray(shots[it]["x"]), np.asarray(shots[it]["f"])
        side = int(math.ceil(math.sqrt(len(f))))
        axes[0][col].imshow(x[np.argsort(f)][: min(len(f), 256)], aspect="auto", cmap="viridis", interpolation="nearest")
        axes[0][col].set(title=f"genomes, gen {it}", xlabel="gene", ylabel="individual (by fitness)")
        grid = np.full(side * side, np.nan)
        grid[: len(f)] = f
        axes[1][col].imshow(grid.reshape(side, side), cmap="gray", interpolation="nearest")
        axes[1][col].set(title=f"fitness, gen {it}", xticks=[], yticks=[])
    fig.suptitle(f"Genome- and fitness-convergence, {config.problem}, mu = {config.algorithm_params.get('pop_size')}")
    return _save(fig, path)


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
    return [_save(fig, folder / f"{exp.name}_by_generation.png")]


def hybrid_trials(exp, results, folder):
    fns = list(dict.fromkeys(c.tags["function"] for _, c, _ in results))
    devices = list(dict.fromkeys(c.device for _, c, _ in results))
    fig, axes = plt.subplots(len(devices), len(fns), figsize=(4.5 * len(fns), 3.6 * len(devices)), squeeze=False)
    for i, device in enumerate(devices):
        for j, fn in enumerate(fns):
            ax = axes[i][j]
            for _, c, a in results:
                if c.device == device and c.tags["function"] == fn:
                    f = [max(r["best_f"], 1e-17) for r in a["runs"]]
                    ax.scatter(range(1, len(f) + 1), f, s=14, label=c.tags["method"])
            ax.set(yscale="log", title=f"{fn} ({device})", xlabel="trial", ylabel="final f (floor 1e-17)")
            ax.legend(fontsize=8)
    fig.suptitle("Final f per trial: Firefly vs Firefly + BFGS")
    return [_save(fig, folder / f"{exp.name}_per_trial.png")]


def time_modes(exp, results, folder):
    fns = list(dict.fromkeys(c.tags["function"] for _, c, _ in results))
    fig, axes = plt.subplots(1, len(fns), figsize=(4.5 * len(fns), 3.8), squeeze=False)
    for ax, fn in zip(axes[0], fns):
        data = [(c.tags["mode"], [1000 * (r["wall_time"] - r["setup_time"]) for r in a["runs"]])
                for _, c, a in results if c.tags["function"] == fn]
        ax.boxplot([d for _, d in data], tick_labels=[m for m, _ in data])
        ax.set(title=fn, ylabel="ms per run")
    fig.suptitle("Execution time per run: CPU vs GPU vs GPU with CPU fitness")
    paths = [_save(fig, folder / f"{exp.name}_distribution.png")]
    sphere = {c.tags["mode"]: a for _, c, a in results if c.tags["function"] == "sphere"}
    if "cpu" in sphere and "gpu" in sphere:
        fig, ax = plt.subplots(figsize=(6, 3.8))
        for mode in ("cpu", "gpu"):
            ax.scatter(range(1, sphere[mode]["n"] + 1), [max(r["best_f"], 1e-17) for r in sphere[mode]["runs"]], label=mode, s=14)
        ax.set(yscale="log", xlabel="run", ylabel="final f", title="Sphere: solution quality, CPU vs GPU")
        ax.legend()
        paths.append(_save(fig, folder / f"{exp.name}_quality_cpu_vs_gpu.png"))
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
    return [_save(fig, folder / f"{exp.name}_per_phase.png")]


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
    paths.append(_save(fig, folder / f"{exp.name}_thresholded.png"))
    fig, ax = plt.subplots(figsize=(6, 3.8))
    for _, c, a in results:
        if c.tags["size"] == config.tags["size"]:
            run = a["runs"][0]
            ax.plot(run["history"]["iter"], [-v for v in run["history"]["f"]], label=c.device)
    ax.set(xlabel="iteration", ylabel="best between-class variance", title=f"Convergence, {config.tags['size']} px")
    ax.ticklabel_format(axis="y", useOffset=False, style="plain")
    ax.legend()
    paths.append(_save(fig, folder / f"{exp.name}_convergence.png"))
    return paths


FIGURES = {"timing": time_vs_size, "snapshots": snapshots, "hybrid": hybrid_trials, "time_modes": time_modes,
           "phases": phases, "otsu": otsu}
