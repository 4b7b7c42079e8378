"""Exports for COCO and IOHprofiler: the engine's milestones (first evaluation, target hits,
best's evaluation) on every engine, their storage, and the files written from a stored bbob
campaign, read back by cocopp (`python -m cocopp`) and iohinspector, the platforms' own
readers (test dependencies: `pip install -e .[test]`)."""

import json
import math
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import warnings
from contextlib import closing
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

import heuriscale as hs
from heuriscale.cli import app
from heuriscale.engine import Runner
from heuriscale.engine.history import TARGET_EXPONENTS, target_precisions
from heuriscale.engine.result import Result
from heuriscale.problems import get_problem
from heuriscale.studies import Suite, compare
from heuriscale.studies.compare import export
from heuriscale.studies.exports.ioh import BBOB_NAMES

history_module = sys.modules["heuriscale.engine.history"]


# -- the engine's milestones ---------------------------------------------------------------------
def _hits_from_history(result: Result, optimum: float) -> torch.Tensor:
    """hit_evals as the full history (every iteration kept) says: the first sample within each target."""
    within = result.history_f[:, :, None] <= optimum + target_precisions()  # (runs, T, K)
    first = within.int().argmax(1)  # first True along the samples
    return torch.where(within.any(1), result.history_evals[first], -1)


def _check_milestones(result: Result, optimum: float) -> None:
    assert result.history_iter.tolist() == list(range(result.iterations + 1))  # every iteration kept
    assert torch.equal(result.hit_evals, _hits_from_history(result, optimum))
    reached = result.hit_evals >= 0
    assert torch.all(result.hit_f[reached] <= (optimum + target_precisions()).expand_as(result.hit_f)[reached])
    # evaluations never decrease down the ladder; a target reached implies every higher one was
    assert all(a <= b for row in result.hit_evals.tolist() for a, b in zip(row, row[1:]) if b >= 0)
    assert torch.equal(reached, reached.cummin(1).values)
    found = (result.history_f == result.best_f[:, None]).int().argmax(1)  # the best's first sample
    assert torch.equal(result.best_evals, result.history_evals[found])


@pytest.mark.parametrize("engine", ["eager", "native"])
@pytest.mark.parametrize("problem, dtype", [("rastrigin", "float64"), ("bbob-f1", "float32")])
def test_milestones_are_every_iteration_exact_on_the_cpu_engines(engine, problem, dtype):
    """float32 on bbob f1 (f* = 79.48, not a float32): the targets rounded to float32 compare as float64 would."""
    runner = Runner(problem, "pso", dim=4, runs=5, seed=3, device="cpu", dtype=dtype, engine=engine)
    first = runner.state.f[:, 0].clone()  # the first point of each initial population: evaluation 1
    runner.step(300)
    result = runner.result()
    assert result.extra["engine"] == engine
    optimum = get_problem(problem, dim=4).optimum_f
    _check_milestones(result, optimum)
    assert torch.equal(result.first_f, first.double())
    assert (result.hit_evals[:, TARGET_EXPONENTS.index(0)] > 0).all()  # within 1 of f*: reached


@pytest.mark.slow
def test_milestones_on_the_fused_kernels_in_tritons_interpreter(fused_device):
    result = hs.minimize("sphere", "pso", dim=3, runs=3, iters=120, seed=1, device=fused_device, engine="fused")
    _check_milestones(result, 0.0)


@pytest.mark.gpu
@pytest.mark.parametrize("engine", ["eager", "graph", "compiled", "fused"])
def test_milestones_on_every_cuda_engine(engine):
    result = hs.minimize("rastrigin", "pso", dim=4, runs=64, iters=640, seed=2, device="cuda", dtype="float64",
                         engine=engine)
    _check_milestones(result, 0.0)


