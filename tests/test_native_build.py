"""What building the native CPU kernels compiles (issue 30: first runs pay for it): only the
run's own objective, nothing again in a later process, and the pieces that replaced NumPy's
slow-to-compile functions give NumPy's answers. The kernels' numbers are test_native*.py's."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest
from numba import njit, types

from heuriscale.engine.kernels import cpu_common
from heuriscale.engine.kernels.cpu_jobs import CompiledJob, call_job, job

ROOT = Path(__file__).parent.parent

#: (child scripts) `compiled`: the functions Numba compiles in this process, by name.
COMPILES = """
import numba.core.event as ev
compiled = []
class Compiles(ev.Listener):
    def on_start(self, event):
        pass
    def on_end(self, event):
        compiled.append(event.data["dispatcher"].py_func.__qualname__)
ev.register("numba:compile", Compiles())
"""

CHILD = COMPILES + """
import json
import heuriscale as hs
from heuriscale.engine.kernels import cpu_objectives

r = hs.minimize("ackley", hs.FEP(pop_size=20), dim=3, iters=10, runs=2, seed=1, device="cpu", dtype="float64",
                engine="native")
built = sorted(i for i, fn in enumerate(cpu_objectives.OBJECTIVES) if fn is not None and fn.overloads)
print(json.dumps({"engine": r.extra["engine"], "objectives": built, "compiled": compiled,
                  "best_f": r.best_f.tolist()}))
