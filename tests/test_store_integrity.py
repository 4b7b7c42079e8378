"""Long runs that survive: a results store that is damaged, foreign, newer, in use or locked
is refused with one clear line (and never written to); a finished run is never replaced;
`heuriscale reproduce` stopped by SIGINT / SIGTERM keeps its finished runs, says so in one
line, exits 130 / 143, and a rerun completes without losing or duplicating anything."""

import os
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from contextlib import closing
from pathlib import Path

import pytest
from typer.testing import CliRunner

from heuriscale.cli import app
from heuriscale.interrupt import Interrupted, deferred, interruptible
from heuriscale.studies import store as store_module
from heuriscale.studies.store import SCHEMA_VERSION, ResultStore, StoreError

SRC = Path(__file__).parents[1] / "src"
# one thread: on a busy 2-core machine OpenMP's spinning threads make the study several times slower
ENV = {**os.environ, "PYTHONPATH": str(SRC), "OMP_NUM_THREADS": "1"}


PROGRESS = re.compile(r".*: \d+ of \d+ runs (stored|done)")
#: The one-time notice of a cold kernel build (a test run on an empty Numba cache prints it).
BUILDING = re.compile(r"building the .* kernels of \w+: the first run on this machine compiles them")


def _messages(text: str) -> list[str]:
    """The non-empty lines of a study's stderr but its progress lines (printed into logs) and a
    cold kernel build's notice."""
    return [line for line in text.splitlines() if line.strip() and not PROGRESS.match(line)
            and not BUILDING.match(line)]

def _row(repeat: int, best_f: float = 1.0, n: int = 500) -> dict:
    return {"repeat": repeat, "config": {"algorithm": "pso"}, "seed": repeat, "device": "cpu", "device_name": "cpu",
            "best_f": best_f, "best_x": [0.5] * 8, "evals": 100, "wall_time": 0.25, "setup_time": 0.0,
            "history": {"iter": list(range(n)), "f": [float(n - i) for i in range(n)]}, "extra": {}}


def _filled(path: Path, rows: int = 20) -> Path:
    with ResultStore(path) as store:
        store.add("demo", "k", [_row(r, float(r)) for r in range(rows)])
    return path