def test_targets_are_exact_where_the_history_is_sampled(monkeypatch):
    full = hs.minimize("sphere", "pso", dim=3, runs=4, iters=200, seed=5, device="cpu", engine="eager")
    monkeypatch.setattr(history_module, "HISTORY_SIZE", 10)  # keeps 10-20 samples: every 16th iteration here
    thin = hs.minimize("sphere", "pso", dim=3, runs=4, iters=200, seed=5, device="cpu", engine="eager")
    assert len(thin.history_iter) <= 20 < len(full.history_iter)
    assert torch.equal(thin.hit_evals, full.hit_evals) and torch.equal(thin.best_evals, full.best_evals)
    assert (full.hit_evals >= 0).sum() > 20  # many targets, most between two kept samples of `thin`


def test_hits_agree_with_evals_to_target_and_survive_json_and_checkpoints(tmp_path):
    k = TARGET_EXPONENTS.index(-10)  # precision 10^(-10/5) = 1e-2
    runner = Runner("sphere", "pso", dim=3, runs=4, seed=7, device="cpu", target=1e-2)
    runner.step(80)  # past the target (minimize would stop there), short of the ladder's end
    whole = runner.result()
    assert torch.equal(whole.evals_to_target, whole.hit_evals[:, k]) and (whole.evals_to_target > 0).all()
    again = Result.load_json(whole.save_json(tmp_path / "r.json"))
    run, j = (whole.hit_evals < 0).nonzero()[0].tolist()
    assert json.loads((tmp_path / "r.json").read_text())["hit_evals"][run][j] is None  # never reached: null
    for key in ("hit_evals", "hit_f", "first_f", "best_evals", "history_evals"):
        assert torch.equal(getattr(again, key), getattr(whole, key)), key
    first = Runner("sphere", "pso", dim=3, runs=4, seed=7, device="cpu", target=1e-2)
    first.step(30)
    resumed = Runner("sphere", "pso", dim=3, runs=4, seed=7, device="cpu", target=1e-2)
    resumed.load_state_dict(first.state_dict())
    resumed.step(50)
    split = resumed.result()
    for key in ("hit_evals", "hit_f", "first_f", "best_evals"):
        assert torch.equal(getattr(split, key), getattr(whole, key)), key


def test_ask_tell_records_the_same_milestones_as_minimize():
    opt = hs.AskTell("pso", "sphere", dim=3, runs=2, iters=40, seed=4)
    problem = get_problem("sphere", dim=3)
    while not opt.done:
        opt.tell(problem.evaluate(opt.ask()))
    told = opt.result()
    ran = hs.minimize("sphere", "pso", dim=3, runs=2, iters=40, seed=4, device="cpu", engine="eager")
    for key in ("hit_evals", "first_f", "best_evals"):
        assert torch.equal(getattr(told, key), getattr(ran, key)), key


def test_a_problem_without_a_known_optimum_records_no_targets():
    user = hs.problems.TorchFunction(lambda x: (x ** 2).sum(-1), 2, -1.0, 1.0)
    result = hs.minimize(user, "pso", runs=2, iters=10, seed=0, device="cpu")
    assert result.hit_evals is None and result.hit_f is None and result.first_f is not None


# -- a stored bbob campaign, exported -------------------------------------------------------------
BBOB = dict(dims=[2, 3], functions=["f1", "f7"], runs=3, evals_per_dim=300, pops={"pso": 10, "apo": 10}, device="cpu")


