import json

import pytest
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
