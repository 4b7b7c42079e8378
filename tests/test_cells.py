"""Several CPU cells at once (`studies.cells`): how many workers and threads, when spawning is
safe, and a campaign run with workers (interrupted, then resumed) whose store, runs.csv and
report equal a serial campaign's."""

import csv
import dataclasses
import json
import sqlite3
import sys
import types
from contextlib import closing

import pytest

from heuriscale.engine import set_cpu_threads
from heuriscale.studies import cells, compare
from heuriscale.studies.study import RunConfig

#: What records how a run ran, not what it computed: left out when stores are compared.
HOW_IT_RAN = ("wall_time", "setup_time", "created")
HOW_IT_RAN_EXTRA = ("timing", "cpu_threads", "cpu_threads_from", "setup_time")


def _unit(iters=20_000, runs=30, pop=100, dim=10, problem="bbob-f1"):
    return RunConfig(algorithm="pso", problem=problem, iters=iters, runs=runs, dim=dim,
                     algorithm_params={"pop_size": pop}, device="cpu"), runs


@pytest.fixture
def rule():
    set_cpu_threads(None)
    yield
    set_cpu_threads(None)


def test_auto_runs_one_cell_per_core_with_one_thread_each_when_there_is_work_for_them(rule):
    todo = [_unit() for _ in range(60)]  # cells of 20,000 iterations x 30 x 100 x 10: 6e8 coordinate updates
    # (BBOB is evaluated by the engine between kernel calls: a cell's threads speed up only the kernels)
    assert cells.plan_workers("auto", todo, cores=16, memory=64 << 30)[:2] == (16, 1)
    assert cells.plan_workers("auto", todo[:5], cores=16, memory=64 << 30)[:2] == (5, 3)  # (15 // 5 = 3 threads each)
    assert cells.plan_workers("auto", todo[:2], cores=16, memory=64 << 30)[:2] == (2, 7)  # 15 threads, shared
    assert cells.plan_workers("auto", todo, cores=16, memory=3 << 30)[:2] == (3, 5)  # a worker per GiB available
    assert cells.plan_workers(2, todo, cores=16, memory=64 << 30)[:2] == (2, 7)
    workers, threads, why = cells.plan_workers("auto", todo, cores=64, memory=128 << 30)
    assert workers == 60 and threads == 1 and why == "60 cells at once on 64 cores, 1 thread each"


def test_auto_gives_cells_that_use_many_threads_alone_their_threads(rule):
    """A cell whose objective the kernels compute (CEC 2022 F1 here) takes 14 threads alone at 30
    runs of 100 x 10 (one per 2,048 coordinates): on 16 cores one at a time, on 64 four at once."""
    todo = [_unit(problem="cec2022-f1") for _ in range(60)]
    workers, threads, why = cells.plan_workers("auto", todo, cores=16, memory=64 << 30)
    assert (workers, threads) == (1, 0) and why == ("one cell at a time: room for one worker (a cell takes 14 of "
                                                    "the 15 threads the rule allows on 16 cores, 64.0 GiB available)")
    assert cells.plan_workers("auto", todo, cores=64, memory=128 << 30)[:2] == (4, 15)  # 63 // 4
    small = [_unit(problem="cec2022-f1", runs=1) for _ in range(60)]  # 1,000 coordinates: one thread each
    assert cells.plan_workers("auto", small * 20, cores=16, memory=64 << 30)[:2] == (16, 1)
    half = [_unit(problem="sphere", runs=10, pop=256, dim=10) for _ in range(8)]  # 25,600: 10 pieces, 12 threads
    assert cells.plan_workers("auto", half, cores=64, memory=128 << 30)[:2] == (6, 10)  # 64 // 10, 63 // 6
    assert cells.plan_workers(4, todo, cores=16, memory=64 << 30)[:2] == (4, 3)  # asked: 15 // 4
    eager = [(dataclasses.replace(c, algorithm="jade"), n) for c, n in todo]  # no native kernels: torch's steps
    assert cells.plan_workers("auto", eager, cores=16, memory=64 << 30)[:2] == (16, 1)


def test_auto_runs_cells_one_by_one_when_workers_cannot_repay_their_start(rule):
    small = [_unit(iters=50, runs=5, pop=20) for _ in range(4)]
    workers, _, why = cells.plan_workers("auto", small, cores=16, memory=64 << 30)
    assert workers == 1 and "less than 2e+08" in why
    assert cells.plan_workers("auto", [_unit()], cores=16)[:2] == (1, 0)  # one cell
    assert cells.plan_workers("auto", [_unit()] * 8, cores=3)[:2] == (1, 0)  # too few cores to repay workers
    assert cells.plan_workers(2, [_unit()] * 8, cores=2)[:2] == (2, 1)  # (unless asked)
    assert cells.plan_workers(1, [_unit()] * 8, cores=16)[:2] == (1, 0)
    workers, _, why = cells.plan_workers("auto", [_unit()] * 8, cores=16, memory=1 << 30)
    assert workers == 1 and why == "one cell at a time: room for one worker (16 cores, 1.0 GiB available)"


