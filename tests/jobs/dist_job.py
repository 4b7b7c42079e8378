"""Jobs for tests/test_distributed.py, started by torchrun (or by hand with the rank env vars).

    python -m torch.distributed.run --standalone --nproc-per-node=2 tests/jobs/dist_job.py study OUT
    ... islands OUT.json [runs pop iters migrate_every algorithm]  (Rastrigin; fragile-sphere with $KILL_RANK)

`study`: a small mixed study (batched and run-by-run configurations of unequal cost) into
OUT/results.sqlite. With $KILL_RANK and $KILL_AFTER, that rank kills itself (SIGKILL) holding
its KILL_AFTER-th unit, once at least one run is committed; the other ranks wait for it to take
that many units, so how the units are shared out cannot spare it. `islands`: PSO on Rastrigin, each rank's result as JSON in OUT.rankR (rank 0's also in OUT).
`every`: islands of every registered algorithm, each rank's results as JSON in OUT.rankR.
`disagree`: ranks start different run sets. `gpu`: asks every rank for a GPU. `threads`: each
rank's CPU threads (a native run's `cpu_threads`) as JSON in OUT.rankR.
"""

import json
import os
import signal
import sqlite3
import sys
import time
from pathlib import Path

import torch

import heuriscale as hs

sys.path.insert(0, str(Path(__file__).parent.parent))  # tests/: the registered algorithms
from registered import ISLANDS, NAMES, small  # noqa: E402
from heuriscale.problems import TorchFunction, register_problem
import heuriscale.studies.sharded as sharded_module
import heuriscale.studies.study as study_module
from heuriscale.studies import ResultStore, RunConfig
from heuriscale.studies.sharded import run_study, study_group

_calls = {"evals": 0, "armed": False}  # armed by the islands job only (the study kills by units)


def _fragile_sphere(dim: int) -> hs.Problem:
    """Sphere that SIGKILLs its own process on rank $KILL_RANK at its 20 x $KILL_AFTER-th evaluation."""

    def f(x):
        if _calls["armed"] and os.environ.get("RANK", "0") == os.environ["KILL_RANK"]:
            _calls["evals"] += 1
            if _calls["evals"] == 20 * int(os.environ["KILL_AFTER"]):  # 20 evaluations: mid-unit
                os.kill(os.getpid(), signal.SIGKILL)
        return (x * x).sum(-1)

    return TorchFunction(f, dim, -5.0, 5.0, name="fragile-sphere")


register_problem("fragile-sphere", _fragile_sphere, "test only")


def study_configs() -> list[RunConfig]:
    configs = []
    for algo, iters in (("pso", 60), ("fep", 30), ("apo", 20)):
        for problem, dim in (("fragile-sphere", 4), ("rastrigin", 6)):
            configs.append(RunConfig(algo, problem, iters=iters, runs=3, dim=dim, algorithm_params={"pop_size": 12}))
    configs.append(RunConfig("prs", "fragile-sphere", iters=15, runs=3, dim=3, algorithm_params={"pop_size": 10},
                             timing="each"))
    return configs


