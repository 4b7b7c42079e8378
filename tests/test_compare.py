"""`heuriscale compare`: suites as data, a tiny campaign that writes every output, a rerun that
computes nothing and rewrites the same bytes, a killed campaign that resumes, bad input."""

import csv
import dataclasses
import json
import math
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from heuriscale import PSO, algorithm_names
from heuriscale.cli import app
from heuriscale.interrupt import Interrupted
from heuriscale.problems import Rotated, Shifted, get_problem
from heuriscale.studies import PAPERS, Suite, compare, get_suite
from heuriscale.studies.suites import CEC2017_FRACTIONS, cec2022_fractions

study_module = sys.modules["heuriscale.studies.study"]
compare_module = sys.modules["heuriscale.studies.compare"]

# 2 algorithms x 2 functions x 5 runs at a tiny budget, on the CPU
CAMPAIGN = ["compare", "--algorithms", "pso,apo", "--suite", "cec2022", "--functions", "f1,f3", "--dims", "10",
            "--runs", "5", "--evals", "1000", "--pop", "pso=20", "--pop", "apo=20", "-p", "apo.pf_max=0.2",
            "--device", "cpu"]
KWARGS = dict(suite="cec2022", functions=["f1", "f3"], dims=[10], runs=5, evals=1000, pops={"pso": 20, "apo": 20},
              params={"apo": {"pf_max": 0.2}}, device="cpu")
TEXT = ("report.md", "tables.tex", "runs.csv", "comparisons.csv", "campaign.json")


PROGRESS = re.compile(r".*: \d+ of \d+ runs (stored|done)")


def _messages(text: str) -> list[str]:
    """The non-empty lines of a study's stderr but its progress lines (printed into logs)."""
    return [line for line in text.splitlines() if line.strip() and not PROGRESS.match(line)]

def _cli(args):
    return CliRunner().invoke(app, args)


def _rows(db: Path) -> tuple[int, int]:
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
        total = con.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        distinct = con.execute("SELECT COUNT(DISTINCT study || config_key || '/' || repeat) FROM runs").fetchone()[0]
    return total, distinct


def _stored_rows(db: Path) -> int:
    """Rows in a store that may not exist yet, or be just created (no table yet)."""
    try:
        return _rows(db)[0] if db.exists() else 0
    except sqlite3.OperationalError:
        return 0


class Counter:
    """study.execute, counted; raises Interrupted (as SIGTERM would) on call number `fail_on`."""

    def __init__(self, real, fail_on=None):
        self.real, self.fail_on, self.calls = real, fail_on, 0

    def __call__(self, config, repeats, warm_timing=True):
        self.calls += 1
        assert not warm_timing  # a campaign does not time short runs again (it ranks errors)
        if self.calls == self.fail_on:
            raise Interrupted(signal.SIGTERM)
        return self.real(config, repeats, warm_timing)


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    out = tmp_path_factory.mktemp("campaign")
    res = _cli(CAMPAIGN + ["--out", str(out)])
    assert res.exit_code == 0, res.output
    return out, res


# -- suites --------------------------------------------------------------------------------------
def test_cec2022_suite_is_the_official_one():
    s = get_suite("cec2022")
    assert s.functions == tuple(f"cec2022-f{k}" for k in range(1, 13))
    assert s.all_dims() == (10, 20) and s.runs == 30
    assert s.budget("cec2022-f1", 10) == 200_000 and s.budget("cec2022-f12", 20) == 1_000_000
    for d in (10, 20):  # D^(k/5 - 3), k = 0..15: from D^-3 to 1, k = 10 at 1/D (the report's worked example)
        fx = s.fractions(d)
        assert len(fx) == 16 and fx[0] == pytest.approx(d**-3) and fx[10] == pytest.approx(1 / d) and fx[-1] == 1.0
    assert cec2022_fractions(10)[10] * 200_000 == pytest.approx(20_000)
    assert s.error(300.0 + 5e-9, 300.0) == 0.0 and s.error(301.5, 300.0) == pytest.approx(1.5)
    assert s.error(300.0 - 1e-12, 300.0) == 0.0  # float rounding below f*: never a negative error
    assert math.isnan(s.error(float("nan"), 300.0))


