import dataclasses
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from heuriscale.cli import app
from heuriscale.studies import PAPERS, ResultStore, RunConfig, aggregate, reproduce_paper, run_configs
from heuriscale.studies import study as study_module

CONFIGS = [
    RunConfig("pso", "sphere", iters=30, runs=3, dim=4, algorithm_params={"pop_size": 16}, timing="each"),
    RunConfig("apo", "rastrigin", iters=20, runs=4, dim=3, algorithm_params={"pop_size": 12}),
]


def test_store_keeps_one_row_per_run_and_aggregates(tmp_path):
    store = ResultStore(tmp_path / "s.sqlite")
    run_configs("demo", CONFIGS, store)
    for config in CONFIGS:
        agg = aggregate(store, "demo", config)
        assert agg["n"] == config.runs
        best = [r["best_f"] for r in agg["runs"]]
        assert agg["f"]["min"] == min(best) and agg["f"]["max"] == max(best)
        assert agg["f"]["median"] == pytest.approx(statistics.median(best))
        assert agg["f"]["std"] == pytest.approx(statistics.stdev(best))
        assert all(r["config"]["algorithm"] == config.algorithm for r in agg["runs"])
    # batched configurations advance their runs together; runs still differ
    apo = aggregate(store, "demo", CONFIGS[1])
    assert apo["batched"] and len({r["best_f"] for r in apo["runs"]}) == 4
    assert len({r["seed"] for r in aggregate(store, "demo", CONFIGS[0])["runs"]}) == 3


def test_rerun_recomputes_nothing_finished(tmp_path, monkeypatch):
    store = ResultStore(tmp_path / "s.sqlite")
    run_configs("demo", CONFIGS, store)
    calls = []
    real = study_module.execute
    monkeypatch.setattr(study_module, "execute", lambda c, r: calls.append(r) or real(c, r))
    run_configs("demo", CONFIGS, store)
    assert calls == []
    bigger = RunConfig("pso", "sphere", iters=30, runs=3, dim=4, algorithm_params={"pop_size": 32}, timing="each")
    run_configs("demo", CONFIGS + [bigger], store)
    assert calls == [[0], [1], [2]]  # only the new configuration ran


KILLED_STUDY = textwrap.dedent("""
    import sys
    from heuriscale.studies import ResultStore, RunConfig, run_configs
    config = RunConfig("pso", "rastrigin", iters=4000, runs=8, dim=10, algorithm_params={"pop_size": 64}, timing="each")
    run_configs("killed", [config], ResultStore(sys.argv[1]))
""")


def test_study_killed_midway_resumes_without_recomputing(tmp_path, monkeypatch):
    db = tmp_path / "k.sqlite"
    script = tmp_path / "study.py"
    script.write_text(KILLED_STUDY)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    proc = subprocess.Popen([sys.executable, str(script), str(db)], env=env)
    finished = 0
    deadline = time.time() + 120
    while time.time() < deadline and finished < 2:
        time.sleep(0.2)
        if db.exists():
            try:
                finished = sqlite3.connect(db).execute("SELECT COUNT(*) FROM runs").fetchone()[0]
            except sqlite3.OperationalError:
                pass
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert 2 <= finished < 8, "the study should be killed midway"
    store = ResultStore(db)
    before = {r["repeat"]: r["best_f"] for r in store.runs("killed")}
    calls = []
    real = study_module.execute
    monkeypatch.setattr(study_module, "execute", lambda c, r: calls.append(r[0]) or real(c, r))
    config = RunConfig("pso", "rastrigin", iters=4000, runs=8, dim=10, algorithm_params={"pop_size": 64}, timing="each")
    run_configs("killed", [config], store)
    assert sorted(calls) == sorted(set(range(8)) - set(before))  # only the unfinished runs
    after = {r["repeat"]: r["best_f"] for r in store.runs("killed")}
    assert len(after) == 8 and all(after[k] == v for k, v in before.items())


def test_reproduce_writes_reports_with_paper_numbers_beside_ours(tmp_path):
    # paper 000's first three rows, as data: the same generic runner as `heuriscale reproduce`
    prs = PAPERS["prs"]
    mini = dataclasses.replace(prs, key="mini", experiments=[
        dataclasses.replace(prs.experiments[0], rows=prs.experiments[0].rows[:3], runs={"quick": 2, "paper": 2},
                            quick={"iters": ("cap", 50)})])
    report = reproduce_paper(mini, "quick", ["cpu"], tmp_path)
    text = report.read_text()
    assert "paper CUDA score" in text and "ours CPU score" in text and "0.05921" in text and "50 it x 2048" in text
    page = (tmp_path / "mini" / "report.html").read_text()
    assert page.startswith("<!doctype html>") and "Tables 2-5" in page and "MX250" in page
    csv = (tmp_path / "mini" / "results.csv").read_text().splitlines()
    assert len(csv) == 1 + 3 * 2  # 3 rows x 2 runs, one line per run
    calls = []
    real = study_module.execute
    study_module.execute = lambda c, r: calls.append(r) or real(c, r)
    try:
        reproduce_paper(mini, "quick", ["cpu"], tmp_path)  # resumes: nothing left to run
    finally:
        study_module.execute = real
    assert calls == []
    # a report written from a store names the hardware its runs recorded, not this machine's
    with sqlite3.connect(tmp_path / "mini" / "results.sqlite") as db:
        db.execute("UPDATE runs SET device_name = 'Recorded Xeon 9999'")
    text = reproduce_paper(mini, "quick", ["cpu"], tmp_path).read_text()
    assert "| cpu | " in text and "Recorded Xeon 9999 (engine" in text


def test_cli_reproduce_errors():
    res = CliRunner().invoke(app, ["reproduce", "nope"])
    assert res.exit_code == 2 and "unknown paper 'nope'" in res.output
    res = CliRunner().invoke(app, ["reproduce", "prs", "--scale", "huge"])
    assert res.exit_code == 2 and "unknown scale" in res.output


@pytest.mark.slow
def test_reproduce_all_quick(tmp_path):
    res = CliRunner().invoke(app, ["reproduce", "all", "--out", str(tmp_path), "--device", "cpu"])
    assert res.exit_code == 0, res.output
    for key in PAPERS:
        assert (tmp_path / key / "report.html").is_file() and (tmp_path / key / "results.csv").is_file()
    figures = list(tmp_path.glob("*/figures/*.png"))
    assert len(figures) >= 10
    rows = sqlite3.connect(tmp_path / "fep" / "results.sqlite").execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    assert rows > 0
