"""Scale-out on the CPU with Gloo (issue 12): torchrun jobs of 1-3 processes.

Sharded studies give exactly the one-process results, survive a killed rank with nothing
lost or duplicated, and islands agree with the single-device path and converge at least as
well as one island of the same total population. Errors end every rank within the timeout.
"""

import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from scipy.stats import mannwhitneyu

import heuriscale as hs
from heuriscale.engine.islands import island_seed, share
from registered import ISLANDS, NAMES, small

JOB = str(Path(__file__).parent / "jobs" / "dist_job.py")
ROOT = Path(__file__).parent.parent


def _env(**extra) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT / "src"), "HEURISCALE_DIST_TIMEOUT": "5"}
    env.pop("RANK", None), env.pop("WORLD_SIZE", None), env.pop("LOCAL_RANK", None)
    return {**env, **{k: str(v) for k, v in extra.items()}}


def torchrun(n: int, *args, timeout: float = 120, **env) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={n}", JOB, *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, env=_env(**env), timeout=timeout)


def by_hand(n: int, *args, ranks=None, **env) -> list[subprocess.Popen]:
    """The ranks started without torchrun's agent (rank 0 hosts the store): what a lost
    machine looks like to the others, since no agent stops them."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return [subprocess.Popen([sys.executable, JOB, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=_env(MASTER_ADDR="127.0.0.1", MASTER_PORT=port, RANK=r, LOCAL_RANK=r,
                                                 WORLD_SIZE=n, **env)) for r in (ranks or range(n))]


def stored(folder: Path) -> dict:
    db = sqlite3.connect(folder / "results.sqlite")
    rows = db.execute("SELECT config_key, repeat, best_f, history FROM runs").fetchall()
    db.close()
    table = {(k, r): (f, h) for k, r, f, h in rows}
    assert len(table) == len(rows)  # never the same run twice
    return table


@pytest.fixture(scope="module")
def one_process(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("single")
    done = subprocess.run([sys.executable, JOB, "study", str(out)], capture_output=True, text=True, env=_env(),
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return stored(out)


# 4 Gloo ranks on 2 cores: the 4-GPU layout, checked on the CPU (under -m slow: 2 ranks in the default run)
@pytest.mark.parametrize("world", [2, pytest.param(4, marks=pytest.mark.slow)])
def test_sharded_study_equals_one_process(tmp_path, one_process, world):
    done = torchrun(world, "study", tmp_path, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    assert stored(tmp_path) == one_process  # same runs, same seeds, same numbers and histories
    assert len(one_process) == 21


@pytest.mark.slow  # torchrun processes: a quarter of a minute each on 2 cores
def test_killed_rank_then_rerun_loses_and_duplicates_nothing(tmp_path, one_process):
    killed = torchrun(2, "study", tmp_path, KILL_RANK=1, KILL_AFTER=2)
    assert killed.returncode != 0
    partial = stored(tmp_path)
    assert 0 < len(partial) < len(one_process)
    assert all(one_process[k] == v for k, v in partial.items())
    done = torchrun(3, "study", tmp_path)  # another world size
    assert done.returncode == 0, done.stderr[-2000:]
    assert stored(tmp_path) == one_process


@pytest.mark.slow  # torchrun processes: a quarter of a minute each on 2 cores
def test_a_silent_rank_ends_the_study_with_one_line(tmp_path):
    procs = by_hand(2, "study", tmp_path, KILL_RANK=1, KILL_AFTER=1)
    started = time.monotonic()
    outs = [p.communicate(timeout=90) for p in procs]
    assert procs[1].returncode == -9
    assert procs[0].returncode != 0 and time.monotonic() - started < 60
    last = outs[0][1].strip().splitlines()[-1]
    assert "DistributedError: rank 1 stopped answering 5 s ago" in last and "rerun the same command" in last
    assert 0 < len(stored(tmp_path)) < 21


def test_islands_world_size_one_is_the_single_device_path(tmp_path):
    out = tmp_path / "r.json"
    done = torchrun(1, "islands", out)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(out.read_text())
    plain = hs.minimize("rastrigin", hs.get_algorithm("pso", pop_size=24), dim=8, iters=150, runs=8, seed=11,
                        device="cpu", engine="eager")
    assert got["islands"] is None and got["best_f"] == plain.best_f.tolist()
    assert got["history_f"] == plain.history_f.tolist()


@pytest.mark.slow  # minutes under load on 2 cores: `pytest -m slow`
def test_islands_agree_and_converge_at_least_as_well(tmp_path):
    """APO here: measured, islands help APO and PRS at equal total population, while PSO's and
    FEP's islands do worse than one big population (docs/benchmarks.md has the numbers)."""
    runs, pop, iters = 24, 60, 100
    single = hs.minimize("rastrigin", hs.get_algorithm("apo", pop_size=pop), dim=8, iters=iters, runs=runs, seed=11,
                         device="cpu", engine="eager")  # as the islands job runs
    for world in (2, 3):
        out = tmp_path / f"r{world}.json"
        done = torchrun(world, "islands", out, runs, pop, iters, 20, "apo")
        assert done.returncode == 0, done.stderr[-2000:]
        got = json.loads(out.read_text())
        for rank in range(1, world):  # every rank returned the same global result
            theirs = json.loads(Path(f"{out}.rank{rank}").read_text())
            assert {k: v for k, v in theirs.items() if k != "islands"} == {k: v for k, v in got.items() if k != "islands"}
            assert theirs["islands"]["rank"] == rank
        assert got["islands"]["world"] == world and got["evals"] == single.evals
        assert got["pop_size"] == pop  # the run set's population, not the island's share
        best = torch.tensor(got["best_f"], dtype=torch.float64)
        history = torch.tensor(got["history_f"])  # agreed: non-increasing, ending at the agreed best
        assert (history[:, 1:] <= history[:, :-1]).all() and torch.equal(history[:, -1].double(), best)
        # one-sided: the islands' final values are not larger than one island's of the whole population
        assert mannwhitneyu(best, single.best_f, alternative="greater").pvalue > 0.05
        assert best.median() <= single.best_f.median()