@pytest.fixture(scope="module")
def bbob(tmp_path_factory):
    """pso and apo on bbob f1 and f7 at D = 2, 3, instances 1-3, 300 D evaluations, both exports."""
    out = tmp_path_factory.mktemp("bbob")
    with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings():  # no report figures: the exports are tested
        warnings.filterwarnings("ignore", message="With 3 runs per algorithm")  # 3 instances: no significant test
        from heuriscale.viz import campaign as figures

        mp.setattr(figures, "cd_diagram", lambda *a, **k: Path(a[2]))
        mp.setattr(figures, "convergence_panels", lambda *a, **k: Path(a[3]))
        written = compare(["pso", "apo"], "bbob", out=out, formats=("md",), exports="coco,ioh", **BBOB)
    with closing(sqlite3.connect(out / "results.sqlite")) as db:
        rows = [dict(zip(("config", "repeat", "evals", "best_f", "history"), (json.loads(c), r, e, f, json.loads(h))))
                for c, r, e, f, h in db.execute("SELECT config, repeat, evals, best_f, history FROM runs")]
    for row in rows:  # a function's instances ran together: run r on instance r + 1
        c = row["config"]
        row["instance"] = c["problem_params"]["instance"][row["repeat"]]
        assert row["instance"] == row["repeat"] + 1
        row["optimum"] = get_problem(c["problem"], dim=c["dim"], instance=row["instance"]).optimum_f
    return out, written, rows


def _cell(rows, algorithm, problem, dim):
    return sorted((r for r in rows if (r["config"]["algorithm"], r["config"]["problem"], r["config"]["dim"])
                   == (algorithm, problem, dim)), key=lambda r: r["instance"])


def _blocks(path: Path) -> list[list[list[float]]]:
    """The runs of a COCO .dat/.tdat file: lists of lines of numbers, split at the % headers."""
    runs = []
    for line in path.read_text().splitlines():
        if line.startswith("%"):
            runs.append([])
        else:
            runs[-1].append([float(v) for v in line.split()])
    return runs


def test_stored_milestones_agree_with_the_stored_history(bbob):
    _, _, rows = bbob
    assert len(rows) == 2 * 2 * 2 * 3
    for row in rows:
        h, fopt = row["history"], row["optimum"]
        assert h["iter"] == list(range(len(h["iter"])))  # short runs: every iteration kept
        ks = [k for k, _, _ in h["hits"]]
        assert ks == list(TARGET_EXPONENTS[:len(ks)])  # reached: the ladder's top, without gaps
        for k, e, f in h["hits"]:
            first = next(i for i, v in enumerate(h["f"]) if v <= fopt + 10 ** (k / 5))
            assert (e, f) == (h["evals"][first], h["f"][first])
        assert [e for _, e, _ in h["hits"]] == sorted(e for _, e, _ in h["hits"])
        assert h["evals"][h["f"].index(row["best_f"])] == h["best_evals"] and h["first_f"] >= h["f"][0]


def test_coco_files_have_cocoexs_layout_and_the_stored_runs(bbob):
    out, written, rows = bbob
    assert written["coco"] == out / "coco"
    for algo in ("pso", "apo"):
        folder = out / "coco" / algo
        assert sorted(p.name for p in folder.iterdir()) == ["bbobexp_f1.info", "bbobexp_f7.info", "data_f1", "data_f7"]
        for k in (1, 7):
            lines = (folder / f"bbobexp_f{k}.info").read_text().splitlines()
            assert len(lines) == 3 * 2  # header, comment, data line per dimension
            for dim, (header, comment, data) in zip((2, 3), zip(lines[0::3], lines[1::3], lines[2::3])):
                assert header == (f"suite = 'bbob', funcId = {k}, DIM = {dim}, Precision = 1.000e-08, algId = '{algo}', "
                                  "logger = 'bbob', data_format = 'bbob-new2'")
                assert comment.startswith(f"% heuriscale ") and f": {algo} (pop_size=10, " in comment and "float64 on" in comment
                stem, *entries = data.split(", ")
                assert stem == f"data_f{k}/bbobexp_f{k}_DIM{dim}.dat"
                cell = _cell(rows, algo, f"bbob-f{k}", dim)
                for i, (entry, row) in enumerate(zip(entries, cell, strict=True), 1):
                    instance, evals, precision = re.fullmatch(r"(\d+):(\d+)\|(\S+)", entry).groups()
                    assert (int(instance), int(evals)) == (i, row["evals"]) and row["evals"] <= 300 * dim
                    assert float(precision) == pytest.approx(max(row["best_f"] - row["optimum"], 0), rel=0.06)
                dat, tdat = _blocks(folder / stem), _blocks(folder / (stem[:-4] + ".tdat"))
                assert len(dat) == len(tdat) == len(cell)
                for run, tlines, row in zip(dat, tdat, cell):
                    _check_dat(run, tlines, row)


