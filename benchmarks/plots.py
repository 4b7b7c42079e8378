"""The figures of docs/benchmarks.md, drawn from the raw results committed under benchmarks/results/.

    PYTHONPATH=src python3 benchmarks/plots.py [--out docs/img]

- speed_vs_evox.png: time per iteration (generation) on one GPU, ours against EvoX 1.4, per
  configuration (benchmarks/results/gpu_speed/speed_h100_9ae28a1.json for PSO,
  benchmarks/results/baselines/speed_h100/baselines.json for DE and L-SHADE / SHADE).
- scaling_gpus.png: speed-up of the CEC 2022 campaign and of APO's strong scaling, and PSO's
  weak-scaling efficiency, on 1, 2 and 4 GPUs (benchmarks/results/scaling/scaling_h200x4.json).

Only matplotlib and the JSON files are needed (no GPU, no heuriscale import).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: no display on CI or the device machines
import matplotlib.pyplot as plt  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
SPEED = RESULTS / "gpu_speed" / "speed_h100_9ae28a1.json"
BASELINES = RESULTS / "baselines" / "speed_h100" / "baselines.json"
SCALING = RESULTS / "scaling" / "scaling_h200x4.json"

OURS, EVOX, EVOX_COMPILED = "#1f77b4", "#d62728", "#ff9896"


def _micro(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:,.2f} ms"


def evox_rows() -> list[dict]:
    """One row per configuration: ours (the path `auto` picks) and EvoX's times, in seconds."""
    rows = []
    speed = {r["key"]: r for r in json.loads(SPEED.read_text())["results"]}
    for key, label in (("pso-paper", "PSO 65,536 x 2\n(paper 001)"), ("pso-1m", "PSO 1,000,000 x 30")):
        row = speed[key]
        rows.append({"label": label, "ours": row["fast"]["per_iter"], "evox": row["evox"]["per_iter"], "evox_compiled": None})
    base = {r["key"]: r for r in json.loads(BASELINES.read_text())["rows"]}
    for size, shown in (("100x10", "100 x 10"), ("1000x100", "1,000 x 100")):
        rows.append({"label": f"DE {shown}", "ours": base[f"a/{size}/ours-de"]["per_gen_s"],
                     "evox": base[f"a/{size}/evox-de"]["per_gen_s"],
                     "evox_compiled": base[f"a/{size}/evox-de-compiled"]["per_gen_s"]})
        rows.append({"label": f"L-SHADE {shown}\n(EvoX: SHADE)", "ours": base[f"a/{size}/ours-lshade"]["per_gen_s"],
                     "evox": base[f"a/{size}/evox-shade"]["per_gen_s"], "evox_compiled": None})
    return rows


def plot_evox(out: Path) -> Path:
    rows = evox_rows()
    fig, ax = plt.subplots(figsize=(9, 6))
    height = 0.26
    for i, row in enumerate(rows):
        y = len(rows) - 1 - i
        bars = [("heuriscale (the path auto picks)", row["ours"], OURS, height),
                ("EvoX 1.4, eager", row["evox"], EVOX, 0.0),
                ("EvoX 1.4, step compiled", row["evox_compiled"], EVOX_COMPILED, -height)]
        for name, seconds, colour, offset in bars:
            if seconds is None:
                continue
            ax.barh(y + offset, seconds, height=height, color=colour, label=name)
            ax.text(seconds * 1.2, y + offset, _micro(seconds), va="center", fontsize=8)
    labels = [f"{r['label']}\nEvoX / ours: {r['evox'] / r['ours']:,.0f}x" for r in rows]
    ax.set_yticks(range(len(rows)), list(reversed(labels)), fontsize=8.5)
    ax.set_xscale("log")
    ax.set_xlim(1e-6, 3)
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.set_xlabel("seconds per iteration (generation), log scale: shorter is faster")
    ax.set_title("One GPU (H100), one run: heuriscale against EvoX 1.4", fontsize=11)
    handles, names = ax.get_legend_handles_labels()
    unique = dict(zip(names, handles))
    ax.legend(unique.values(), unique.keys(), loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=3, fontsize=8)
    ax.grid(axis="x", which="major", alpha=0.3)
    fig.tight_layout()
    path = out / "speed_vs_evox.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def scaling_series() -> dict[str, dict[int, float]]:
    """Speed-up (campaign, strong) and efficiency (weak) per number of GPUs; repeated campaigns: the median."""
    runs = [r for r in json.loads(SCALING.read_text())["runs"] if not r.get("warm_up_only")]
    campaign: dict[int, list[float]] = {}
    for r in runs:
        if r["what"] == "campaign":
            campaign.setdefault(r["world"], []).append(r["wall_s"])
    campaign_s = {n: statistics.median(v) for n, v in campaign.items()}
    per_iter = {(r["what"], r["world"]): r["s_per_iter"] for r in runs if r["what"] in ("weak", "strong")}
    worlds = sorted(campaign_s)
    return {
        "campaign": {n: campaign_s[1] / campaign_s[n] for n in worlds},
        "strong": {n: per_iter[("strong", 1)] / per_iter[("strong", n)] for n in worlds},
        "weak": {n: per_iter[("weak", 1)] / per_iter[("weak", n)] for n in worlds},
    }


def plot_scaling(out: Path) -> Path:
    series = scaling_series()
    worlds = sorted(series["campaign"])
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
    left.plot(worlds, worlds, color="#999999", linestyle="--", label="ideal")
    for key, label, colour, shift in (("campaign", "CEC 2022 campaign, 2,160 runs", OURS, (6, 2)),
                                      ("strong", "APO 40,000 x 1,000 (strong)", "#2ca02c", (6, -14))):
        values = [series[key][n] for n in worlds]
        left.plot(worlds, values, marker="o", color=colour, label=label)
        for n, v in zip(worlds[1:], values[1:]):
            left.annotate(f"{v:.2f}x", (n, v), textcoords="offset points", xytext=shift, fontsize=8, color=colour)
    left.set_xticks(worlds)
    left.set_xlim(0.8, 4.6)
    left.set_xlabel("GPUs (H200)")
    left.set_ylabel("speed-up over one GPU")
    left.set_title("Speed-up", fontsize=10)
    left.legend(fontsize=8, loc="upper left")
    left.grid(alpha=0.3)
    weak = [100 * series["weak"][n] for n in worlds]
    right.bar([str(n) for n in worlds], weak, color="#9467bd")
    for i, v in enumerate(weak):
        right.text(i, v + 1, f"{v:.1f}%", ha="center", fontsize=9)
    right.set_ylim(0, 110)
    right.set_xlabel("GPUs (H200)")
    right.set_ylabel("efficiency (%): time per iteration, 1 GPU / N GPUs")
    right.set_title("Weak scaling: PSO 1,000,000 x 30 per GPU", fontsize=10)
    right.grid(axis="y", alpha=0.3)
    fig.suptitle("Scale-out over the GPUs of one host (torchrun, one process a GPU)", fontsize=11)
    fig.tight_layout()
    path = out / "scaling_gpus.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "docs" / "img")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for path in (plot_evox(args.out), plot_scaling(args.out)):
        print(path)


if __name__ == "__main__":
    main()
