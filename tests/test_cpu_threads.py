"""The native engine's default CPU threads follow the work (`engine/threads.py`): the rule as a
pure function at a few work sizes and core counts, a fixed count winning over it, a torchrun
rank's share capping it, and the reason results carry. No timings here: those are
benchmarks/threads.py's (docs/cpu-threads.md)."""

from __future__ import annotations

import pytest
import torch

import heuriscale as hs
from heuriscale.engine import threads

numba = pytest.importorskip("numba")
MIN = 8192  # the kernels' PARALLEL_MIN


@pytest.fixture
def fresh(monkeypatch):
    """The threads module as in a new process (no count fixed, nothing decided yet), restored after."""
    monkeypatch.delenv("HEURISCALE_CPU_THREADS", raising=False)
    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    before = numba.get_num_threads(), torch.get_num_threads()
    for name, value in (("_threads_source", None), ("_fixed", None), ("_cap", None), ("_limit", None),
                        ("_numba_set", {})):
        monkeypatch.setattr(threads, name, value)  # (and back after the test)
    yield threads
    numba.set_num_threads(before[0])
    torch.set_num_threads(before[1])


@pytest.mark.parametrize("work, parts, cap, expected", [
    (32 * 4, 1, 64, 1),               # PSO 32 x 2: below the threshold
    (100 * 30, 1, 64, 1),             # PSO 100 x 30, one run: below the threshold
    (1024 * 30, 4, 64, 4),            # PSO 1,024 x 30: 30,720 coordinates, 4 blocks
    (1024 * 30, 4, 2, 2),             # the same on two cores
    (65536 * 4, 256, 32, 32),         # PSO 65,536 x 2: 262,144 coordinates, the cap of 64 cores
    (3 * 2048, 256, 64, 1),           # below the threshold
    (65536 * 4, 256, 16, 16),         # capped by the cores
    (30 * 100 * 30, 30, 64, 30),      # 30 runs of 100 x 30: one thread a run
    (5 * 2048, 30, 64, 5),            # one thread per 2,048 coordinates
    (10**9, 3, 64, 3),                # at most one thread per piece of work
    (10**9, 1, 64, 1),                # one piece: one thread
    (10**9, 500, 1, 1),               # one core
])
def test_the_rule_at_a_few_sizes(work, parts, cap, expected):
    n, why = threads.threads_for_work(work, parts, cap, MIN)
    assert n == expected and why
    assert 1 <= n <= min(cap, max(parts, 1))


@pytest.mark.parametrize("cores, cap", [(1, 1), (2, 1), (3, 2), (8, 7), (16, 15), (33, 32), (64, 32), (192, 32)])
def test_the_cap_is_every_core_but_one_and_at_most_32(cores, cap):
    # (2 cores: one thread, the 2-core check; 16: 15, never stalled where 16 did; 64: 32, fastest there)
    assert threads.rule_cap(cores) == cap


@pytest.mark.parametrize("cores, cap", [(64, 32), (16, 15), (2, 1)])
def test_the_rule_takes_its_cap_of_the_cores_at_most(fresh, monkeypatch, cores, cap):
    monkeypatch.setattr(fresh, "_pool_size", lambda: cores)
    monkeypatch.setattr(fresh, "cpu_cores", lambda: cores)
    assert fresh.default_cpu_threads() == f"{cap} of {cores} cores"
    assert fresh.thread_limit() == cores  # (a first build compiles in processes on every core: no barrier to wait at)
    assert torch.get_num_threads() == cap
    n, why = fresh.choose_threads(65536 * 4 * 30, 7680, "65,536 x 2 x 30 runs", MIN)
    assert n == cap and why.endswith(f"; at most {cap}: {cap} of {cores} cores)")
    n, why = fresh.choose_threads(1024 * 30, 4, "1,024 x 30 x 1 run", MIN)
    assert n == min(4, cap)
    if cap > 4:
        assert why == ("work 1,024 x 30 x 1 run: 4 threads (one thread per piece of parallel work (4), fewer "
                       f"than one per 2,048 coordinates; at most {cap}: {cap} of {cores} cores)")


def test_the_rule_grows_with_the_work_and_never_passes_the_cap():
    counts = [threads.threads_for_work(w, 10**6, 64, MIN)[0] for w in (2**k for k in range(10, 30))]
    assert counts == sorted(counts) and counts[0] == 1 and counts[-1] == 64


def test_reasons_say_what_and_why(fresh):
    n, why = fresh.choose_threads(65536 * 4, 256, "65,536 x 2 x 1 run", MIN)
    cap = fresh.rule_cap(fresh.cpu_cores())  # (numba's pool is the cores here)
    assert n == min(cap, 128)
    assert why.startswith(f"work 65,536 x 2 x 1 run: {n} thread") and f"at most {cap}: " in why
    n, why = fresh.choose_threads(128, 1, "32 x 2 x 1 run", MIN)
    assert n == 1 and "below 8,192 coordinates" in why or cap == 1


def test_a_fixed_count_wins(fresh, monkeypatch):
    fresh.set_cpu_threads(1)
    assert fresh.choose_threads(10**9, 1000, "big", MIN) == (1, "set explicitly")
    fresh.set_cpu_threads(None)
    monkeypatch.setenv("HEURISCALE_CPU_THREADS", "1")
    assert fresh.choose_threads(10**9, 1000, "big", MIN) == (1, "$HEURISCALE_CPU_THREADS")
    assert fresh.thread_limit() == 1


def test_a_torchrun_share_caps_the_rule(fresh, monkeypatch):
    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)
    monkeypatch.setenv("LOCAL_WORLD_SIZE", str(fresh.cpu_cores() * 4))  # more ranks than cores: a share of 1
    n, why = fresh.choose_threads(10**9, 1000, "big", MIN)
    assert n == 1 and fresh.thread_limit() == 1
    assert f"share of {fresh.cpu_cores()} cores among {fresh.cpu_cores() * 4} ranks" in why


def test_results_name_the_choice(fresh):
    r = hs.minimize("sphere", hs.get_algorithm("pso", pop_size=32), dim=2, iters=3, seed=0, device="cpu",
                    engine="native")
    assert r.extra["cpu_threads"] == 1
    why = r.extra["cpu_threads_from"]
    assert why.startswith("work 32 x 2 x 1 run: 1 thread (") and why.endswith(" cores)"), why
    assert "below 8,192 coordinates" in why or "one thread allowed" in why, why
    hs.set_cpu_threads(1)
    r = hs.minimize("sphere", "pso", dim=2, iters=3, seed=0, device="cpu", engine="native")
    assert (r.extra["cpu_threads"], r.extra["cpu_threads_from"]) == (1, "set explicitly")
    with pytest.raises(ValueError, match="cpu threads must be an integer >= 1"):
        hs.set_cpu_threads(0)