def test_cec2017_suite_leaves_f2_out():
    s = get_suite("cec2017")
    assert "cec2017-f2" not in s.functions and len(s.functions) == 29
    assert s.functions[:2] == ("cec2017-f1", "cec2017-f3")
    assert s.all_dims() == (10, 30, 50, 100) and s.runs == 51
    assert [s.budget("cec2017-f5", d) for d in (10, 30, 50, 100)] == [100_000, 300_000, 500_000, 1_000_000]
    assert s.fractions(30) == CEC2017_FRACTIONS and len(CEC2017_FRACTIONS) == 14
    assert s.error(100 + 5e-9, 100) == 0.0  # "error value smaller than 1e-8 will be taken as zero"
    with pytest.raises(ValueError, match="unknown function 'f2' in suite 'cec2017'"):
        s.resolve(["f2"])


def test_classic_suite_has_yaos_23_functions_with_their_dimensions_and_budgets():
    s = get_suite("classic")
    assert s.functions == tuple(f"yao-f{k}" for k in range(1, 24)) and s.runs == 50
    dims = {f: s.dims[f][0] for f in s.functions}
    assert all(dims[f"yao-f{k}"] == 30 for k in range(1, 14))
    assert [dims[f"yao-f{k}"] for k in range(14, 24)] == [2, 4, 2, 2, 2, 3, 6, 4, 4, 4]
    # Table I's generations x population 100
    assert s.budget("yao-f1", 30) == 150_000 and s.budget("yao-f5", 30) == 2_000_000
    assert s.budget("yao-f8", 30) == 900_000 and s.budget("yao-f14", 2) == 10_000 and s.budget("yao-f20", 6) == 20_000
    assert s.cells(s.functions, None)[0] == ("yao-f14", 2)  # by dimension, each function in its own
    assert s.cells(s.resolve(["f1", "f14"]), [30, 2]) == [("yao-f14", 2), ("yao-f1", 30)]
    problem = get_problem("yao-f8", dim=30)
    assert s.error(problem.optimum_f + 1.0, problem.optimum_f) == pytest.approx(1.0)
    # one convention in every suite: below 1e-8 is 0, never negative (2.67e-14 printed before)
    assert s.error(problem.optimum_f + 2.67e-14, problem.optimum_f) == 0.0
    assert s.error(problem.optimum_f - 1e-9, problem.optimum_f) == 0.0


def test_problem_params_shift_and_rotate_give_the_cec_treatment():
    plain = get_problem("rastrigin", dim=6)
    p = get_problem("rastrigin", dim=6, shift=4, rotate=4)
    assert isinstance(p, Rotated) and isinstance(p.inner, Shifted) and p.optimum_f == 0.0
    assert float(p.evaluate(p.optimum_x[None])) == pytest.approx(0.0, abs=1e-9)
    assert float(plain.evaluate(torch.zeros(1, 6, dtype=torch.float64))) == 0.0
    assert float(p.evaluate(torch.zeros(1, 6, dtype=torch.float64))) > 1.0
    assert get_problem("sphere", dim=3, shift=1).name == "shifted(sphere)"


def test_paper_003_table2_has_a_shifted_rotated_twin():
    exps = {e.name: e for e in PAPERS["apo"].experiments}
    plain, cec = exps["table2"], exps["table2-cec"]
    assert len(plain.rows) == len(cec.rows)
    for a, b in zip(plain.rows, cec.rows):
        assert a["paper"] == b["paper"] and a["tags"]["function"] == b["tags"]["function"]
        assert b["config"]["problem_params"]["shift"] == b["config"]["problem_params"]["rotate"]
        assert {k: v for k, v in b["config"].items() if k != "problem_params"} == \
            {k: v for k, v in a["config"].items() if k != "problem_params"}
    assert "resemble" in PAPERS["apo"].notes