def _check_dat(run, tlines, row):
    """A run's .dat: evaluation 1 first, each line a new band of f - f*, each engine hit a line; its .tdat ends
    at the run's evaluations; every line the stored best-so-far at that evaluation count."""
    h, fopt = row["history"], row["optimum"]
    evals = [int(line[0]) for line in run]
    assert evals[0] == 1 and evals == sorted(set(evals)) and evals[-1] == row["evals"]
    assert run[0][2] == pytest.approx(h["first_f"] - fopt, rel=1e-9, abs=1e-12)
    precisions = [line[2] for line in run[:-1]]
    assert all(a > b for a, b in zip(precisions, precisions[1:]))  # strictly improving up to the last line
    bands = [math.floor(5 * math.log10(p)) if p > 0 else -math.inf for p in precisions]
    assert all(a > b for a, b in zip(bands, bands[1:]))  # every line in a band of its own
    for k, e, f in h["hits"]:  # the engine's first hit of each target is the .dat's first line within it,
        line = next(ln for ln in run if ln[2] <= 10 ** (k / 5) * (1 + 1e-9))  # or evaluation 1 if that was
        if h["first_f"] <= fopt + 10 ** (k / 5):
            assert int(line[0]) == 1 and line[3] == pytest.approx(h["first_f"], rel=1e-9)
        else:
            assert int(line[0]) == e and line[2] == pytest.approx(max(f - fopt, 0), rel=1e-9, abs=1e-15)
    stored = dict(zip(h["evals"], h["f"]))
    for line in run[1:] + tlines[1:]:
        if int(line[0]) in stored:
            assert line[3] == pytest.approx(stored[int(line[0])], rel=1e-9)
    assert int(tlines[0][0]) == 1 and int(tlines[-1][0]) == row["evals"]
    assert [ln[0] for ln in tlines] == sorted({ln[0] for ln in tlines})


def _fields(header: str) -> dict:
    return dict(part.split(" = ", 1) for part in header.split(", "))


def test_coco_files_match_what_cocoexs_own_logger_writes(bbob, tmp_path, monkeypatch):
    cocoex = pytest.importorskip("cocoex", reason="cocoex (coco-experiment) is the reference logger")
    out, _, _ = bbob
    monkeypatch.chdir(tmp_path)  # cocoex writes under ./exdata
    observer = cocoex.Observer("bbob", "result_folder:reference algorithm_name:pso")
    suite = cocoex.Suite("bbob", "", "function_indices:1 dimensions:2 instance_indices:1")  # kept: owns the problem
    problem = suite[0]
    problem.observe_with(observer)
    for x in torch.linspace(-4, 4, 20, dtype=torch.float64).reshape(10, 2).numpy():
        problem(x)
    problem.free()
    reference, ours = Path(observer.result_folder), out / "coco" / "pso"
    theirs_info, our_info = (p.read_text().splitlines() for p in (reference / "bbobexp_f1.info", ours / "bbobexp_f1.info"))
    theirs, mine = _fields(theirs_info[0]), _fields(our_info[0])
    assert list(mine) == [k for k in theirs if k in mine] and set(theirs) - set(mine) == {"coco_version", "settings"}
    assert all(mine[k] == theirs[k] for k in mine)  # suite, funcId, DIM, Precision, algId, logger, data_format
    assert theirs_info[1].startswith("%") and our_info[1].startswith("%")
    entry = re.compile(r"data_f1/bbobexp_f1_DIM2\.dat(, \d+:\d+\|\d\.\de[+-]\d\d)+")
    assert entry.fullmatch(theirs_info[2]) and entry.fullmatch(our_info[2])
    theirs_dat = (reference / "data_f1" / "bbobexp_f1_DIM2.dat").read_text().splitlines()
    our_dat = (ours / "data_f1" / "bbobexp_f1_DIM2.dat").read_text().splitlines()
    assert our_dat[0] == theirs_dat[0]  # the same header, with instance 1's f* = 79.48
    number = r"[+-]\d\.\d{9}e[+-]\d\d"
    line = re.compile(rf"\d+ 0 {number} {number} {number}")  # cocoex's columns; then its x columns, not ours
    assert line.match(theirs_dat[1]) and line.fullmatch(our_dat[1]) and theirs_dat[1].startswith("1 ")