def _wait_for(ready, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise TimeoutError(f"dist_job: waited {timeout:.0f} s for {what}")
        time.sleep(0.02)


def _committed(out: Path) -> int:
    try:
        with sqlite3.connect(out / "results.sqlite", timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


def _doomed_units(out: Path, kill_rank: str, kill_after: int):
    """`execute` for the study with $KILL_RANK: that rank marks each unit it takes (a file in
    OUT) and dies holding its kill_after-th once a run is committed; the others start a unit
    only after it has taken kill_after, so rank 0 cannot take them all first."""
    plain = sharded_module.execute
    taken = {"units": 0}

    def execute(config, repeats, warm_timing=True):
        if os.environ.get("RANK", "0") == kill_rank:
            taken["units"] += 1
            (out / f"taken.{taken['units']}").touch()
            if taken["units"] == kill_after:
                _wait_for(lambda: _committed(out) > 0, "a committed run")
                os.kill(os.getpid(), signal.SIGKILL)
        else:
            _wait_for(lambda: (out / f"taken.{kill_after}").exists(), f"rank {kill_rank} to take {kill_after} units")
        return plain(config, repeats, warm_timing)

    return execute


def study(out: str) -> None:
    # Eager steps in every run of this job (and so in the stores compared): the one-process
    # run and the sharded ones must compute the same numbers, and eager needs no kernels built.
    study_module.engine_for = lambda config, problem, algo: "eager"
    if "KILL_RANK" in os.environ:
        sharded_module.execute = _doomed_units(Path(out), os.environ["KILL_RANK"], int(os.environ["KILL_AFTER"]))
    group = study_group(["cpu"])
    lead = group is None or group.lead
    store = ResultStore(Path(out) / "results.sqlite") if lead else None
    try:
        run_study("dist-test", study_configs(), store, group)
    finally:
        if store is not None:
            store.close()


def islands(out: str, runs: int = 8, pop: int = 24, iters: int = 150, every: int = 10, algorithm: str = "pso") -> None:
    algo = hs.get_algorithm(algorithm, pop_size=pop)
    _calls["armed"] = "KILL_RANK" in os.environ
    problem = "fragile-sphere" if _calls["armed"] else "rastrigin"
    # engine pinned: auto weighs timings, and the test compares with a run in another process
    result = hs.minimize(problem, algo, dim=8, iters=iters, runs=runs, seed=11, device="cpu", migrate_every=every,
                         engine="eager")
    rank = os.environ.get("RANK", "0")
    text = json.dumps({"best_f": result.best_f.tolist(), "history_f": result.history_f.tolist(), "evals": result.evals,
                       "islands": result.extra.get("islands"), "pop_size": result.algorithm["pop_size"]})
    Path(f"{out}.rank{rank}").write_text(text)  # each rank its own file: the test compares them
    if rank == "0":
        Path(out).write_text(text)


#: The run set `every` gives each registered algorithm (the test runs it in one process too).
EVERY = dict(dim=4, iters=40, runs=3, seed=11, device="cpu", engine="eager")


def every(out: str) -> None:
    """Islands of every registered algorithm that offers them, exchanging migrants every 10
    iterations; the others must refuse islands in one line."""
    results = {}
    for name in NAMES:
        if name not in ISLANDS:
            try:
                hs.minimize("rastrigin", small(name, pop=16, horizon=40), migrate_every=10, **EVERY)
            except ValueError as exc:
                results[name] = {"refused": str(exc)}
            continue
        r = hs.minimize("rastrigin", small(name, pop=16, horizon=40), migrate_every=10, **EVERY)
        results[name] = {"best_f": r.best_f.tolist(), "best_x": r.best_x.tolist(), "history_f": r.history_f.tolist(),
                         "evals": r.evals, "islands": r.extra.get("islands"), "pop_size": r.algorithm["pop_size"]}
    Path(f"{out}.rank{os.environ.get('RANK', '0')}").write_text(json.dumps(results))


def disagree() -> None:
    dim = 4 + int(os.environ.get("RANK", "0"))
    hs.minimize("sphere", "pso", dim=dim, iters=10, seed=0, device="cpu")


def uneven() -> None:
    """A population too small for the islands of some ranks only (7 over 2 ranks, 2 migrants)."""
    hs.minimize("sphere", hs.get_algorithm("pso", pop_size=7), dim=4, iters=20, device="cpu", migrants=2)


def gpu() -> None:
    study_group(["cuda"])


def threads(out: str) -> None:
    """A native CPU run on each rank (after joining the group, as commands do): the threads it
    reports, why, and this rank's cores, as JSON in OUT.rankR."""
    from heuriscale.engine import distributed
    from heuriscale.engine.threads import cpu_cores

    distributed.join("cpu")
    r = hs.minimize("sphere", "pso", dim=4, iters=5, runs=2, seed=0, device="cpu", engine="native")
    text = json.dumps({"cpu_threads": r.extra["cpu_threads"], "from": r.extra["cpu_threads_from"],
                       "torch_threads": torch.get_num_threads(), "cores": cpu_cores(),
                       "local_world": int(os.environ["LOCAL_WORLD_SIZE"])})
    Path(f"{out}.rank{os.environ['RANK']}").write_text(text)


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    if mode != "threads":  # that job checks the threads the library chooses
        torch.set_num_threads(1)
    {"study": study, "islands": lambda out, *rest: islands(out, *map(int, rest[:4]), *rest[4:]), "every": every, "disagree": disagree,
     "gpu": gpu, "uneven": uneven, "threads": threads}[mode](*args)
