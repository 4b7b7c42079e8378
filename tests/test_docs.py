"""docs/adding-an-algorithm.md as a newcomer reads it: its Python blocks run as written, its
excerpts of de.py are de.py's lines, and its command lines run (shrunk)."""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
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


BLACKBOX = ROOT / "docs" / "examples" / "blackbox" / "optimise.py"


def _optimise(tmp_path, checkpoint: str, **popen):
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"}
    args = [sys.executable, str(BLACKBOX), "--evals", "200", "--pop", "10", "--workers", "2", "--checkpoint",
            str(tmp_path / checkpoint)]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
                            **popen)


@pytest.mark.slow  # minutes under load on 2 cores: `pytest -m slow`
def test_the_black_box_example_survives_ctrl_c_and_continues_to_the_same_result(tmp_path):
    """docs/black-box.md's example: a program run as a subprocess per point, over 2 worker
    processes. Interrupted after its first checkpoint, then run again, it ends with exactly
    the result of a run that was never interrupted."""
    import signal
    import time

    whole = _optimise(tmp_path, "whole.ckpt")
    out, err = whole.communicate(timeout=300)
    assert whole.returncode == 0, err[-2000:]
    best = [line for line in out.splitlines() if line.startswith("best gains")]
    assert len(best) == 1 and "after 200 evaluations" in best[0]

    cut = _optimise(tmp_path, "cut.ckpt")
    started = time.monotonic()
    while not (tmp_path / "cut.ckpt").exists():
        assert cut.poll() is None and time.monotonic() - started < 120, cut.communicate()
        time.sleep(0.05)
    cut.send_signal(signal.SIGINT)
    out, err = cut.communicate(timeout=120)
    assert cut.returncode == 130, err[-2000:]
    assert "interrupted after" in err and "run the same command to continue" in err and "Traceback" not in err

    again = _optimise(tmp_path, "cut.ckpt")
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err[-2000:]
    assert "continuing" in err
    assert [line for line in out.splitlines() if line.startswith("best gains")] == best