"""


def _child(cache: Path) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # two processes that build kernels from an empty cache: a minute on 2 cores
def test_a_first_run_builds_its_own_objective_only_and_the_next_process_compiles_nothing(tmp_path):
    """FEP on Ackley (computed through its compiled wrapper, a built-in the kernels have no
    vector pass for), in a process with an empty disk cache, then in another with the cache
    it left: the first builds Ackley's objective alone of the 19 (a branch over all of them
    had every kernel build compile them all), the second loads everything (a kernel whose
    cache key changed from process to process, e.g. through its jobs' types, would compile
    again) and computes the same numbers."""
    from heuriscale.engine.kernels.cpu_objectives import INLINE
    from heuriscale.problems import classic

    cold = _child(tmp_path)
    assert cold["engine"] == "native" and cold["objectives"] == [INLINE[classic.ackley]]
    assert len(cold["compiled"]) > 10  # it did build: the check below is not vacuous
    warm = _child(tmp_path)
    assert warm["compiled"] == [] and warm["objectives"] == []
    assert warm["best_f"] == cold["best_f"]


@job
def _scaled(i, x, y, factor):
    y[i] = factor * x[i]


@njit
def _scale_all(handle, x, y, factor):
    for i in range(x.shape[0]):
        call_job(handle, np.int64(i), x, y, factor)


def test_a_job_runs_through_its_address_and_refuses_other_argument_types():
    x, y = np.arange(5.0), np.zeros(5)
    handle = CompiledJob(_scaled, (types.int64, numba.typeof(x), numba.typeof(y), types.float64))
    _scale_all(handle, x, y, 2.5)
    assert y.tolist() == [0.0, 2.5, 5.0, 7.5, 10.0]
    float32 = CompiledJob(_scaled, (types.int64, numba.typeof(x.astype(np.float32)), numba.typeof(y), types.float64))
    with pytest.raises(numba.core.errors.TypingError, match="are not the job's"):
        _scale_all(float32, x, y, 2.5)  # built for float32 points: calling it with float64 ones would misread them


def test_a_job_takes_at_most_28_arguments():
    names = ", ".join(f"a{i}" for i in range(29))
    namespace = {}
    exec(f"def wide({names}):\n    pass\n", namespace)
    with pytest.raises(TypeError, match="at most 28 arguments, wide takes 29"):
        job(namespace["wide"])


@njit
def _order(f):
    order, spare = np.empty(f.shape[0], np.int64), np.empty(f.shape[0], np.int64)
    cpu_common.stable_order(f, order, spare)
    return order


@njit
def _kth(a, k):
    return cpu_common.kth_smallest(a.copy(), k)


def test_the_stable_order_and_the_kth_smallest_are_numpys():
    """APO's ranks (np.argsort, stable) and FEP's cut (np.partition): ties in index order and
    NaN last, for sizes around the sort's runs of 16 and its merges."""
    rng = np.random.default_rng(0)
    for n in (1, 2, 15, 16, 17, 33, 100, 257, 1000):
        for f in (rng.integers(0, 5, n).astype(np.float64), rng.standard_normal(n).astype(np.float32)):
            f[rng.random(n) < 0.1] = np.nan
            f[rng.random(n) < 0.1] = np.inf
            assert _order(f).tolist() == np.argsort(f, kind="stable").tolist()
            for k in {0, n // 2, n - 1}:
                want, got = np.partition(f, k)[k], _kth(f, k)
                assert (np.isnan(want) and np.isnan(got)) or got == want


JOBS_MODULE = '''
import numpy as np
from numba import njit

from heuriscale.engine.kernels.cpu_jobs import call_job, job


@job
def double(i, x, y):
    y[i] = 2.0 * x[i]


@job
def square(i, x, y):
    y[i] = x[i] * x[i]


@job
def negate(i, x, y):
    y[i] = -x[i]


@job
def broken(i, x, y):
    y[i] = x[i] + "text"


@njit
def run(handle, x, y):
    for i in range(x.shape[0]):
        call_job(handle, np.int64(i), x, y)
'''

JOBS_CHILD = COMPILES + '''
import json, os, sys
import numba, numpy as np
from numba import types
import jobs_module as m
from heuriscale.engine import threads
from heuriscale.engine.kernels import cpu_jobs

threads.thread_limit = lambda: 3  # three processes, whatever this machine has
mode = sys.argv[2] if len(sys.argv) > 2 else ""
if mode == "one thread":
    threads.thread_limit = lambda: 1
if mode == "hung":  # forked processes that never end (say, a lock inherited from another thread)
    import time
    cpu_jobs.FORKED_TIMEOUT = 2.0
    cpu_jobs._Build._compile_forked = lambda self: time.sleep(600)
x = np.arange(1.0, 5.0)
sig = (types.int64, numba.typeof(x), numba.typeof(x))
built = cpu_jobs.compiled_jobs(*[(getattr(m, name), sig) for name in sys.argv[1].split(",")])
building = {id(job._building): job._building for job in built if job._building is not None}
out = {"forked": sum(len(b.forked) for b in building.values())}
try:
    values = []
    for job in built:
        y = np.zeros(4)
        m.run(job, x, y)
        values.append(y.tolist())
    out["values"] = values
except Exception as exc:
    out["error"] = f"{type(exc).__name__}: {exc}"
out["compiled"] = [name for name in compiled if name != "run"]
print(json.dumps(out))
'''


def _jobs_child(tmp_path: Path, names: str, mode: str = "", cache: str = "cache") -> dict:
    (tmp_path / "jobs_module.py").write_text(JOBS_MODULE)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / cache),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT / "src")])}
    done = subprocess.run([sys.executable, "-c", JOBS_CHILD, names, mode], capture_output=True, text=True, env=env,
                          timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_jobs_missing_from_the_cache_are_compiled_at_once_in_forked_processes_and_loaded(tmp_path):
    """On an empty disk cache, three jobs and three threads: two forked processes take the jobs
    from the front of the list, at once, while this one compiles the kernel that calls them
    (here `run`); at its first call this one takes what is left from the back (the last job,
    unless a forked process was quicker) and loads the others from the cache. The jobs compute
    what they should; a later process compiles nothing."""
    cold = _jobs_child(tmp_path, "double,square,negate")
    assert cold["forked"] == 2
    assert cold["compiled"] in ([], ["negate"])  # the others came from the forked processes, through the cache
    assert cold["values"] == [[2.0, 4.0, 6.0, 8.0], [1.0, 4.0, 9.0, 16.0], [-1.0, -2.0, -3.0, -4.0]]
    warm = _jobs_child(tmp_path, "double,square,negate")
    assert warm == {"forked": 0, "values": cold["values"], "compiled": []}


def test_a_job_that_fails_to_compile_in_a_forked_process_reports_its_error_here(tmp_path):
    failed = _jobs_child(tmp_path, "broken,double")
    assert failed["forked"] == 2  # three threads: two forked processes, this one compiles the kernel
    assert failed["error"].startswith("TypingError") and "broken" in failed["error"]
    assert "broken" in failed["compiled"]  # the forked process wrote nothing: this one compiled it, and raised


def test_one_job_alone_is_compiled_in_a_forked_process_while_this_one_compiles_its_kernel(tmp_path):
    cold = _jobs_child(tmp_path, "square")
    assert cold["forked"] == 1
    assert cold["compiled"] in ([], ["square"])  # [] unless this process got to it first
    assert cold["values"] == [[1.0, 4.0, 9.0, 16.0]]


@pytest.mark.parametrize("mode, forked", [("one thread", 0), ("hung", 2)])
def test_jobs_are_compiled_here_with_one_thread_or_when_forked_processes_hang(tmp_path, mode, forked):
    """One thread for the native kernels: nothing is forked. Forked processes that never end:
    after FORKED_TIMEOUT (2 s here) they are killed and this process compiles every job."""
    done = _jobs_child(tmp_path, "double,square,negate", mode)
    assert done["forked"] == forked
    assert sorted(done["compiled"]) == ["double", "negate", "square"]
    assert done["values"] == [[2.0, 4.0, 6.0, 8.0], [1.0, 4.0, 9.0, 16.0], [-1.0, -2.0, -3.0, -4.0]]


def _locator_and_stamp(dispatcher):
    cache = dispatcher._cache
    return type(cache._impl.locator).__name__, cache._cache_file._source_stamp


def test_the_kernels_disk_cache_is_stamped_with_every_kernel_source():
    """A kernel compiles in functions of other files (Philox, the objectives): its cached
    machine code must go stale when any of them changes, not only its own file."""
    from heuriscale.engine.kernels import cpu_cache, cpu_random

    for dispatcher in (cpu_random.uniform, cpu_common.close_step):
        name, stamp = _locator_and_stamp(dispatcher)
        assert name.startswith("Kernel") and stamp == cpu_cache.sources_digest(), (dispatcher, name)

    @njit(cache=True)
    def users_own(x):  # (a function of this file: Numba's own rules)
        return x + 1

    name, stamp = _locator_and_stamp(users_own)
    assert not name.startswith("Kernel") and stamp != cpu_cache.sources_digest()


def test_the_kernel_sources_digest_changes_with_any_kernel_file(tmp_path, monkeypatch):
    from heuriscale.engine.kernels import cpu_cache

    tree = tmp_path / "heuriscale"
    (tree / "engine" / "kernels" / "pso").mkdir(parents=True)
    (tree / "problems").mkdir()
    files = [tree / "engine" / "kernels" / "cpu_random.py", tree / "engine" / "kernels" / "pso" / "cpu.py",
             tree / "problems" / "compiled.py"]
    for f in files:
        f.write_text("x = 1\n")
    monkeypatch.setattr(cpu_cache, "_KERNELS", tree / "engine" / "kernels")
    monkeypatch.setattr(cpu_cache, "_SOURCES", (tree / "engine" / "kernels", files[2]))
    digests = []
    for f in [None, *files]:
        if f is not None:
            f.write_text("x = 2\n")
        cpu_cache.sources_digest.cache_clear()
        digests.append(cpu_cache.sources_digest())
    cpu_cache.sources_digest.cache_clear()
    assert len(set(digests)) == len(digests)
    assert cpu_cache._is_kernel_source(str(files[1])) and not cpu_cache._is_kernel_source(str(tmp_path / "mine.py"))