def _one_line(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


def _count(db: Path) -> int:
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
            return con.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    except sqlite3.Error:
        return 0


# -- the store ---------------------------------------------------------------------------------
def test_garbage_file_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "results.sqlite"
    garbage = bytes(range(256)) * 40
    path.write_bytes(garbage)
    with pytest.raises(StoreError) as info:
        ResultStore(path)
    assert _one_line(info) == (f"results store {path} is not a heuriscale results store (file is not a database): "
                               f"move it away or choose another --out")
    assert path.read_bytes() == garbage


@pytest.mark.parametrize("keep", ["half", "part of the header"])
def test_truncated_store_is_refused_and_left_alone(tmp_path, keep):
    path = _filled(tmp_path / "results.sqlite")
    data = path.read_bytes()
    cut = data[:len(data) // 2 if keep == "half" else 50]
    path.write_bytes(cut)
    with pytest.raises(StoreError) as info:
        ResultStore(path)
    assert re.fullmatch(rf"results store {re.escape(str(path))} is damaged \(.+\): move it away .*choose another --out",
                        _one_line(info))
    assert path.read_bytes() == cut


def test_other_sqlite_database_is_refused(tmp_path):
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE photos (name TEXT)")
    with pytest.raises(StoreError, match="is not a heuriscale results store \\(an SQLite database with tables photos\\)"):
        ResultStore(path)
    with pytest.raises(StoreError, match="is not a heuriscale results store"):
        ResultStore(path, readonly=True)


def test_store_of_a_newer_schema_is_refused(tmp_path):
    path = _filled(tmp_path / "results.sqlite")
    with sqlite3.connect(path) as con:
        con.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    for readonly in (False, True):
        with pytest.raises(StoreError) as info:
            ResultStore(path, readonly=readonly)
        assert _one_line(info) == (f"results store {path} was written by a newer heuriscale (schema {SCHEMA_VERSION + 1}, "
                                   f"this version reads up to {SCHEMA_VERSION}): upgrade heuriscale or choose another --out")


def test_store_from_before_schema_versions_is_stamped_and_kept(tmp_path):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as con:  # what heuriscale wrote before user_version was set
        con.execute(store_module.SCHEMA)
        con.execute("INSERT INTO runs (study, config_key, repeat, config, seed, device, device_name, best_f, best_x, "
                    "evals, wall_time, setup_time, history, extra) VALUES "
                    "('demo', 'k', 0, '{}', 1, 'cpu', 'cpu', 2.5, '[1.0]', 10, 0.1, 0.0, '{}', '{}')")
    with ResultStore(path) as store:
        assert [r["best_f"] for r in store.runs("demo")] == [2.5]
    with sqlite3.connect(path) as con:
        assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_duplicate_add_never_replaces_a_finished_run(tmp_path):
    store = ResultStore(tmp_path / "results.sqlite")
    store.add("demo", "k", [_row(0, 1.0), _row(1, 2.0)])
    with pytest.raises(StoreError) as info:
        store.add("demo", "k", [_row(2, 9.0), _row(1, 9.0)])  # run 1 is stored already
    assert "already holds run(s) 1 of configuration k of study 'demo': finished runs are never replaced" in _one_line(info)
    # the whole batch was rolled back: run 2 was not written either, run 1 kept its value
    assert {r["repeat"]: r["best_f"] for r in store.runs("demo")} == {0: 1.0, 1: 2.0}
    store.add("demo", "k", [_row(2, 3.0)])  # the store is still usable
    assert store.finished("demo", "k") == {0, 1, 2}
    store.close()


def test_second_writer_in_the_same_process_is_refused(tmp_path):
    path = tmp_path / "results.sqlite"
    first = ResultStore(path)
    with pytest.raises(StoreError, match="is already open for writing in this process: close the other ResultStore"):
        ResultStore(path)
    first.close()
    ResultStore(path).close()  # closing released the lock
    assert not (tmp_path / "results.sqlite.lock").exists()  # and removed its file: nothing left behind


def test_lock_taken_on_a_file_since_removed_is_retaken_on_the_new_one(tmp_path, monkeypatch):
    # a writer that opened the lock file just before its holder closed (and unlinked it) must
    # not keep a lock on the removed file while a third writer locks a new one
    from heuriscale.studies import store as store_module

    path = tmp_path / "results.sqlite"
    lock = tmp_path / "results.sqlite.lock"
    real, calls = store_module._lock_once, []

    def racing(path_, lock_path):
        fd = real(path_, lock_path)
        if not calls:  # the first lock is taken on a file that is then replaced
            calls.append(fd)
            lock_path.unlink()
            lock_path.write_text("")
        return fd

    monkeypatch.setattr(store_module, "_lock_once", racing)
    store = ResultStore(path)
    assert len(calls) == 1 and os.path.samestat(os.fstat(store._lock_fd), os.stat(lock))
    with pytest.raises(StoreError, match="already open for writing in this process"):
        ResultStore(path)
    store.close()
    assert not lock.exists()


HOLDER = textwrap.dedent("""
    import sys
    from heuriscale.studies.store import ResultStore
    store = ResultStore(sys.argv[1])
    store.add("demo", "k", [{"repeat": 0, "config": {}, "seed": 0, "device": "cpu", "device_name": "cpu",
                             "best_f": 4.0, "best_x": [0.0], "evals": 1, "wall_time": 0.1, "setup_time": 0.0,
                             "history": {}, "extra": {}}])
    print("ready", flush=True)
    sys.stdin.read()  # holds the store until the test closes our stdin
""")


def test_store_in_use_by_another_process_is_refused_readers_still_read(tmp_path):
    path = tmp_path / "pso" / "results.sqlite"
    path.parent.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], env=ENV, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline().strip() == "ready"
        with pytest.raises(StoreError) as info:
            ResultStore(path)
        assert _one_line(info) == (f"results store {path} is in use by another heuriscale process (pid {proc.pid}): "
                                   f"wait for it or use another --out")
        # the command says the same in one line, and touches nothing
        res = CliRunner().invoke(app, ["reproduce", "pso", "--out", str(tmp_path), "--device", "cpu"])
        assert res.exit_code == 2, res.output
        assert f"in use by another heuriscale process (pid {proc.pid})" in " ".join(res.output.split())
        # reading (for a report) takes no lock
        with ResultStore(path, readonly=True) as reader:
            assert [r["best_f"] for r in reader.runs("demo")] == [4.0]
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    with ResultStore(path) as store:  # the holder is gone: its lock went with it
        assert store.finished("demo", "k") == {0}


def test_sqlite_lock_of_another_program_times_out_with_a_clear_error(tmp_path):
    path = _filled(tmp_path / "results.sqlite", rows=2)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        store = ResultStore(path, timeout=0.2)
        start = time.perf_counter()
        with pytest.raises(StoreError) as info:
            store.add("demo", "k", [_row(5)])
        assert time.perf_counter() - start < 5
        assert re.fullmatch(rf"results store {re.escape(str(path))} is locked by another program \(database is locked, "
                            r"waited 0.2 s\): close that program or use another --out", _one_line(info))
        store.close()
    finally:
        other.execute("ROLLBACK")
        other.close()
    with ResultStore(path) as store:
        assert store.finished("demo", "k") == {0, 1}


def test_readonly_store_reads_and_refuses_to_write(tmp_path):
    path = _filled(tmp_path / "results.sqlite", rows=3)
    with ResultStore(path, readonly=True) as reader:
        assert reader.finished("demo", "k") == {0, 1, 2}
        with pytest.raises(StoreError, match="opened read-only"):
            reader.add("demo", "k", [_row(7)])
    with pytest.raises(StoreError, match="does not exist"):
        ResultStore(tmp_path / "missing.sqlite", readonly=True)


def test_cli_refuses_a_corrupt_store(tmp_path):
    path = tmp_path / "pso" / "results.sqlite"
    path.parent.mkdir()
    path.write_bytes(b"these are not the runs you are looking for\n" * 100)
    res = CliRunner().invoke(app, ["reproduce", "pso", "--out", str(tmp_path), "--device", "cpu"])
    assert res.exit_code == 2
    assert "is not a heuriscale results store (file is not a database): move it away" in " ".join(res.output.split())
    assert path.read_bytes().startswith(b"these are not")


# -- the signal helper ---------------------------------------------------------------------------
def _signal_self(signum: int) -> None:
    os.kill(os.getpid(), signum)
    for _ in range(500):  # the handler runs between bytecodes of the main thread
        time.sleep(0.01)


@pytest.fixture
def handled(request):
    """The signal with a handler for the test: a shell without job control starts background
    jobs (e.g. a CI script run with &) with SIGINT ignored, which interruptible() keeps."""
    signum = request.param
    inherited = signal.signal(signum, signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL)
    yield signum
    signal.signal(signum, inherited)


@pytest.mark.parametrize("handled, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], indirect=["handled"])
def test_interruptible_raises_once_and_restores_handlers(handled, code):
    signum = handled
    before = signal.getsignal(signum)
    with pytest.raises(Interrupted) as info:
        with interruptible() as flag:
            assert flag.active and not flag
            _signal_self(signum)
    assert isinstance(info.value, KeyboardInterrupt)
    assert info.value.signum == signum and info.value.exit_code == code and flag.signum == signum
    assert signal.getsignal(signum) is before


def test_interruptible_leaves_an_ignored_signal_ignored():
    inherited = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with interruptible() as flag:
            assert flag.active
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN  # as a background job has it
            assert callable(signal.getsignal(signal.SIGTERM))  # handled as usual
            os.kill(os.getpid(), signal.SIGINT)  # ignored: nothing is raised
            time.sleep(0.2)
        assert not flag and signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, inherited)


def test_interruptible_poll_mode_only_sets_the_flag():
    with interruptible(poll=True) as flag:
        os.kill(os.getpid(), signal.SIGTERM)
        deadline = time.time() + 5
        while not flag and time.time() < deadline:
            time.sleep(0.01)
    assert flag.signum == signal.SIGTERM and flag.exception().exit_code == 143


def test_interruptible_off_the_main_thread_does_nothing():
    seen = []

    def work():
        with interruptible() as flag:
            seen.append(flag.active)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert seen == [False]


SECOND_SIGNAL = textwrap.dedent("""
    import importlib.util, sys, time
    spec = importlib.util.spec_from_file_location("interrupt", sys.argv[1])
    interrupt = importlib.util.module_from_spec(spec)
    sys.modules["interrupt"] = interrupt
    spec.loader.exec_module(interrupt)
    with interrupt.interruptible():
        try:
            print("ready", flush=True)
            time.sleep(60)
        except interrupt.Interrupted:
            print("caught", flush=True)
            time.sleep(60)  # slow cleanup: a second signal must not wait for it
""")


def test_second_signal_exits_at_once(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", SECOND_SIGNAL, str(SRC / "heuriscale" / "interrupt.py")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert proc.stdout.readline().strip() == "ready"
        proc.send_signal(signal.SIGINT)
        assert proc.stdout.readline().strip() == "caught"
        start = time.perf_counter()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 143
        assert time.perf_counter() - start < 5
        assert "SIGTERM again: exiting at once" in proc.stderr.read()
    finally:
        proc.kill()
        proc.wait()


# -- `heuriscale reproduce` stopped by signals ------------------------------------------------------
MESSAGE = re.compile(r"interrupted: (\d+) of (\d+) runs of study 'pso' are stored in (.+); "
                     r"rerun the same command to resume")


def _stored(db: Path) -> dict:
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
        rows = con.execute("SELECT config_key, repeat, seed, best_f, best_x, history, created FROM runs").fetchall()
    return {(r[0], r[1]): r[2:] for r in rows}


def _reproduce(out: Path, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "heuriscale", "reproduce", "pso", "--scale", "quick",
                             "--device", "cpu", "--out", str(out)], env=ENV, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            # a shell without job control starts background jobs with SIGINT ignored,
                            # which heuriscale (like Python) respects: make sure this one hears it
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL), **kw)