# -- a campaign ------------------------------------------------------------------------------------
def test_tiny_campaign_writes_every_output(campaign):
    out, res = campaign
    for name in TEXT + ("report.html", "results.sqlite", "cd_D10.png", "convergence_D10.png"):
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    lines = (out / "runs.csv").read_text().splitlines()
    assert len(lines) == 1 + 2 * 2 * 5
    assert lines[0].split(",")[:8] == ["algorithm", "function", "dim", "repeat", "seed", "error", "evals", "wall_s"]
    assert sum(c.startswith("curve@") for c in lines[0].split(",")) == 16
    assert _rows(out / "results.sqlite") == (20, 20)
    md = (out / "report.md").read_text()
    assert "Budgets: D = 10: 1,000 evaluations" in md and "apo vs pso" in md and "pf_max=0.2" in md
    assert "heuriscale compare --suite cec2022 --algorithms pso,apo --dims 10 --runs 5 --evals 1000" in md
    doc = json.loads((out / "campaign.json").read_text())
    assert doc["meta"]["device"].startswith("cpu") and "float64" in doc["meta"]["device"]  # float64 on the CPU
    assert doc["curve_points"]["in_all"] == 20 * 16
    assert "campaign compute time" in res.output and "wall clock" in res.output
    for line in lines[1:]:
        cells = line.split(",")
        error, curve = float(cells[5]), [float(v) for v in cells[8:]]
        assert (error == 0 or error >= 1e-8) and curve[-1] == error  # the last point is the final error
        assert all(a >= b for a, b in zip(curve, curve[1:]))  # best-so-far never rises


def test_rerun_recomputes_nothing_and_writes_the_same_bytes_from_cli_and_python(campaign, tmp_path, monkeypatch):
    out, _ = campaign
    before = {name: (out / name).read_bytes() for name in TEXT}
    counter = Counter(study_module.execute)
    monkeypatch.setattr(study_module, "execute", counter)
    res = _cli(CAMPAIGN + ["--out", str(out)])
    assert res.exit_code == 0, res.output
    written = compare("pso,apo", out=out, **KWARGS)  # the Python API: the same campaign, the same configurations
    assert counter.calls == 0 and _rows(out / "results.sqlite") == (20, 20)
    assert written["md"] == out / "report.md" and written["store"] == out / "results.sqlite"
    for name in TEXT:
        assert (out / name).read_bytes() == before[name], name


def test_killed_campaign_resumes_without_duplicates(fast_figures, tmp_path, monkeypatch):
    out = tmp_path / "killed"
    counter = Counter(study_module.execute, fail_on=3)  # SIGTERM while the 3rd unit (of 4) runs
    monkeypatch.setattr(study_module, "execute", counter)
    res = _cli(CAMPAIGN + ["--out", str(out)])
    assert res.exit_code == 143, res.output
    lines = _messages(res.output)
    assert lines == [f"interrupted: 10 of 20 runs of campaign 'cec2022' are stored in {out / 'results.sqlite'}; "
                     "rerun the same command to resume"]
    assert _rows(out / "results.sqlite") == (10, 10) and not (out / "report.md").exists()
    counter = Counter(study_module.execute)
    monkeypatch.setattr(study_module, "execute", counter)
    res = _cli(CAMPAIGN + ["--out", str(out)])
    assert res.exit_code == 0, res.output
    assert counter.calls == 2 and _rows(out / "results.sqlite") == (20, 20)
    assert len((out / "runs.csv").read_text().splitlines()) == 21


def test_sigterm_ends_a_campaign_process_which_then_resumes(fast_figures, tmp_path):
    out, db = tmp_path / "sigterm", tmp_path / "sigterm" / "results.sqlite"
    args = CAMPAIGN[:CAMPAIGN.index("--evals")] + ["--evals", "8000"] + CAMPAIGN[CAMPAIGN.index("--evals") + 2:]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src"), "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "heuriscale", *args, "--out", str(out)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.time() + 60
        while _stored_rows(db) == 0 and proc.poll() is None and time.time() < deadline:
            time.sleep(0.02)
        assert proc.poll() is None, "the campaign ended before it could be stopped"
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 143, stderr
    line = _messages(stderr)
    assert len(line) == 1 and line[0].startswith("interrupted: ") and "of 20 runs of campaign 'cec2022'" in line[0]
    stored = _rows(db)[0]
    assert 5 <= stored < 20 and f"interrupted: {stored} of 20" in line[0]
    res = _cli(args + ["--out", str(out)])
    assert res.exit_code == 0, res.output
    assert _rows(db) == (20, 20)


