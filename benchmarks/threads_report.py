"""A markdown table and a plot of benchmarks/threads.py's JSON: time per iteration at each
thread count and at the default, relative to the fastest fixed count of the row.

    python3 benchmarks/threads_report.py benchmarks/results/threads/xeon64.json \
        [--png docs/img/cpu-threads-xeon64.png] > table.md
    PYTHONPATH=src python3 benchmarks/threads_report.py A.json B.json --rule-cores 16 [--png ...]

Several files of one machine are merged row by row: a setting's time is its best sample in any
of them. With --rule-cores N the default column is the rule as it is now (`engine.threads`)
on N cores: its count from the row's work and parts, and its time the best sample of every
setting that ran that count (the fixed count itself, the same kernels and thread settings, and
the measured defaults, `--caps` settings included, that chose it).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def load(path: str) -> dict:
    return json.loads(Path(path).read_text())


def merge(reports: list[dict], rule_cores: int | None = None) -> dict:
    """One report of the rows of `reports` (one machine): samples pooled per setting; with
    `rule_cores`, "default" is what today's rule runs there (see the module's docstring)."""
    rows: dict[tuple, dict] = {}
    for report in reports:
        for r in report["rows"]:
            row = rows.setdefault((r["algorithm"], r["size"], r["runs"]), {**r, "seconds": {}, "ran": {}})
            for setting, samples in r["seconds"].items():
                row["seconds"].setdefault(setting, []).extend(samples)
                count = (r["default_threads"] if setting == "default" else r.get("caps_threads", {}).get(setting)
                         if setting.startswith("cap ") else int(setting))
                row["ran"].setdefault(count, []).extend(samples)
    for row in rows.values():
        counts = sorted((k for k in row["seconds"] if k.isdigit()), key=int)
        row["best"] = {k: min(row["seconds"][k]) for k in counts}
        if rule_cores is None:
            row["best"]["default"] = min(row["seconds"]["default"])
            continue
        from heuriscale.engine.kernels.cpu_common import PARALLEL_MIN
        from heuriscale.engine.threads import rule_cap, threads_for_work

        row["default_threads"], _ = threads_for_work(row["work"], row["parts"], rule_cap(rule_cores), PARALLEL_MIN)
        row["best"]["default"] = min(row["ran"][row["default_threads"]])
    first = reports[0]
    return {**first, "rows": list(rows.values()), "merged": [(r["commit"], r["date"], r["command"]) for r in reports],
            "rounds": max(len(v) for row in rows.values() for v in row["seconds"].values())}


def table(report: dict) -> str:
    """One row per configuration: microseconds per iteration at each count, the default's
    count and time, and the default over the fastest fixed count."""
    counts = sorted({k for r in report["rows"] for k in r["best"] if k != "default"}, key=int)
    m = report["machine"]
    sources = report.get("merged") or [(report["commit"], report["date"], report["command"])]
    lines = [f"{m['cpu']}, {m['cores']} cores; " + "; ".join(f"{d}, commit {c}: `{cmd}`" for c, d, cmd in sources)
             + f"; up to {report['rounds']} sample(s) per setting, best shown.", "",
             "| run (pop x dim x runs) | " + " | ".join(counts) + " | default: threads | default | "
             "default / fastest |", "|---" * (len(counts) + 4) + "|"]
    for r in report["rows"]:
        best = r["best"]
        fastest = min(v for k, v in best.items() if k != "default")
        cells = [("" if k not in best else f"**{best[k] * 1e6:,.0f}**" if best[k] == fastest else
                  f"{best[k] * 1e6:,.0f}") + _stall(r["seconds"].get(k, [])) for k in counts]
        lines.append(f"| {r['algorithm']} {r['pop']:,} x {r['dim']} x {r['runs']} ({r['size']}) | " + " | ".join(cells)
                     + f" | {r['default_threads']} | {best['default'] * 1e6:,.0f} | {best['default'] / fastest:.2f} |")
    return "\n".join(lines)


def _stall(samples: list[float]) -> str:
    """A sample over 3x its setting's best, shown beside it: one stall can hide behind a best."""
    return f" (one: {max(samples) * 1e6:,.0f})" if len(samples) > 1 and max(samples) > 3 * min(samples) else ""


def plot(report: dict, png: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report["rows"]
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.5), sharey=True)
    for ax, runs in zip(axes, (1, 30)):
        for r in (r for r in rows if r["runs"] == runs):
            best = r["best"]
            counts = sorted(int(k) for k in best if k != "default")
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
    commits = ", ".join(c for c, _, _ in report.get("merged") or [(report["commit"], None, None)])
    fig.suptitle(f"Native CPU kernels: threads vs time per iteration ({m['cpu']}, {m['cores']} cores, "
                 f"{report['date'][:10]}, commit {commits})", fontsize=10)
    fig.tight_layout()
    Path(png).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", nargs="+", help="threads.py outputs of one machine (merged row by row)")
    ap.add_argument("--rule-cores", type=int, default=None, help="the default column: today's rule on this many "
                    "cores (needs the rows' work and parts, and heuriscale on the path)")
    ap.add_argument("--png", default=None)
    args = ap.parse_args()
    report = merge([load(p) for p in args.json], args.rule_cores)
    print(table(report))
    if args.png:
        plot(report, args.png)


if __name__ == "__main__":
    main()
