"""The examples of a page of documentation (README.md, docs/**.md), run as the tests run them:
Python blocks as written (on the CPU), command lines with their shape kept and their budgets
shrunk. One place, so that every page's examples run under the same rules."""

from __future__ import annotations

import re
import shlex

from typer.testing import CliRunner

from heuriscale.cli import app


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, re.S)


def run_python(text: str, where: str) -> None:
    """Every Python block of `text`, in order, in one namespace (a page's blocks build on each
    other), with device="auto" pinned to the CPU."""
    namespace: dict = {}
    for block in python_blocks(text):
        exec(compile(block.replace('device="auto"', 'device="cpu"'), where, "exec"), namespace)


def command_lines(text: str, command: str) -> list[str]:
    """The lines `heuriscale <command> ...` of `text` (a trailing comment dropped)."""
    return [line.split("  #")[0].strip() for line in re.findall(rf"^heuriscale {command}\b.*$", text, re.M)]


def run_command(line: str) -> str:
    """One `heuriscale run|compare|list` line, shrunk for a test and run on the CPU; its output.
    run: 20 iterations, 2,000 evaluations, populations of 256; compare: 2 runs of 1,000
    evaluations on 2 functions."""
    if line.startswith("heuriscale run "):
        line = re.sub(r"--iters \d+", "--iters 20", line)
        line = re.sub(r"--evals \d+", "--evals 2000", line)
        line = re.sub(r"--pop \d+", "--pop 256", line)
        line = re.sub(r"--json \S+", "", line)
        line = re.sub(r"--device \S+", "", line)
        args = shlex.split(line)[1:] + ["--device", "cpu", "-q"]
    elif line.startswith("heuriscale compare "):
        line = re.sub(r"--runs \d+", "", line)
        line = re.sub(r"--evals(-per-dim)? \d+", "", line)
        line = re.sub(r"--device \S+", "", line)
        args = shlex.split(line)[1:] + ["--runs", "2", "--evals", "1000", "--device", "cpu"]
        if "--functions" not in line:  # two functions of the suite, by its own names where they differ
            suite = re.search(r"--suite (\S+)", line)
            name = suite.group(1) if suite else "cec2022"
            args += ["--functions", f"{name}1,{name}2" if name in ("zdt", "dtlz") else "1,2"]
    else:
        args = shlex.split(line)[1:]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, (line, res.output)
    if args[0] == "compare":
        assert "report written to" in res.output, (line, res.output)
    return res.output