def _interrupt_midway(out: Path, signum: int) -> tuple[int, int, dict]:
    """Start the study, signal it once it has stored two more runs; check how it ends."""
    db = out / "pso" / "results.sqlite"
    before = _count(db)
    proc = _reproduce(out)
    try:
        deadline = time.time() + 120
        while _count(db) < before + 2 and proc.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, "the study ended before it could be interrupted"
        proc.send_signal(signum)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signum, stderr
    assert "Traceback" not in stderr and "Aborted" not in stderr
    lines = _messages(stderr)
    assert len(lines) == 1, stderr
    stored, total, where = MESSAGE.fullmatch(lines[0]).groups()
    assert Path(where) == db
    runs = _stored(db)
    assert int(stored) == len(runs) and before + 2 <= len(runs) < int(total)
    return len(runs), int(total), runs


@pytest.mark.slow  # a minute on 2 cores (a campaign's SIGTERM and a killed study stay in the default run)
def test_reproduce_interrupted_by_sigint_then_sigterm_resumes_without_loss(tmp_path):
    n1, total, first = _interrupt_midway(tmp_path, signal.SIGINT)
    n2, _, second = _interrupt_midway(tmp_path, signal.SIGTERM)
    assert n2 > n1 and all(second[k] == v for k, v in first.items())  # resumed; nothing finished was redone
    proc = _reproduce(tmp_path)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert "report written to" in stdout
    final = _stored(tmp_path / "pso" / "results.sqlite")
    assert len(final) == total  # one row per (configuration, repeat): nothing missing, nothing twice
    assert all(final[k] == v for k, v in second.items())
    with sqlite3.connect(tmp_path / "pso" / "results.sqlite") as con:
        assert con.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == total
    assert len((tmp_path / "pso" / "results.csv").read_text().splitlines()) == 1 + total