def test_a_fixed_thread_count_sizes_the_workers(rule):
    todo = [_unit() for _ in range(60)]
    set_cpu_threads(1)  # the papers' one thread: a worker per core
    assert cells.plan_workers("auto", todo, cores=16, memory=64 << 30)[:2] == (16, 1)
    set_cpu_threads(2)  # teams of two meet at barriers: together within half the cores
    assert cells.plan_workers("auto", todo, cores=16, memory=64 << 30)[:2] == (4, 2)


@pytest.mark.parametrize("value", ["0", "two", -1, 1.5, True])
def test_bad_parallel_cells_is_one_line(value):
    with pytest.raises(ValueError, match="give auto or a whole number >= 1 of cells at once"):
        cells.parse_workers(value)


@pytest.mark.parametrize(("guarded", "problem"), [(True, False), (False, True)])
def test_spawning_is_refused_from_a_scripts_unguarded_top_level(tmp_path, monkeypatch, guarded, problem):
    body = "found = spawn_problem()\n"
    text = "x = 1\nif __name__ == '__main__':\n    " + body if guarded else body
    script = tmp_path / "script.py"
    script.write_text(text)
    main = types.ModuleType("__main__")
    main.__file__, main.__spec__ = str(script), None
    main.__dict__["spawn_problem"] = cells.spawn_problem
    monkeypatch.setitem(sys.modules, "__main__", main)
    exec(compile(text, str(script), "exec"), main.__dict__)  # runs as `python script.py` would  # noqa: S102
    assert (main.__dict__["found"] is not None) == problem
    if problem:
        assert "call it under `if __name__ == \"__main__\":`" in main.__dict__["found"]
        with pytest.raises(ValueError, match="2 cells at once: .*script.py runs this at its top level"):
            main.__dict__.update(cells=cells, unit=_unit())
            exec(compile("cells.plan_workers(2, [unit, unit])", str(script), "exec"), main.__dict__)  # noqa: S102


def _store_rows(path):
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as con:
        con.row_factory = sqlite3.Row
        rows = [dict(r) for r in con.execute("SELECT * FROM runs ORDER BY study, config_key, repeat")]
    for row in rows:
        for key in HOW_IT_RAN:
            row.pop(key)
        extra = json.loads(row.pop("extra"))
        row["extra"] = {k: v for k, v in extra.items() if k not in HOW_IT_RAN_EXTRA}
    return rows


def _csv_rows(path):
    with path.open(newline="") as fh:
        return [{k: v for k, v in row.items() if k != "wall_s"} for row in csv.DictReader(fh)]


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:With 3 runs per algorithm")
def test_cells_in_workers_store_what_a_serial_campaign_stores_and_resume_after_an_interrupt(tmp_path, fast_figures):
    kwargs = dict(suite="cec2022", functions=["f1", "f4"], dims=[10], runs=3, evals=3000,
                  pops={"pso": 20, "de": 20}, device="cpu")
    compare(["pso", "de"], out=tmp_path / "serial", parallel_cells=1, **kwargs)
    seen = []

    def stop_after_the_first(config, n):  # an interrupt once the first cell is committed
        seen.append(n)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        compare(["pso", "de"], out=tmp_path / "cells", parallel_cells=2, progress=stop_after_the_first, **kwargs)
    stored = len(_store_rows(tmp_path / "cells" / "results.sqlite"))
    assert stored >= 3 and stored % 3 == 0 and stored < 12  # whole cells, the first at least, not all
    compare(["pso", "de"], out=tmp_path / "cells", parallel_cells=2, **kwargs)  # resumes: the rest
    serial = _store_rows(tmp_path / "serial" / "results.sqlite")
    parallel = _store_rows(tmp_path / "cells" / "results.sqlite")
    assert len(serial) == 12 and parallel == serial
    with closing(sqlite3.connect(tmp_path / "cells" / "results.sqlite")) as con:
        froms = {json.loads(e)["cpu_threads_from"] for (e,) in con.execute("SELECT extra FROM runs")}
    assert any("2 cells at once" in f for f in froms), froms  # the workers' share is recorded
    assert _csv_rows(tmp_path / "cells" / "runs.csv") == _csv_rows(tmp_path / "serial" / "runs.csv")
    for name in ("comparisons.csv", "tables.tex", "report.md"):  # all but the wall time of the header
        texts = [[line for line in (tmp_path / way / name).read_text().splitlines() if "Wall time: " not in line]
                 for way in ("cells", "serial")]
        assert texts[0] == texts[1] and len(texts[0]) >= 3, name