def test_every_registered_algorithm_runs_as_islands(tmp_path):
    """Each algorithm's migrants leave and enter its islands (Algorithm.emigrants / immigrate)
    over 2 Gloo ranks: every rank returns the same global result, evaluations as in one
    process, an agreed history that only goes down and ends at the agreed best."""
    out = tmp_path / "every"
    done = torchrun(2, "every", out, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    ranks = [json.loads(Path(f"{out}.rank{r}").read_text()) for r in range(2)]
    assert sorted(ranks[0]) == sorted(NAMES)
    for name in NAMES:
        if name not in ISLANDS:  # refused on every rank alike, before the ranks meet
            assert "offers no islands" in ranks[0][name]["refused"] and ranks[1][name] == ranks[0][name]
            continue
        got, theirs = ranks[0][name], ranks[1][name]
        assert {k: v for k, v in theirs.items() if k != "islands"} == {k: v for k, v in got.items() if k != "islands"}
        assert got["islands"]["world"] == 2 and theirs["islands"]["rank"] == 1
        single = hs.minimize("rastrigin", small(name, pop=16, horizon=40), dim=4, iters=40, runs=3, seed=11,
                             device="cpu", engine="eager")
        assert got["evals"] == single.evals and got["pop_size"] == single.algorithm["pop_size"]
        history, best = torch.tensor(got["history_f"]), torch.tensor(got["best_f"])
        assert (history[:, 1:] <= history[:, :-1]).all() and torch.equal(history[:, -1].double(), best.double())
        assert torch.isfinite(best).all()


@pytest.mark.slow  # torchrun processes: a quarter of a minute each on 2 cores
def test_a_rank_lost_mid_run_ends_the_islands_with_one_line(tmp_path):
    procs = by_hand(2, "islands", tmp_path / "r.json", 4, 24, 400, 10, KILL_RANK=1, KILL_AFTER=3)
    outs = [p.communicate(timeout=90) for p in procs]
    assert procs[1].returncode == -9 and procs[0].returncode != 0
    last = outs[0][1].strip().splitlines()[-1]
    assert "DistributedError: rank 0: another rank stopped answering" in last, last


@pytest.mark.slow  # torchrun processes: a quarter of a minute each on 2 cores
def test_ranks_that_disagree_fail_together(tmp_path):
    done = torchrun(2, "disagree")
    assert done.returncode != 0
    assert done.stderr.count("DistributedError: ranks disagree on the run set") == 2


@pytest.mark.slow  # torchrun processes: a quarter of a minute each on 2 cores
def test_a_population_too_small_for_some_islands_fails_every_rank_alike():
    done = torchrun(2, "uneven")
    assert done.returncode != 0
    assert done.stderr.count("ValueError: pso: pop_size=7 split over 2 islands leaves 3 individuals on the smallest") == 2
    assert "stopped answering" not in done.stderr


@pytest.mark.slow  # torchrun processes: a quarter of a minute each on 2 cores
def test_a_rank_without_its_gpu_fails_every_rank(tmp_path):
    done = torchrun(2, "gpu", CUDA_VISIBLE_DEVICES="")  # no GPU for anyone: each rank names rank 0's
    assert done.returncode != 0
    assert done.stderr.count("DistributedError: rank 0 on ") == 2
    assert done.stderr.count("expects GPU cuda:0 (LOCAL_RANK) but that machine has 0") == 2
    assert done.stderr.count("(and 1 more rank(s))") == 2


def test_a_failed_rendezvous_is_an_error_not_a_hang(tmp_path):
    procs = by_hand(2, "study", tmp_path, ranks=[0])  # rank 1 never comes
    outs = procs[0].communicate(timeout=90)
    assert procs[0].returncode != 0
    assert "could not join the process group" in outs[1].strip().splitlines()[-1]


def _threads(tmp_path, **env) -> list[dict]:
    out = tmp_path / "threads.json"
    done = torchrun(2, "threads", out, **env)
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(Path(f"{out}.rank{r}").read_text()) for r in range(2)]


