"""Rebuild tests/data/cec2017_reference.json from the official CEC 2017 C code.

    python tests/data/cec2017_reference/build.py OFFICIAL_DIR [--out PATH]

OFFICIAL_DIR holds the competition's `cec17_test_func.cpp` and its `input_data/` (see
README.md for where they come from). The script draws the points (NumPy, fixed seed),
compiles driver.cpp with the official file by g++ in a temporary folder, runs it inside
OFFICIAL_DIR and writes the points with the official values. Needs numpy and g++ only.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SEED = 2017
CFLAGS = ["-O2", "-std=c++11", "-ffp-contract=off"]  # -w too, to hush the official code's warnings
COMPONENTS = {21: 3, 22: 3, 23: 4, 24: 4, 25: 5, 26: 5, 27: 6, 28: 6, 29: 3, 30: 3}
D2 = set(range(1, 11)) | set(range(21, 29))  # the official data also has D = 2 for these
D20 = D2 | {20}  # ... and D = 20 for these


def dims(function: int) -> list[int]:
    return sorted([10, 30, 50, 100] + [2] * (function in D2) + [20] * (function in D20))


def numbers(path: Path) -> list[float]:
    return [float(v) for v in path.read_text().split()]


def points(official: Path, function: int, dim: int) -> tuple[list[str], np.ndarray]:
    """(labels, points): uniform points in the box, the optimum and points near it, points outside."""
    rng = np.random.default_rng([SEED, function, dim])
    data = official / "input_data"
    if function < 20:
        shifts = np.array(numbers(data / f"shift_data_{function}.txt")[:dim])[None]
    else:
        lines = (data / f"shift_data_{function}.txt").read_text().splitlines()
        shifts = np.array([[float(v) for v in line.split()[:dim]] for line in lines[: COMPONENTS.get(function, 1)]])
    o = shifts[0]
    count = 5 if dim == 100 else 8
    rows = [("uniform", r) for r in np.round(rng.uniform(-100, 100, (count, dim)), 6)]
    rows += [("shift", o), ("near-1e-6", o + 1e-6 * rng.standard_normal(dim)), ("near-0.1", o + 0.1 * rng.standard_normal(dim))]
    if function == 9:  # Levy's minimum: z = M (x - o) = 1
        m = np.array(numbers(data / f"M_9_D{dim}.txt")[: dim * dim]).reshape(dim, dim)
        rows.append(("minimiser", o + np.linalg.solve(m, np.ones(dim))))
    if function >= 21:  # the second component's optimum: its weight is the C code's INF
        rows.append(("shift-2", shifts[1]))
    rows.append(("outside", np.round(rng.uniform(-150, 150, dim), 6)))
    rows.append(("far", np.round(rng.uniform(-1e4, 1e4, dim), 3)))  # every composition weight underflows to 0
    return [label for label, _ in rows], np.vstack([r for _, r in rows])


def compare_with_opfunu(official: Path) -> str:
    """Whether the installed opfunu's data_2017 holds the official input_data, number for number."""
    spec = importlib.util.find_spec("opfunu")
    if spec is None or not spec.submodule_search_locations:
        return "opfunu is not installed: its data was not compared"
    theirs = Path(list(spec.submodule_search_locations)[0]) / "cec_based" / "data_2017"
    ours = official / "input_data"
    names = sorted(p.name for p in ours.iterdir())
    if names != sorted(p.name for p in theirs.iterdir()):
        return f"opfunu's {theirs} and {ours} hold different files"
    same_bytes = sum((ours / n).read_bytes() == (theirs / n).read_bytes() for n in names)
    differ = [n for n in names if (ours / n).read_text().split() != (theirs / n).read_text().split()]
    if differ:
        return f"opfunu's data differs from the official input_data in {differ}"
    return (f"opfunu's data_2017 equals the official input_data: {len(names)} files, the same numbers "
            f"({same_bytes} byte-identical, the others differ in line ends only)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("official", type=Path, help="folder with cec17_test_func.cpp and input_data/")
    parser.add_argument("--out", type=Path, default=HERE.parent / "cec2017_reference.json")
    args = parser.parse_args()
    official = args.official.resolve()
    print(compare_with_opfunu(official))
    cases = [(f, d, *points(official, f, d)) for f in range(1, 31) for d in dims(f)]
    stdin = "".join(
        f"{f} {d} {len(x)}\n" + "".join(" ".join(repr(float(v)) for v in row) + "\n" for row in x) for f, d, _, x in cases
    )
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "driver"
        subprocess.run(["g++", *CFLAGS, "-w", "-o", str(exe), str(HERE / "driver.cpp"),
                        str(official / "cec17_test_func.cpp"), "-lm"], check=True)
        out = subprocess.run([str(exe)], input=stdin, cwd=official, capture_output=True, text=True, check=True)
    results = [line.split()[1:] for line in out.stdout.splitlines() if line.startswith("result ")]
    assert len(results) == len(cases)
    rows = []
    for (f, d, labels, x), line in zip(cases, results):
        assert (int(line[0]), int(line[1])) == (f, d)
        values = [float(v) for v in line[2:]]
        keep = [i for i, v in enumerate(values) if np.isfinite(v)]  # strict JSON: drop overflowed values
        rows.append({"function": f, "dim": d, "rows": [labels[i] for i in keep],
                     "x": [[float(v) for v in x[i]] for i in keep], "f": [values[i] for i in keep]})
    about = (
        "Reference values of the CEC 2017 bound-constrained suite (F1-F30; D = 10, 30, 50, 100, and D = 2, 20 "
        "where the official data has them), computed in float64 by the official C code cec17_test_func.cpp "
        f"(g++ {' '.join(CFLAGS)}) with its input_data, by tests/data/cec2017_reference/build.py, seed {SEED}. "
        "Rows (labelled in 'rows'): uniform = points in [-100,100]^D (8; 5 at D = 100), shift = o, "
        "near-1e-6 = o + 1e-6 N(0,1), near-0.1 = o + 0.1 N(0,1), minimiser = o + M^-1 1 (F9 only), "
        "shift-2 = the second component's shift (F21-F30), outside = uniform in [-150,150]^D, "
        "far = uniform in [-1e4,1e4]^D (left out where the C value overflows)."
    )
    args.out.write_text(json.dumps({"about": about, "cases": rows}, separators=(",", ":")) + "\n")
    print(f"{args.out}: {len(rows)} cases, {sum(len(r['f']) for r in rows)} points, {args.out.stat().st_size} bytes")


if __name__ == "__main__":
    main()
