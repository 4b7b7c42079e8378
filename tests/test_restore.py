"""`heuriscale reproduce --restore`: a reproduction's runs put back from its results.csv."""

from __future__ import annotations

import csv
import subprocess
import sys

import pytest

from heuriscale.studies.papers import PAPERS
from heuriscale.studies.reproduce import configs_for, study_name
from heuriscale.studies.restore import restore_runs
from heuriscale.studies.store import ResultStore

PRS = PAPERS["prs"]  # its quick configurations need nothing beyond a CSV row (no snapshots)


def written_csv(path, paper=PRS, batched_seed=True, **change):
    """A results.csv as `reproduce` writes it for `paper` at quick scale on the CPU: one row
    per run, each run's best f its repeat + 1; runs of a batch carry the batch's first seed."""
    rows = []
    for exp in paper.experiments:
        for _, config in configs_for(exp, "quick", ["cpu"]):
            for repeat in range(config.runs):
                rows.append({"experiment": exp.name, **config.tags, "device": "cpu", "device_name": "Test CPU",
                             "repeat": repeat, "seed": config.seed(0 if batched_seed else repeat),
                             "best_f": repeat + 1.0, "wall_time_s": 2.5, "setup_time_s": 0.5,
                             "evals": 1000, "engine": "native", "cpu_threads": 2, **change})
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return rows


def test_every_run_of_an_unchanged_configuration_comes_back_once(tmp_path):
    rows = written_csv(tmp_path / "results.csv")
    with ResultStore(tmp_path / "s.sqlite") as store:
        counts = restore_runs(PRS, "quick", ["cpu"], tmp_path / "results.csv", store)
        assert counts == {"restored": len(rows), "stored": 0, "changed": 0, "unmatched": 0}
        config = configs_for(PRS.experiments[0], "quick", ["cpu"])[0][1]
        runs = store.runs(study_name(PRS, "quick"), config.key())
        assert [r["best_f"] for r in runs] == [r + 1.0 for r in range(config.runs)]
        assert runs[0]["wall_time"] == 2.5 and runs[0]["setup_time"] == 0.5 and runs[0]["device_name"] == "Test CPU"
        # one wall time shared by the configuration's runs: they were advanced together
        assert runs[0]["extra"]["batched_runs"] == config.runs
        assert runs[0]["extra"]["restored_from"] == str(tmp_path / "results.csv")
        again = restore_runs(PRS, "quick", ["cpu"], tmp_path / "results.csv", store)
        assert again == {"restored": 0, "stored": len(rows), "changed": 0, "unmatched": 0}


def test_a_configuration_changed_since_is_never_paired_with_old_numbers(tmp_path):
    rows = written_csv(tmp_path / "results.csv", batched_seed=False)
    with (tmp_path / "results.csv").open() as fh:
        text = fh.read()
    first = str(rows[0]["seed"])
    (tmp_path / "results.csv").write_text(text.replace(f",{first},", f",{int(first) + 1},", 1))
    with ResultStore(tmp_path / "s.sqlite") as store:
        counts = restore_runs(PRS, "quick", ["cpu"], tmp_path / "results.csv", store)
    assert counts["changed"] == 1 and counts["restored"] == len(rows) - 1


def test_rows_no_configuration_has_today_are_unmatched(tmp_path):
    rows = written_csv(tmp_path / "results.csv", ran="999 it x 1")
    with ResultStore(tmp_path / "s.sqlite") as store:
        assert restore_runs(PRS, "quick", ["cpu"], tmp_path / "results.csv", store)["unmatched"] == len(rows)


def test_configurations_that_need_more_than_a_row_are_rerun(tmp_path):
    written_csv(tmp_path / "results.csv", paper=PAPERS["pso"])
    with ResultStore(tmp_path / "s.sqlite") as store:
        counts = restore_runs(PAPERS["pso"], "quick", ["cpu"], tmp_path / "results.csv", store)
    positions = [c for e in PAPERS["pso"].experiments for _, c in configs_for(e, "quick", ["cpu"]) if c.snapshots]
    assert counts["unmatched"] == sum(c.runs for c in positions) > 0  # its figure needs the snapshots


def test_an_unknown_experiment_is_refused_with_the_known_ones(tmp_path):
    written_csv(tmp_path / "results.csv")
    with ResultStore(tmp_path / "s.sqlite") as store, pytest.raises(ValueError, match="has no experiment nope; its experiments: tables"):
        restore_runs(PRS, "quick", ["cpu"], tmp_path / "results.csv", store, experiments=["nope"])


def test_the_cli_restores_then_reports_without_running(tmp_path):
    rows = written_csv(tmp_path / "results.csv")
    cmd = [sys.executable, "-m", "heuriscale", "reproduce", "prs", "--scale", "quick", "--device", "cpu",
           "--out", str(tmp_path / "out"), "--restore", str(tmp_path / "results.csv")]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env={"COLUMNS": "200", **_env()})
    assert done.returncode == 0, done.stderr
    assert f"prs: {len(rows)} runs restored from" in " ".join(done.stdout.split())
    report = (tmp_path / "out" / "prs" / "report.md").read_text()
    assert f"{len(rows)} of these {len(rows)} runs were not run again" in report
    with (tmp_path / "out" / "prs" / "results.csv").open() as fh:
        assert {float(r["best_f"]) for r in csv.DictReader(fh)} == {float(r["best_f"]) for r in rows}


def test_the_cli_refuses_restore_without_a_file_or_for_all_papers(tmp_path):
    base = [sys.executable, "-m", "heuriscale", "reproduce", "--scale", "quick", "--device", "cpu",
            "--out", str(tmp_path / "out")]
    missing = subprocess.run(base[:4] + ["prs"] + base[4:] + ["--restore", str(tmp_path / "nope.csv")],
                             capture_output=True, text=True, timeout=120, env=_env())
    assert missing.returncode != 0 and "--restore: no file" in missing.stdout + missing.stderr
    written_csv(tmp_path / "results.csv")
    every = subprocess.run(base + ["--restore", str(tmp_path / "results.csv")], capture_output=True, text=True,
                           timeout=120, env=_env())
    assert every.returncode != 0 and "name the paper" in every.stdout + every.stderr


def _env():
    import os
    return {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
