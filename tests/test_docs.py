"""docs/adding-an-algorithm.md as a newcomer reads it: its Python blocks run as written, its
excerpts of de.py are de.py's lines, and its command lines run (shrunk)."""

import re
import shlex
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from heuriscale.cli import app

ROOT = Path(__file__).parents[1]
GUIDE = (ROOT / "docs" / "adding-an-algorithm.md").read_text()


def test_the_guides_python_blocks_run():
    """In a process of their own: the guide registers an algorithm of its own, which must not
    join this test session's registry."""
    blocks = re.findall(r"```python\n(.*?)```", GUIDE, re.S)
    assert len(blocks) >= 2
    done = subprocess.run([sys.executable, "-c", "\n".join(blocks)], capture_output=True, text=True, timeout=600,
                          env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"}, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("eager tensor(")  # the user's algorithm ran eagerly: it declares no kernels


def test_the_guides_excerpts_of_de_are_its_code():
    source = (ROOT / "src" / "heuriscale" / "algorithms" / "de.py").read_text()
    excerpts = [b for b in re.findall(r"```\n(.*?)```", GUIDE, re.S) if "self.F" in b or 'name = "de"' in b]
    assert len(excerpts) == 2
    for block in excerpts:
        for line in block.splitlines():
            assert line.strip() in source, line


def test_the_guides_command_lines_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lines = [line.split("#")[0] for line in re.findall(r"^heuriscale (?:run|list) .*$", GUIDE, re.M)]
    assert len(lines) == 2
    for line in lines:
        line = re.sub(r"--evals \d+", "--evals 2000", line)
        args = shlex.split(line)[1:] + (["--device", "cpu", "-q"] if "run" in line else [])
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0, (line, res.output)