def test_python_custom_suite(fast_figures, tmp_path):
    shifted = Shifted(get_problem("sphere", dim=5), seed=1)
    suite = Suite.custom([shifted, "rastrigin"], budget=600, dims=[5], name="mine", fractions=[0.5, 1.0])
    assert suite.functions == ("mine/shifted(sphere)", "rastrigin")
    written = compare(["pso", "fep"], suite, runs=3, pops={"pso": 20, "fep": 20}, device="cpu", out=tmp_path,
                      formats=("md", "csv"))
    assert set(written) >= {"md", "csv", "json", "store"} and not (tmp_path / "report.html").exists()
    lines = (tmp_path / "runs.csv").read_text().splitlines()
    assert len(lines) == 1 + 2 * 2 * 3 and lines[0].endswith("curve@0.5,curve@1")
    assert {line.split(",")[1] for line in lines[1:]} == {"shifted(sphere)", "rastrigin"}
    assert "compare() in Python, custom suite:" in written["md"].read_text()
    with pytest.raises(ValueError, match="not one of the built-in suites"):
        Suite.custom([shifted], budget=600, name="cec2022")
    with pytest.raises(ValueError, match="say in which dimensions"):
        Suite.custom(["sphere"], budget=600, name="x")


def test_a_problem_without_a_known_optimum_reports_its_values_negative_ones_too(fast_figures, tmp_path):
    """No f*: the report shows each run's best f as it is (here about -30), not an error floored at 0."""
    from heuriscale.problems.adapters import TorchFunction

    below_zero = TorchFunction(lambda x: (x * x).sum(-1) - 30.0, 3, -5.0, 5.0, name="below-zero")
    suite = Suite.custom([below_zero], budget=400, dims=[3], name="mine", fractions=[0.5, 1.0])
    written = compare(["pso"], suite, runs=5, pops={"pso": 20}, device="cpu", out=tmp_path, formats=("csv",))
    with closing(sqlite3.connect(written["store"])) as con:
        best = sorted(f for (f,) in con.execute("SELECT best_f FROM runs"))
    rows = list(csv.DictReader((tmp_path / "runs.csv").open()))
    errors = sorted(float(r["error"]) for r in rows)
    assert errors == pytest.approx(best, rel=1e-12) and max(errors) < -29.0
    assert all(float(r["curve@0.5"]) >= float(r["curve@1"]) for r in rows)  # best-so-far, as values


BAD = [
    (["--suite", "cec2099"], "unknown suite 'cec2099' (did you mean 'cec2022'?); known suites: bbob, cec2017, cec2022, classic"),
    (["--algorithms", "pso,nope"], f"unknown algorithm 'nope'; known algorithms: {', '.join(algorithm_names())}"),
    (["--functions", "f13"], "unknown function 'f13' in suite 'cec2022'; its functions: cec2022-f1,"),
    (["--dims", "30"], "suite 'cec2022' does not define D = 30; its dimensions: 10, 20"),
    (["--suite", "classic", "--functions", "f14", "--dims", "30"], "does not define D = 30 for the functions chosen; "
     "its dimensions: 2"),
    (["--reference", "fep"], "reference algorithm 'fep' is not in the campaign; choose one of: pso, apo"),
    (["-p", "pf_max=0.2"], "-p/--param expects algorithm.key=value, e.g. apo.pf_max=0.2; got 'pf_max=0.2'"),
    (["-p", "fep.q=3"], "parameters given for algorithm 'fep', which is not in the campaign; its algorithms: pso, apo"),
    (["-p", "pso.nope=1"], "algorithm 'pso' has no parameter 'nope'; its parameters are:"),
    (["--preset", "apo=nope"], "algorithm 'apo' has no preset 'nope'; its presets: paper003"),
    (["--pop", "pso"], "--pop expects algorithm=population size, e.g. pso=40; got 'pso'"),
    (["--dtype", "float16"], "unknown dtype 'float16'; choose float32 or float64"),
    (["--evals", "150"], "a budget of 150 evaluations leaves pso no iteration after its initial population"),
]


@pytest.mark.parametrize("extra, message", BAD, ids=[" ".join(b[0]) for b in BAD])
def test_bad_input_is_one_line_naming_the_choices(extra, message, tmp_path):
    args = ["compare", "--algorithms", "pso,apo", "--device", "cpu", "--out", str(tmp_path)] + extra
    if "--algorithms" in extra:
        args = args[:1] + args[3:]
    res = _cli(args)
    assert res.exit_code == 2
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], res.output
    assert not any(tmp_path.iterdir())  # nothing ran, nothing written