def test_ioh_files_match_what_iohs_own_logger_writes(bbob, tmp_path):
    ioh = pytest.importorskip("ioh", reason="ioh (IOHexperimenter) is the reference logger")
    out, _, _ = bbob
    assert BBOB_NAMES == tuple(ioh.get_problem(k, 1, 2, ioh.ProblemClass.BBOB).meta_data.name for k in range(1, 25))
    logger = ioh.logger.Analyzer(root=str(tmp_path), folder_name="reference", algorithm_name="pso")
    problem = ioh.get_problem(1, 1, 2, ioh.ProblemClass.BBOB)
    problem.attach_logger(logger)
    for x in torch.linspace(-4, 4, 20, dtype=torch.float64).reshape(10, 2).tolist():
        problem(x)
    logger.close()
    theirs = json.loads((tmp_path / "reference" / "IOHprofiler_f1_Sphere.json").read_text())
    mine = json.loads((out / "ioh" / "pso" / "IOHprofiler_f1_Sphere.json").read_text())
    assert list(mine) == list(theirs) and mine["attributes"] == theirs["attributes"]
    for key in ("function_id", "function_name", "maximization"):
        assert mine[key] == theirs[key], key
    scenario_t, scenario_m = theirs["scenarios"][0], mine["scenarios"][0]
    assert list(scenario_m) == list(scenario_t) and scenario_m["path"] == scenario_t["path"]
    assert list(scenario_m["runs"][0]) == list(scenario_t["runs"][0])
    assert list(scenario_m["runs"][0]["best"]) == list(scenario_t["runs"][0]["best"])
    theirs_dat = (tmp_path / "reference" / scenario_t["path"]).read_text().splitlines()
    our_dat = (out / "ioh" / "pso" / scenario_m["path"]).read_text().splitlines()
    assert our_dat[0] == theirs_dat[0] == "evaluations raw_y" and our_dat[1].startswith("1 ") and theirs_dat[1].startswith("1 ")
    # ioh logs a bbob function's f - f* as raw_y (what our files hold for them): its first line is
    # the first point's f minus f* = 79.48
    fresh = ioh.get_problem(1, 1, 2, ioh.ProblemClass.BBOB)
    assert float(theirs_dat[1].split()[1]) == pytest.approx(fresh([-4.0, -4 + 8 / 19]) - 79.48, rel=1e-9)


def test_ioh_files_load_in_iohinspector_with_the_stored_runs(bbob):
    iohinspector = pytest.importorskip("iohinspector", reason="iohinspector reads the IOH export (pip install -e .[test])")
    pl = pytest.importorskip("polars", reason="iohinspector's data frames")
    out, written, rows = bbob
    manager = iohinspector.DataManager()
    manager.add_folder(str(written["ioh"]))
    overview = manager.overview
    assert manager.n_runs == len(rows)
    assert sorted({(f.id, f.name) for f in manager.functions}) == [(1, BBOB_NAMES[0]), (7, BBOB_NAMES[6])]
    data = manager.load(monotonic=True, include_meta_data=True)
    final = data.group_by("data_id").agg(pl.col("raw_y").last(), pl.col("evaluations").min().alias("first"))
    joined = overview.join(final, on="data_id")
    assert joined["first"].to_list() == [1] * len(rows)  # every run starts at evaluation 1
    expected = {}
    for row in rows:
        c = row["config"]
        key = (c["algorithm"], int(c["problem"].split("-f")[1]), c["dim"], row["instance"])
        expected[key] = (row["evals"], max(row["best_f"] - row["optimum"], 0.0))
    got = {(r["algorithm_name"], r["function_id"], r["dimension"], r["instance"]): (r["evals"], r["best_y"])
           for r in joined.iter_rows(named=True)}
    assert got.keys() == expected.keys()
    for key, (evals, best) in expected.items():
        assert got[key][0] == evals and got[key][1] == pytest.approx(best, rel=1e-12, abs=1e-300)
    assert joined.filter(pl.col("raw_y") != pl.col("best_y")).height == 0  # the data's last value is the best


