"""jSO (and L-SHADE beside it) on CEC 2017 against the mean errors jSO's authors published.

Runs the CEC 2017 protocol with `heuriscale.studies.compare` (51 runs, 10,000 x D evaluations,
F1 and F3-F30; F2 is left out of our suite as by the organisers), then writes, per function,
our median and mean ± std of the final error beside the published ones
(benchmarks/data/jso_cec2017_published.csv) and whether the means differ: |m1 - m2| above
2 standard errors of the difference (sqrt(s1²/51 + s2²/51)), the most a summary of their runs
allows (their raw runs are not published). Errors below 1e-8 count as 0 on both sides (the
CEC rule their table applies too).

    PYTHONPATH=src python3 benchmarks/validate_shade.py --dims 10 --device cuda --out scratch/validate_shade
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import time
from pathlib import Path

from heuriscale.studies.compare import compare

PUBLISHED = Path(__file__).with_name("data") / "jso_cec2017_published.csv"


def published() -> dict[tuple[int, int], dict]:
    rows = [line for line in PUBLISHED.read_text().splitlines() if not line.startswith("#")]
    return {(int(r["function"]), int(r["dim"])): {k: float(r[k]) for k in ("median", "mean", "std")}
            for r in csv.DictReader(rows)}


def ours(runs_csv: Path) -> dict[tuple[str, int, int], list[float]]:
    errors: dict = {}
    with runs_csv.open() as fh:
        for row in csv.DictReader(fh):
            f = int(row["function"].rsplit("-f", 1)[1])
            errors.setdefault((row["algorithm"], f, int(row["dim"])), []).append(float(row["error"]))
    return errors


def table(errors: dict, algorithms: list[str], dims: list[int]) -> tuple[str, list[dict]]:
    paper = published()
    lines, rows = [], []
    for d in dims:
        lines += [f"\n### D = {d}\n", "| function | jSO published median | mean ± std | "
                  + " | ".join(f"{a} median | mean ± std" for a in algorithms) + " | jso vs published |",
                  "|---|---|---|" + "---|---|" * len(algorithms) + "---|"]
        for f in sorted({k[1] for k in errors if k[2] == d}):
            theirs = paper[f, d]
            cells, row = [], {"function": f, "dim": d, "published": theirs}
            for a in algorithms:
                e = errors.get((a, f, d), [])
                mean, std = statistics.fmean(e), statistics.pstdev(e)
                cells.append(f"{statistics.median(e):.4g} | {mean:.4g} ± {std:.3g}")
                row[a] = {"median": statistics.median(e), "mean": mean, "std": std, "runs": len(e)}
            verdict = ""
            if "jso" in row:
                j = row["jso"]
                se = math.sqrt(j["std"] ** 2 / j["runs"] + theirs["std"] ** 2 / 51)
                gap = j["mean"] - theirs["mean"]
                verdict = "same" if abs(gap) <= 2 * se or abs(gap) < 1e-8 else ("lower" if gap < 0 else "higher")
                row["verdict"] = verdict
            lines.append(f"| F{f} | {theirs['median']:.4g} | {theirs['mean']:.4g} ± {theirs['std']:.3g} | "
                         + " | ".join(cells) + f" | {verdict} |")
            rows.append(row)
    return "\n".join(lines) + "\n", rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithms", default="jso,lshade")
    parser.add_argument("--dims", default="10")
    parser.add_argument("--runs", type=int, default=51)
    parser.add_argument("--functions", default=None, help="e.g. f1,f3 (default: all)")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default="float64")
    parser.add_argument("--out", default="scratch/validate_shade")
    args = parser.parse_args()
    algorithms, dims = args.algorithms.split(","), [int(d) for d in args.dims.split(",")]
    started = time.perf_counter()
    written = compare(algorithms, "cec2017", dims, runs=args.runs, device=args.device, dtype=args.dtype,
                      out=args.out, functions=None if args.functions is None else args.functions.split(","),
                      formats=("md", "csv"))
    seconds = time.perf_counter() - started
    text, rows = table(ours(written["csv"]), algorithms, dims)
    out = Path(args.out)
    (out / "validation.md").write_text(text)
    (out / "validation.json").write_text(json.dumps({"seconds": seconds, "rows": rows}, indent=1))
    print(text)
    print(f"{seconds:.0f} s; written to {out / 'validation.md'}")


if __name__ == "__main__":
    main()
