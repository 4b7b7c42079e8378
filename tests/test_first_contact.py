"""Issue 28, first contact: the command line answers help, `list` and typos without torch, a
plain install runs the main jobs (or says in one line what is missing, before any work),
reports print readably in an 80-column terminal, studies print progress lines into logs, and
a slow kernel build says what is happening."""

from __future__ import annotations

import importlib.util
import io
import json
import logging
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from heuriscale import catalog
from heuriscale.cli import app
from heuriscale.engine.progress import announcing_build
from heuriscale.terminal import ProgressLines, print_report, shorten

ROOT = Path(__file__).resolve().parents[1]


# -- 8: help, list and argument errors without torch -------------------------------------------
@pytest.mark.parametrize("args, code", [(["--help"], 0), (["list"], 0), (["run", "--help"], 0),
                                        (["run", "psoo"], 2), (["run", "pso", "--problem", "sphre"], 2),
                                        (["--version"], 0)])
def test_the_command_line_answers_without_importing_torch(args, code):
    probe = ("import sys\nfrom heuriscale.cli import app\n"
             f"try:\n    app({args!r}, prog_name='heuriscale')\nexcept SystemExit as e:\n    c = e.code\n"
             "print('EXIT', c, 'TORCH', 'torch' in sys.modules, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.stderr.strip().splitlines()[-1] == f"EXIT {code} TORCH False", done.stderr


def test_a_typo_names_the_closest_algorithm_and_problem():
    res = CliRunner().invoke(app, ["run", "psoo"])
    assert res.exit_code == 2 and "did you mean 'pso'?" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    res = CliRunner().invoke(app, ["run", "pso", "--problem", "cec2022-f13"])
    assert res.exit_code == 2 and "unknown problem 'cec2022-f13'" in res.stderr


def test_the_catalogue_equals_the_registries():
    """`heuriscale list` reads catalog.json; after changing an algorithm or a problem, run
    `python -m heuriscale.catalog` (this test says so when they differ)."""
    # in a fresh process: other tests register their own algorithms and problems in this one
    built = subprocess.run([sys.executable, "-c", "import json; from heuriscale import catalog; print(json.dumps(catalog.build()))"],
                           capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stderr
    assert json.loads(built.stdout) == catalog.load(), "catalog.json is stale: run `python -m heuriscale.catalog`"


def test_list_prints_every_registered_name_in_natural_order():
    res = CliRunner(env={"COLUMNS": "250"}).invoke(app, ["list", "problems"])
    assert res.exit_code == 0
    names = [entry["name"] for entry in catalog.load()["problems"]]
    where = [res.stdout.index(f" {name} ") for name in ("cec2017-f2", "cec2017-f10", "yao-f9", "yao-f10")]
    assert where == sorted(where)  # natural order: f2 before f10
    assert all(f" {name} " in res.stdout for name in names)
    assert names.index("cec2022-f2") < names.index("cec2022-f10")
    from heuriscale import algorithms

    assert set(entry["name"] for entry in catalog.load()["algorithms"]) <= set(algorithms.algorithm_names())


# -- 9: a plain install -------------------------------------------------------------------------
def test_a_plain_install_has_what_the_main_jobs_import():
    deps = " ".join(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"])
    for package in ("matplotlib", "scikit-image", "opfunu", "torch", "numba", "scipy"):
        assert package in deps, f"{package} is not a dependency of a plain install"


@pytest.mark.parametrize("command, missing, says", [
    (["compare", "-a", "pso", "--suite", "cec2022"], "opfunu", "pip install opfunu"),
    (["compare", "-a", "pso", "--suite", "classic"], "matplotlib", "pip install matplotlib"),
    (["reproduce", "apo"], "skimage", "pip install scikit-image"),
])
def test_a_missing_package_is_one_line_before_any_work(command, missing, says, tmp_path, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == missing else real(name, *a))
    res = CliRunner().invoke(app, [*command, "--out", str(tmp_path / "out")])
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], res.stderr
    assert not (tmp_path / "out").exists()  # nothing started


# -- 7: reports in a narrow terminal ---------------------------------------------------------------
def _printed(path: Path, width: int) -> str:
    buf = io.StringIO()
    print_report(Console(file=buf, width=width), path.read_text(), full="report.md")
    return buf.getvalue()


@pytest.mark.parametrize("paper", ["prs", "pso", "apo", "fep", "firefly"])
def test_reports_read_in_80_columns(paper):
    report = ROOT / "docs" / "reproductions" / "quick" / paper / "report.md"
    narrow, wide = _printed(report, 80), _printed(report, 300)
    for text, width in ((narrow, 80), (wide, 300)):
        assert max(map(len, text.splitlines())) <= width
        assert "…" not in text  # no cell cut short
    tables = [line for line in report.read_text().splitlines() if line.startswith("|---")]
    widest = max(tables, key=len).count("|") - 1
    if widest > 8:  # a table that cannot fit in 80 columns is compacted, and says so
        assert "more column" in narrow and "see report.md" in " ".join(narrow.split())
    assert "more column" not in wide


def test_a_compact_table_keeps_row_labels_and_speedups():
    text = ("| table | function | D | ours CPU score | ours CUDA score | paper CPU score | paper CUDA score | "
            "ours speedup | paper speedup |\n|" + "---|" * 9 + "\n"
            "| 2 | rastrigin | 4 | 0.11340000 | 0.06843000 | 0.20300000 | 0.24950000 | 8.94 | 30.1 |\n")
    buf = io.StringIO()
    print_report(Console(file=buf, width=45), text, full="report.md")
    out = buf.getvalue()
    assert "rastrigin" in out and "8.94" in out and "30.1" in out  # labels and speedups first
    assert "0.11340000" not in out
    assert "(ours CPU score, ours CUDA score, paper CPU score, paper CUDA score): see report.md" in " ".join(out.split())


# -- 13: progress in logs ----------------------------------------------------------------------
class _Config:
    def __init__(self, name, runs):
        self.algorithm, self.problem, self.dim, self.runs, self.name = name, "cec2022-f1", 10, runs, name

    def key(self):
        return self.name


def test_progress_lines_say_done_left_and_eta():
    buf = io.StringIO()
    lines = ProgressLines(Console(file=buf, width=200), "campaign", total=6, done=0, every=0)
    a, b = _Config("pso", 3), _Config("apo", 3)
    lines(a, 2)
    lines(b, 4)
    out = buf.getvalue().splitlines()
    assert out[0] == "campaign: 0 of 6 runs stored, 6 to run"
    assert out[1].startswith("campaign: 2 of 6 runs done (33%), 4 to run, about ")
    assert out[1].endswith("last stored: pso on cec2022-f1 D=10")
    assert out[2].startswith("campaign: 6 of 6 runs done (100%), 0 to run;") and "apo" in out[2]
    assert len(out) == 3


def test_a_bad_log_interval_is_said_and_replaced(monkeypatch):
    buf = io.StringIO()
    monkeypatch.setenv("HEURISCALE_LOG_EVERY", "often")
    lines = ProgressLines(Console(file=buf, width=200), "c", total=2)
    assert lines.every == 10.0 and "HEURISCALE_LOG_EVERY='often' is not a number" in buf.getvalue()


def test_progress_lines_are_spaced_in_time_but_the_last_always_prints():
    buf = io.StringIO()
    lines = ProgressLines(Console(file=buf, width=200), "c", total=4, every=3600)
    for name in "abcd":
        lines(_Config(name, 1), 1)
    out = buf.getvalue().splitlines()
    assert len(out) == 2 and "4 of 4 runs done" in out[1]


def test_a_label_is_shortened_between_words():
    title = "Standard PSO on CPU vs CUDA PSO with tree-reduction global best (paper 001)"
    assert shorten(title, 60) == "Standard PSO on CPU vs CUDA PSO with tree-reduction global…"
    assert shorten("Fast Evolutionary Programming", 60) == "Fast Evolutionary Programming"
    assert shorten("Supercalifragilistic", 10) == "Supercali…"  # one word too long: cut inside, the only way
    from heuriscale.cli.reproduce import progress_label
    from heuriscale.studies import PAPERS

    for paper in PAPERS.values():  # what `heuriscale reproduce` shows in its bar and its log lines
        label = progress_label(paper)
        words = label.removeprefix(f"{paper.key}: ").removesuffix("…").split()
        assert len(label) <= len(paper.key) + 2 + 60 and words == paper.title.split()[:len(words)], label


def test_compare_into_a_log_prints_progress_lines(tmp_path):
    res = CliRunner(env={"HEURISCALE_LOG_EVERY": "0"}).invoke(app, [
        "compare", "-a", "pso", "--suite", "classic", "--functions", "f1,f2", "--runs", "2",
        "--evals", "400", "--pop", "pso=20", "--device", "cpu", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    progress = [line for line in res.stderr.splitlines() if "runs done" in line]
    assert len(progress) == 2 and "4 of 4 runs done (100%)" in progress[-1], res.stderr


# -- 12: a kernel build says what is happening, once -----------------------------------------------
def test_a_slow_build_is_announced_once_and_a_fast_one_not(caplog):
    caplog.set_level(logging.INFO, logger="heuriscale")
    with announcing_build("native", "test-fast", after=0.5):
        pass
    with announcing_build("native", "test-slow", after=0.05):
        time.sleep(0.3)
    with announcing_build("native", "test-slow", after=0.05):
        time.sleep(0.3)
    said = [r.getMessage() for r in caplog.records if r.name == "heuriscale"]
    assert len(said) == 1 and "native CPU kernels of test-slow" in said[0] and "cached on disk" in said[0]