@pytest.mark.slow  # minutes under load on 2 cores: `pytest -m slow`
def test_each_rank_takes_its_share_of_the_cores(tmp_path, monkeypatch):
    """Two ranks on one machine each take at most cores // 2 threads (at least 1), not every
    core each, and the result says so; $HEURISCALE_CPU_THREADS overrides the share."""
    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)  # a user's setting would be respected instead
    monkeypatch.delenv("HEURISCALE_CPU_THREADS", raising=False)
    for r in _threads(tmp_path):
        share = max(1, r["cores"] // 2)
        assert r["local_world"] == 2
        assert 1 <= r["cpu_threads"] <= share and r["torch_threads"] <= share, r
        assert r["from"].endswith(f"at most {share}: share of {r['cores']} cores among 2 ranks on this machine)"), r
    ranks = _threads(tmp_path, HEURISCALE_CPU_THREADS=1)
    assert all(r["cpu_threads"] == 1 and r["from"] == "$HEURISCALE_CPU_THREADS" for r in ranks), ranks


def test_an_explicit_thread_setting_wins_over_the_share(monkeypatch):
    """set_cpu_threads (--cpu-threads) and a user's $NUMBA_NUM_THREADS are kept under torchrun;
    a bad $HEURISCALE_CPU_THREADS is a one-line error."""
    numba = pytest.importorskip("numba")
    from heuriscale.engine import threads as device

    before = numba.get_num_threads(), torch.get_num_threads()
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")
    monkeypatch.delenv("HEURISCALE_CPU_THREADS", raising=False)
    try:
        monkeypatch.setattr(device, "_threads_source", None)
        monkeypatch.setenv("NUMBA_NUM_THREADS", str(numba.config.NUMBA_NUM_THREADS))
        assert device.default_cpu_threads() == "$NUMBA_NUM_THREADS"
        assert numba.get_num_threads() == before[0]  # untouched
        monkeypatch.delenv("NUMBA_NUM_THREADS")
        monkeypatch.setattr(device, "_threads_source", None)
        device.set_cpu_threads(1)
        assert device.default_cpu_threads() == "set explicitly" and numba.get_num_threads() == 1
        monkeypatch.setattr(device, "_threads_source", None)
        monkeypatch.setenv("HEURISCALE_CPU_THREADS", "many")
        with pytest.raises(ValueError, match=r"\$HEURISCALE_CPU_THREADS='many': give a whole number"):
            device.default_cpu_threads()
    finally:
        numba.set_num_threads(before[0])
        torch.set_num_threads(before[1])


def test_island_shares_and_seeds():
    assert [share(10, 3, r) for r in range(3)] == [4, 3, 3]
    assert sum(share(1001, 8, r) for r in range(8)) == 1001
    seeds = {island_seed(5, r) for r in range(64)}
    assert len(seeds) == 64 and island_seed(5, 1) == island_seed(5, 1) != island_seed(6, 1)


def test_island_bad_input():
    with pytest.raises(ValueError, match="islands must be True, False or None"):
        hs.minimize("sphere", "pso", dim=2, iters=5, device="cpu", islands="yes")
    with pytest.raises(ValueError, match="migrants must be an integer >= 1"):
        hs.minimize("sphere", "pso", dim=2, iters=5, device="cpu", migrants=0)
    with pytest.raises(ValueError, match="migrate_every must be an integer >= 1"):
        hs.minimize("sphere", "pso", dim=2, iters=5, device="cpu", migrate_every=-3)


def test_error_text_is_cut_between_words():
    from heuriscale.engine.distributed import _first_line

    text = _first_line(RuntimeError("first line\n" + "rendezvous timed out " * 20))
    assert len(text) <= 160 and text.endswith(" rendezvous...")  # the last line, cut after a whole word
    assert _first_line(RuntimeError("x" * 300)) == "x" * 157 + "..."  # one long word: inside it
    assert _first_line(RuntimeError("short")) == "short"