@pytest.mark.parametrize("handled", [signal.SIGTERM], indirect=True)
def test_deferred_holds_the_first_signal_until_its_block_ends(handled):
    """A kernel build is not stopped half way: the signal raises when the block ends."""
    reached = []
    with pytest.raises(Interrupted) as info:
        with interruptible():
            with deferred():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.2)  # the handler has run by now: recorded, not raised
                reached.append("the block's end")
            reached.append("after the block")
    assert reached == ["the block's end"] and info.value.signum == signal.SIGTERM
    with interruptible(poll=True) as flag:  # poll mode: deferred changes nothing, nothing raises
        with deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.2)
    assert flag


@pytest.mark.parametrize("handled", [signal.SIGTERM], indirect=True)
def test_a_run_interrupted_during_a_kernel_build_stops_after_it(handled, monkeypatch):
    """The runner builds kernels inside `deferred()`: a signal during the build stops the run
    right after it, with the usual Interrupted."""
    import heuriscale as hs
    from heuriscale.engine.kernels.cpu_common import NativeIteration

    built = []
    real = NativeIteration.warm_up

    def warm_up(self, *args):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.2)
        seconds = real(self, *args)  # the build itself, to its end
        built.append("whole")
        return seconds

    monkeypatch.setattr(NativeIteration, "warm_up", warm_up)
    with pytest.raises(Interrupted):
        with interruptible():
            hs.minimize("sphere", hs.PSO(pop_size=10), dim=3, iters=5, device="cpu", engine="native")
    assert built == ["whole"]
