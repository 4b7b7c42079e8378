"""The README's examples run as written (the Python block; the CLI lines on the CPU)."""

import re
import shlex
from pathlib import Path

from typer.testing import CliRunner

from heuriscale.cli import app

README = (Path(__file__).parents[1] / "README.md").read_text()


def test_python_example_runs(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the campaign examples write under scratch/
    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    assert blocks, "README has no Python example"
    for block in blocks:
        exec(compile(block.replace('device="auto"', 'device="cpu"'), "README.md", "exec"), {})
    assert "torch.Size([10])" in capsys.readouterr().out


def test_cli_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples write under scratch/ (a checkpoint, then resume it)
    lines = re.findall(r"^heuriscale run .*$", README, re.M)
    assert len(lines) >= 2
    for line in lines:
        # keep each example's shape, shrink its budget for the test run
        line = line.split("#")[0]
        line = re.sub(r"--iters \d+", "--iters 20", line)
        line = re.sub(r"--evals \d+", "--evals 2000", line)
        line = re.sub(r"--pop \d+", "--pop 256", line)
        line = re.sub(r"--json \S+", "", line)
        res = CliRunner().invoke(app, shlex.split(line)[1:] + ["--device", "cpu", "-q"])
        assert res.exit_code == 0, (line, res.output)


def test_compare_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples write under scratch/ or campaigns/
    lines = re.findall(r"^heuriscale compare .*$", README, re.M)
    assert len(lines) >= 2
    for line in lines:
        # keep each example's options, shrink it for the test run: 2 functions, 2 runs, 1,000 evaluations
        line = line.split("#")[0]
        line = re.sub(r"--runs \d+", "", line)
        line = re.sub(r"--evals(-per-dim)? \d+", "", line)
        line = re.sub(r"--device \S+", "", line)
        extra = ["--runs", "2", "--evals", "1000", "--device", "cpu"] + ([] if "--functions" in line else ["--functions", "1,2"])
        res = CliRunner().invoke(app, shlex.split(line)[1:] + extra)
        assert res.exit_code == 0, (line, res.output)
        assert "report written to" in res.output
