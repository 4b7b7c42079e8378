"""Registers, stack, spills and barriers of a fused algorithm's Triton kernels, compiled for an H100 here.

A kernel that keeps too much in registers spills to local memory, and its time can grow
tenfold (APO's move kernel kept 12.7 KB of stack a thread under Triton 3.6 before
its mask search was rewritten). This needs no GPU: one step of the algorithm runs in Triton's
interpreter while its launches are recorded (tests/triton_aot.py), each distinct launch is
compiled for sm_90, and ptxas reports what it used (`ptxas -v`); the PTX's barriers
(`bar.sync`: each block-wide reduction, and each exchange of values between threads through
shared memory, waits at one or more) are counted. Register use depends on the
Triton version: to see the device machine's, put that Triton first on the path, e.g.

    pip install --no-deps --target /tmp/triton36 triton==3.6.0
    PYTHONPATH=/tmp/triton36:src:tests python3 benchmarks/kernel_resources.py apo --problem bent-cigar \
        --dim 1000 --record-path src:tests
    PYTHONPATH=src:tests python3 benchmarks/kernel_resources.py fep --problem rastrigin --dim 32 --pop 64

`--record-path` is the PYTHONPATH of the child process that records the launches in Triton's
interpreter: above, the installed Triton records and 3.6 compiles (3.6's interpreter stops on
APO's renewal kernel: "only 0-dimensional arrays can be converted to Python scalars").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def workload() -> None:
    """One fused step of the configuration in $KERNEL_RESOURCES (interpreted; launches recorded)."""
    import heuriscale as hs

    cfg = json.loads(os.environ["KERNEL_RESOURCES"])
    problem = hs.get_problem(cfg["problem"], dim=cfg["dim"])
    algo = hs.get_algorithm(cfg["algorithm"], pop_size=cfg["pop"])
    runner = hs.Runner(problem, algo.with_horizon(20), runs=cfg["runs"], seed=0, device="cpu", dtype=cfg["dtype"],
                       engine="fused")
    chained = getattr(runner._kernels, "chained", None)
    if chained is None:
        runner.step(1)
    else:  # a chain's first launch, a later one (the iteration's own) and its settling (cuda_chain)
        with chained():
            runner.step(2)


def ptxas_paths(explicit: str | None) -> list[str]:
    """The ptxas to try, in order: the one given, else Triton's bundled ones (a newer Triton
    writes PTX that only its `ptxas-blackwell` reads)."""
    import triton

    if explicit:
        return [explicit]
    tools = Path(triton.__file__).parent / "backends" / "nvidia" / "bin"
    return [str(tools / name) for name in ("ptxas", "ptxas-blackwell") if (tools / name).exists()]


def ptxas_report(ptxas: list[str], ptx: str) -> tuple[str, str]:
    """(ptxas -v's report on the PTX file, the ptxas that gave it)."""
    for path in ptxas:
        report = subprocess.run([path, "-v", "--gpu-name=sm_90a", ptx, "-o", os.devnull], capture_output=True,
                                text=True).stderr
        if "Unsupported .version" not in report:
            break
    return report, path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("algorithm")
    ap.add_argument("--problem", default="rastrigin")
    ap.add_argument("--dim", type=int, default=30)
    ap.add_argument("--pop", type=int, default=6)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--ptxas", default=None, help="ptxas to report with (default: the one bundled with Triton)")
    ap.add_argument("--record-path", default=None, help="PYTHONPATH of the recording child (default: this one)")
    args = ap.parse_args()
    sys.path.insert(0, str(HERE.parent / "tests"))
    import triton
    import triton_aot
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    cfg = dict(algorithm=args.algorithm, problem=args.problem, dim=args.dim, pop=args.pop, runs=args.runs,
               dtype=args.dtype)
    env = dict(os.environ, TRITON_INTERPRET="1", KERNEL_RESOURCES=json.dumps(cfg),
               PYTHONPATH=os.pathsep.join([str(HERE), args.record_path or os.environ.get("PYTHONPATH", "")]))
    code = "import json, triton_aot; print(json.dumps(triton_aot.record('kernel_resources:workload')))"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"recording the launches failed:\n{proc.stderr[-3000:]}")
    launches = json.loads(proc.stdout.strip().splitlines()[-1])
    ptxas = ptxas_paths(args.ptxas)
    print(f"{args.algorithm} on {args.problem} D={args.dim} pop={args.pop} {args.dtype}; Triton {triton.__version__}")
    for launch in launches:
        kernel = triton_aot._resolve(launch["kernel"])
        consts = {k: triton_aot._constexpr_value(v) for k, v in launch["constexprs"].items()}
        src = ASTSource(kernel, launch["signature"], consts,
                        {(kernel.arg_names.index(k),): v for k, v in launch["attrs"].items()})
        started = time.perf_counter()
        compiled = triton.compile(src, target=GPUTarget(*triton_aot.H100), options=launch["options"])
        took = time.perf_counter() - started
        with tempfile.NamedTemporaryFile("w", suffix=".ptx") as ptx:
            ptx.write(compiled.asm["ptx"])
            ptx.flush()
            report, used_ptxas = ptxas_report(ptxas, ptx.name)
        used = [line.split("info    :")[-1].strip() for line in report.splitlines()
                if "registers" in line or "spill" in line]
        flags = {k: v for k, v in launch["constexprs"].items() if isinstance(v, (bool, int)) and not isinstance(v, dict)}
        print(f"  {launch['kernel'].split(':')[1]} {flags} warps={launch['options'].get('num_warps')} "
              f"({Path(used_ptxas).name}; compiled in {took:.2f} s)")
        print(f"      {' | '.join(used) or report.strip()[-300:]} | {compiled.asm['ptx'].count('bar.sync')} barriers")


if __name__ == "__main__":
    main()
