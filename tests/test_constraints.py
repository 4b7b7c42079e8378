import pytest
import torch
from typer.testing import CliRunner

import heuriscale as hs
from heuriscale.cli import app
from heuriscale.problems.constraints import Constrained
from heuriscale.problems.engineering import SpringDesign

BEST = torch.tensor(SpringDesign.BEST_KNOWN, dtype=torch.float64)


def test_spring_at_the_best_known_design():
    p = SpringDesign()
    assert p.evaluate(BEST).item() == pytest.approx(0.01266523, abs=1e-7)
    assert (p.constraints(BEST) < 1e-7).all()
    assert p.constraints(BEST).shape == (4,)


def test_infeasible_design_is_reported_with_its_largest_violation():
    p = SpringDesign()
    bad = torch.tensor([0.05, 1.3, 15.0], dtype=torch.float64)  # outer diameter and stress far off
    g = p.constraints(bad)
    assert g.max() > 0
    wrapped = Constrained(p, method="penalty", weight=10.0)
    assert wrapped.evaluate(bad).item() == pytest.approx(p.evaluate(bad).item() + 10.0 * g.clamp(min=0).sum().item())
    # through the engine: a problem whose whole box is infeasible reports it
    boxed = hs.TorchFunction(lambda x: x.sum(-1), 3, [0.05, 1.25, 14.0], [0.06, 1.3, 15.0], name="bad-spring-box")
    boxed.n_constraints = 4
    boxed.constraints = p.constraints
    r = hs.minimize(Constrained(boxed), hs.PSO(pop_size=10), iters=5, runs=2, device="cpu", dtype="float64")
    assert r.extra["feasible"] == [False, False]
    worst = boxed.constraints(r.best_x).clamp(min=0).amax(-1)
    assert r.extra["max_violation"] == pytest.approx(worst.tolist())


@pytest.mark.parametrize("handling", ["penalty", "deb"])
def test_apo_designs_a_feasible_spring(handling):
    r = hs.minimize(hs.get_problem("spring", handling=handling), hs.APO(pop_size=50), iters=1000, runs=5, seed=0,
                    device="cpu", dtype="float64")
    assert all(r.extra["feasible"])
    assert max(r.extra["max_violation"]) < 1e-6
    assert max(r.extra["objective"]) <= 0.01270


def test_deb_rules_order():
    p = Constrained(SpringDesign(), method="deb")
    feasible = BEST.clone()
    feasible[2] += 0.5  # more coils: still feasible, heavier
    slightly, badly = BEST.clone(), torch.tensor([0.05, 1.3, 15.0], dtype=torch.float64)
    slightly[0] -= 1e-3
    f = p.evaluate(torch.stack([feasible, slightly, badly]))
    assert f[0] < f[1] < f[2]  # feasible < less violated < more violated
    assert p.offset > 2 * 0.0126


def test_bad_constraint_input():
    with pytest.raises(ValueError, match="declares no constraints"):
        Constrained(hs.get_problem("sphere", dim=2))
    with pytest.raises(ValueError, match="must be 'penalty' or 'deb'"):
        hs.get_problem("spring", handling="death")
    with pytest.raises(ValueError, match="problem 'spring' has dimension 3"):
        hs.get_problem("spring", dim=4)
    for weight in (float("inf"), float("nan"), "1e5", 0):
        with pytest.raises(ValueError, match=r"penalty weight must be > 0 \(a finite number\)"):
            hs.get_problem("spring", weight=weight)


def test_huge_penalty_weight_leaves_feasible_points_alone():
    # 1e300 is inf in float32, and inf * 0 would make every feasible point NaN.
    p = hs.get_problem("spring", weight=1e300).to("cpu", torch.float32)
    f = p.evaluate(torch.stack([BEST, torch.tensor([0.05, 1.3, 15.0], dtype=torch.float64)]).float())
    assert f[0].item() == pytest.approx(0.01266523, abs=1e-6) and f[1].item() == float("inf")


def test_cli_spring_reports_feasibility():
    res = CliRunner().invoke(app, ["run", "apo", "--problem", "spring", "--pop", "30", "--iters", "300", "--runs", "2",
                                   "--dtype", "float64", "--device", "cpu", "-q", "--seed", "0"])
    assert res.exit_code == 0, res.output
    assert "feasible runs" in res.output and "largest violation" in res.output
