import json

import pytest
import torch
from typer.testing import CliRunner

from heuriscale.cli import app

cli = CliRunner()


def test_run_pso_sphere_writes_json(tmp_path):
    path = tmp_path / "r.json"
    res = cli.invoke(app, ["run", "pso", "--problem", "sphere", "--dim", "10", "--iters", "300",
                           "--runs", "5", "--seed", "1", "--json", str(path), "--device", "cpu"])
    assert res.exit_code == 0, res.output
    for word in ("best f", "median f", "worst f", "mean ± std f", "evaluations / run", "wall time", "cpu"):
        assert word in res.output
    data = json.loads(path.read_text())
    assert len(data["best_f"]) == 5 and max(data["best_f"]) < 1e-6
    assert len(data["best_x"]) == 5 and len(data["best_x"][0]) == 10
    assert data["algorithm"]["name"] == "pso" and data["problem"]["name"] == "sphere" and data["seed"] == 1


def test_run_with_preset_params_and_problem_params(tmp_path):
    path = tmp_path / "r.json"
    res = cli.invoke(app, ["run", "pso", "--problem", "rosenbrock", "--dim", "3", "--pop", "16", "--iters", "20",
                           "--preset", "paper001", "-p", "c2=1.5", "-P", "bounds=-5,10", "--json", str(path), "-q"])
    assert res.exit_code == 0, res.output
    data = json.loads(path.read_text())
    assert data["algorithm"]["pop_size"] == 16 and data["algorithm"]["w"] == 1.0 and data["algorithm"]["c2"] == 1.5
    assert data["problem"]["bounds"] == [-5.0, 10.0]


def test_list_shows_algorithms_and_problems():
    res = cli.invoke(app, ["list"])
    assert res.exit_code == 0
    for word in ("pso", "paper001", "rastrigin", "fep-f5", "euclidean", "bounds"):
        assert word in res.output


@pytest.mark.parametrize(
    "args,message",
    [
        (["run", "pso", "--problem", "nope", "--dim", "2"], "unknown problem 'nope'"),
        (["run", "nope", "--dim", "2"], "unknown algorithm 'nope'"),
        (["run", "pso", "--dim", "2", "--pop", "1"], "at least 2"),
        (["run", "pso", "--dim", "0"], "dimension must be a positive integer"),
        (["run", "pso", "--dim", "2", "--iters", "0"], "iters must be an integer >= 1"),
        (["run", "pso", "--dim", "2", "--runs", "0"], "runs must be an integer >= 1"),
        (["run", "pso", "--dim", "2", "-P", "bounds=3,1"], "lower bound > upper bound"),
        (["run", "pso", "--dim", "2", "--device", "quantum"], "unknown device"),
        (["run", "pso", "--dim", "2", "-p", "w"], "--param expects key=value"),
        (["list", "things"], "unknown listing"),
    ],
)
def test_bad_input_exits_non_zero_without_traceback(args, message):
    res = cli.invoke(app, args)
    assert res.exit_code == 2
    assert message in res.output
    assert "Traceback" not in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)


# -- first contact (issue 28): paths, words, versions ------------------------------------------
@pytest.mark.parametrize("args, message", [
    (["--json", "/proc/x.json"], "--json /proc/x.json cannot be written"),
    (["--json", "."], "--json . is a folder: give a file path, e.g. result.json"),
    (["--checkpoint", "/proc/ck"], "--checkpoint /proc/ck cannot be written"),
    (["--output-image", "x.png"], "--output-image is for the otsu problem, not 'sphere'"),
])
def test_every_output_path_is_checked_before_the_first_step(args, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    started = []
    import heuriscale.engine

    # a run that starts is too late (the command imports minimize when it runs)
    monkeypatch.setattr(heuriscale.engine, "minimize", lambda *a, **k: started.append(1))
    res = CliRunner().invoke(app, ["run", "pso", "--dim", "2", "--iters", "5", "-q", *args])
    assert res.exit_code == 2 and not started
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], res.stderr


@pytest.mark.parametrize("command", [["reproduce", "prs"], ["compare", "-a", "pso", "--suite", "classic"]])
def test_an_output_folder_that_cannot_be_made_is_refused_first(command, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    res = CliRunner().invoke(app, [*command, "--out", str(blocker)])
    assert res.exit_code == 2 and "is a file: give a folder" in res.stderr


@pytest.mark.parametrize("args, says", [
    (["pso", "--engine", "fused", "--device", "cpu"], "use --engine native (its CPU kernels) or --engine eager"),
    (["cmaes", "--engine", "graph", "--device", "cpu"],
     "on cpu use --engine native (its CPU kernels) or --engine eager"),
    (["pso", "--pop", "1"], "got --pop 1"),
])
def test_errors_speak_the_command_lines_words(args, says, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "0")  # as on a machine without CUDA outside the tests
    res = CliRunner().invoke(app, ["run", *args, "--dim", "2", "--iters", "3", "-q"])
    assert res.exit_code == 2 and says in res.stderr and "engine='" not in res.stderr, res.stderr


def test_version_and_warmups_default_device():
    from heuriscale import __version__

    res = CliRunner().invoke(app, ["--version"])
    assert res.exit_code == 0 and res.stdout.startswith(f"heuriscale {__version__}")
    if not torch.cuda.is_available():  # defaults to the devices present: the CPU's kernels here
        res = CliRunner().invoke(app, ["warmup", "pso", "--problem", "sphere", "--dim", "2"])
        assert res.exit_code == 0 and "native" in res.stdout, res.output


def test_a_background_run_with_a_checkpoint_says_how_to_stop_it(tmp_path):
    import signal
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "heuriscale", "run", "pso", "--dim", "2", "--iters", "20", "-q",
                           "--checkpoint", str(tmp_path / "ck"), "--device", "cpu"], capture_output=True, text=True,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN), timeout=120)
    assert done.returncode == 0, done.stderr
    assert "SIGINT is ignored in this process" in done.stderr and "kill -TERM" in done.stderr
