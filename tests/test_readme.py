"""The README's examples run as written (the Python blocks; the command lines, shrunk, on the CPU)."""

from pathlib import Path

from doc_examples import command_lines, python_blocks, run_command, run_python

README = (Path(__file__).parents[1] / "README.md").read_text()


def test_python_examples_run(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the examples write under scratch/
    assert python_blocks(README), "README has no Python example"
    run_python(README, "README.md")
    assert "torch.Size([10])" in capsys.readouterr().out


def test_command_lines_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples write under scratch/
    lines = command_lines(README, "run") + command_lines(README, "compare")
    assert len(lines) >= 2
    for line in lines:
        run_command(line)