def test_iohinspector_reads_the_coco_files_too(bbob):
    iohinspector = pytest.importorskip("iohinspector", reason="iohinspector also reads COCO data")
    out, _, rows = bbob
    manager = iohinspector.DataManager()
    manager.add_folder(str(out / "coco"))
    assert manager.n_runs == len(rows)


@pytest.mark.slow  # minutes under load on 2 cores: `pytest -m slow`
def test_cocopp_post_processes_the_coco_export(bbob, tmp_path):
    import cocopp  # noqa: F401  a test dependency (pip install -e .[test]): a broken install fails here
    out, _, _ = bbob
    folders = sorted(str(p) for p in (out / "coco").iterdir())
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = subprocess.run([sys.executable, "-m", "cocopp", "-o", str(tmp_path / "pp"), *folders], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (tmp_path / "pp" / "index.html").is_file()
    figures = list((tmp_path / "pp").rglob("pprldmany_02D_noiselessall.svg"))
    assert figures and figures[0].stat().st_size > 0
    assert list((tmp_path / "pp").rglob("pptables_f007_03D.tex"))
    # cocopp's complaints about data (maxevals disagree, first evaluation missing, ...) would be warnings here;
    # the only ones expected: no network for its archives, and fewer than its 15 instances per function
    benign = ("connect", "workable URL", "pip install -U cocopp", "connection is stable", "restored",
              "update_all", "valid definition files", "less than 15 instances", "was not consistent", "warnings.warn(")
    complaints = [ln for ln in (proc.stdout + proc.stderr).splitlines()
                  if ("Warning" in ln or "rror" in ln) and not any(b in ln for b in benign)]
    assert not complaints, complaints


# -- entry points: the command line, a finished folder, other suites ----------------------------------
def test_cli_exports_and_bad_export_names(tmp_path):
    base = ["compare", "--algorithms", "pso", "--suite", "bbob", "--functions", "f1", "--dims", "2", "--runs", "2",
            "--evals", "200", "--pop", "pso=10", "--device", "cpu"]
    res = CliRunner().invoke(app, base + ["--export", "coco,nope", "--out", str(tmp_path / "bad")])
    assert res.exit_code == 2 and "unknown export 'nope'; known exports: coco, ioh" in res.output
    res = CliRunner().invoke(app, ["compare", "--algorithms", "pso", "--suite", "classic", "--functions", "f14",
                                   "--export", "coco", "--device", "cpu", "--out", str(tmp_path / "classic")])
    assert res.exit_code == 2 and "--export coco writes COCO's bbob data format" in res.output
    assert "--export ioh" in res.output
    assert not any((tmp_path / "bad").iterdir()) and not any((tmp_path / "classic").iterdir())  # nothing ran
    res = CliRunner().invoke(app, base + ["--export", "coco,ioh", "--out", str(tmp_path / "ok")])
    assert res.exit_code == 0, res.output
    assert f"python -m cocopp {tmp_path / 'ok' / 'coco'}/*/" in res.output
    assert (tmp_path / "ok" / "coco" / "pso" / "bbobexp_f1.info").is_file()
    assert (tmp_path / "ok" / "ioh" / "pso" / "IOHprofiler_f1_Sphere.json").is_file()


def test_export_from_a_finished_folder_writes_the_same_files(bbob, tmp_path):
    out, _, _ = bbob
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    for name in ("coco", "ioh"):
        shutil.rmtree(copy / name)
    assert export(copy, "coco,ioh") == {"coco": copy / "coco", "ioh": copy / "ioh"}
    for path in (out / "coco").rglob("*"):
        if path.is_file():
            assert (copy / path.relative_to(out)).read_bytes() == path.read_bytes(), path
    with pytest.raises(ValueError, match="unknown export 'cocco' \\(did you mean 'coco'\\?\\); known exports: coco, ioh"):
        export(copy, ["cocco"])
    with pytest.raises(ValueError, match="has no campaign.json"):
        export(tmp_path, "ioh")


def test_an_older_store_exports_from_its_sampled_history(bbob, tmp_path):
    """Rows written before the milestones (history = iter and f only) and a campaign.json without its
    configuration list: the export still works, from the samples, and says so."""
    out, _, rows = bbob
    old = tmp_path / "old"
    shutil.copytree(out, old, ignore=shutil.ignore_patterns("coco", "ioh"))
    with closing(sqlite3.connect(old / "results.sqlite")) as db, db:
        for key, repeat, history in db.execute("SELECT config_key, repeat, history FROM runs").fetchall():
            h = json.loads(history)
            db.execute("UPDATE runs SET history = ? WHERE config_key = ? AND repeat = ?",
                       (json.dumps({"iter": h["iter"], "f": h["f"]}), key, repeat))
    doc = json.loads((old / "campaign.json").read_text())
    del doc["config_keys"]
    (old / "campaign.json").write_text(json.dumps(doc))
    with pytest.warns(UserWarning, match="predate the milestones"):
        export(old, "coco")
    new = _blocks(out / "coco" / "pso" / "data_f1" / "bbobexp_f1_DIM2.dat")
    older = _blocks(old / "coco" / "pso" / "data_f1" / "bbobexp_f1_DIM2.dat")
    for a, b, row in zip(older, new, _cell(rows, "pso", "bbob-f1", 2), strict=True):
        # evaluation 1 holds the initial population's best (its 10 evaluations); after them, every
        # iteration was kept, so the same crossings as the milestones give
        assert a[0][0] == 1 and a[0][3] == pytest.approx(row["history"]["f"][0], rel=1e-9)
        assert a[1:] == [line for line in b if line[0] > 10]


def test_ioh_export_of_a_suite_without_bbob_writes_raw_values(tmp_path, fast_figures):
    suite = Suite.custom(["sphere"], budget=300, dims=[2], name="tiny", runs=2)
    written = compare(["pso"], suite, runs=2, pops={"pso": 10}, device="cpu", out=tmp_path, formats=("md",),
                      exports=["ioh"])
    doc = json.loads((written["ioh"] / "pso" / "IOHprofiler_f1_sphere.json").read_text())
    assert (doc["suite"], doc["function_id"], doc["function_name"], doc["version"]) == ("tiny", 1, "sphere", "0.4.2")
    runs = doc["scenarios"][0]["runs"]
    assert [r["evals"] for r in runs] == [300, 300] and [r["instance"] for r in runs] == [1, 1]
    dat = (written["ioh"] / "pso" / doc["scenarios"][0]["path"]).read_text().split("evaluations raw_y\n")[1:]
    for run, text in zip(runs, dat):
        values = [float(line.split()[1]) for line in text.splitlines()]
        assert values == sorted(values, reverse=True) and values[-1] == run["best"]["y"]


def test_float32_runs_are_said_to_resolve_f_minus_fstar_coarsely(tmp_path, fast_figures):
    with pytest.warns(UserWarning, match=r"float32 resolve f - f\* to about 5e-06"):  # bbob f1 instance 1: f* = 79.48
        compare(["pso"], "bbob", functions=["f1"], dims=[2], runs=1, evals=200, pops={"pso": 10}, device="cpu",
                dtype="float32", out=tmp_path, formats=("md",), exports="ioh")