def test_curve_reads_the_last_whole_iteration_within_each_point():
    row = {"best_f": 1.0, "history": {"iter": [0, 1, 2, 4, 6, 8, 10], "f": [9, 8, 7, 5, 4, 3, 2]}}
    # init 10, step 10, 10 iterations: 110 evaluations; points after 5, 35, 55, 90 and 110 evaluations
    ten = PSO(pop_size=10)  # init 10, then 10 per step
    curve, early, earlier = compare_module._curve(row, 10, [5 / 110, 35 / 110, 0.5, 90 / 110, 1.0], 110, ten)
    assert curve == [9, 7, 5, 3, 1.0]  # 35 -> iteration 2; 55 -> 4; 90 -> 8 (kept); 110 -> final best
    assert (early, earlier) == (1, 0)
    curve, early, earlier = compare_module._curve(row, 10, [0.6, 1.0], 110, ten)
    assert curve == [5, 1.0] and earlier == 1  # iteration 5 was not kept: iteration 4's value


def test_cli_warns_before_a_campaign_whose_tests_cannot_reach_alpha(fast_figures, tmp_path):
    args = [a if a != "5" else "3" for a in CAMPAIGN]  # 3 runs x 2 functions: smallest adjusted p 2 x 2 / C(6, 3)
    res = _cli(args + ["--out", str(tmp_path / "three")])
    assert res.exit_code == 0, res.output
    warning = [line for line in res.output.splitlines() if line.startswith("warning: ")]
    assert len(warning) == 1 and "With 3 runs per algorithm and 2 functions at D = 10" in warning[0]
    assert "is 0.2, not below alpha = 0.05" in warning[0] and "at least 5 runs" in warning[0]  # 4: 2 x 2/70 = 0.057
    assert res.output.index("warning: ") < res.output.index("report written to")
    assert "Warning: With 3 runs" in (tmp_path / "three" / "report.md").read_text()  # the report says it too
    res = _cli(CAMPAIGN + ["--out", str(tmp_path / "five")])  # 5 runs x 2 functions: 0.008 < 0.05
    assert res.exit_code == 0 and "warning: " not in res.output
    assert not (tmp_path / "five" / "results.sqlite.lock").exists()  # a finished campaign leaves no lock file


def test_campaign_runs_on_cuda_take_the_eager_step_where_no_graph_can_capture_it():
    """CMA-ES's eigh synchronises with the host: a campaign's CUDA runs of it are eager (they
    asked for graph replay, which the engine refuses), the others' still replay graphs."""
    from heuriscale.studies.study import RunConfig, build, engine_for

    cmaes = RunConfig(algorithm="cmaes", problem="cec2022-f1", dim=10, iters=1000, device="cuda")
    assert engine_for(cmaes, *build(cmaes)) == "eager"
    de = dataclasses.replace(cmaes, algorithm="de")
    assert engine_for(de, *build(de)) == "graph"


@pytest.mark.gpu
def test_a_cuda_campaign_with_cmaes_runs(fast_figures, tmp_path):
    res = _cli(["compare", "--algorithms", "cmaes,de", "--suite", "cec2022", "--functions", "f1", "--dims", "10",
                "--runs", "3", "--evals", "3000", "--device", "cuda", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(open(tmp_path / "runs.csv")))
    assert sorted({r["algorithm"] for r in rows}) == ["cmaes", "de"] and len(rows) == 6


def test_a_campaign_rebuilt_from_its_files_writes_the_same_report(campaign, tmp_path, fast_figures):
    """rebuild_report (runs.csv and campaign.json, whose keys are stored sorted) writes the
    report the campaign wrote: parameters in each algorithm's field order, versions in one."""
    import shutil

    from heuriscale.studies.compare import rebuild_report

    out, _ = campaign
    for name in ("runs.csv", "campaign.json"):
        shutil.copy(out / name, tmp_path / name)
    rebuild_report(tmp_path, formats=("md",))
    assert (tmp_path / "report.md").read_text() == (out / "report.md").read_text()
