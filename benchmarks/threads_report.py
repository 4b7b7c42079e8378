"""A markdown table and a plot of benchmarks/threads.py's JSON: time per iteration at each
thread count and at the default, relative to the fastest fixed count of the row.

    python3 benchmarks/threads_report.py benchmarks/results/threads/xeon64.json \
        [--png docs/img/cpu-threads-xeon64.png] > table.md
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def load(path: str) -> dict:
    return json.loads(Path(path).read_text())


def table(report: dict) -> str:
    """One row per configuration: microseconds per iteration at each count, the default's
    count and time, and the default over the fastest fixed count."""
    counts = [k for k in report["rows"][0]["best"] if k != "default"]
    m = report["machine"]
    lines = [f"{m['cpu']}, {m['cores']} cores; {report['date']}; commit {report['commit']}; "
             f"`{report['command']}`; {report['rounds']} round(s), best sample per setting.", "",
             "| run (pop x dim x runs) | " + " | ".join(counts) + " | default: threads | default | "
             "default / fastest |", "|---" * (len(counts) + 4) + "|"]
    for r in report["rows"]:
        best = r["best"]
        fastest = min(v for k, v in best.items() if k != "default")
        cells = [(f"**{best[k] * 1e6:,.0f}**" if best[k] == fastest else f"{best[k] * 1e6:,.0f}") for k in counts]
        lines.append(f"| {r['algorithm']} {r['pop']:,} x {r['dim']} x {r['runs']} ({r['size']}) | " + " | ".join(cells)
                     + f" | {r['default_threads']} | {best['default'] * 1e6:,.0f} | {best['default'] / fastest:.2f} |")
    return "\n".join(lines)


def plot(report: dict, png: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report["rows"]
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.5), sharey=True)
    for ax, runs in zip(axes, (1, 30)):
        for r in (r for r in rows if r["runs"] == runs):
            best = r["best"]
            counts = [int(k) for k in best if k != "default"]
            fastest = min(best[str(c)] for c in counts)
            line, = ax.plot(counts, [best[str(c)] / fastest for c in counts], marker=".", alpha=0.8,
                            label=f"{r['algorithm']} {r['pop']:,} x {r['dim']}")
            ax.plot([r["default_threads"]], [best["default"] / fastest], marker="*", markersize=13,
                    color=line.get_color(), markeredgecolor="black")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.axhline(1.2, color="grey", linestyle="--", linewidth=0.8)
        ax.set_title(f"{runs} run{'s' if runs > 1 else ''} per run set")
        ax.set_xlabel("threads (star: the default's choice and time)")
        ax.legend(fontsize=6.5, ncol=2)
    axes[0].set_ylabel("time per iteration / fastest fixed count")
    m = report["machine"]
    fig.suptitle(f"Native CPU kernels: threads vs time per iteration ({m['cpu']}, {m['cores']} cores, "
                 f"{report['date'][:10]}, commit {report['commit']})", fontsize=10)
    fig.tight_layout()
    Path(png).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json")
    ap.add_argument("--png", default=None)
    args = ap.parse_args()
    report = load(args.json)
    print(table(report))
    if args.png:
        plot(report, args.png)


if __name__ == "__main__":
    main()
