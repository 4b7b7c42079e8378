"""CEC 2017 F1-F30 against the competition's official C implementation (tests/data/cec2017_reference)."""

import json
from pathlib import Path

import pytest
import torch

import heuriscale as hs
from heuriscale.problems import cec2017, cec2022
from heuriscale.problems.classic import rastrigin

REFERENCE = json.loads((Path(__file__).parent / "data" / "cec2017_reference.json").read_text())
CASES = {(c["function"], c["dim"]): c for c in REFERENCE["cases"]}


def problem(function: int, dim: int, dtype=torch.float64, device="cpu"):
    return hs.get_problem(f"cec2017-f{function}", dim=dim).to(device, dtype)


def test_reference_covers_the_whole_suite():
    expected = {(f, d) for f in range(1, 31) for d in cec2017.dims(f)}
    assert set(CASES) == expected
    assert all(len(c["x"]) == len(c["f"]) == len(c["rows"]) >= 9 for c in CASES.values())
    assert cec2017.dims(13) == (10, 30, 50, 100) and cec2017.dims(1) == (2, 10, 20, 30, 50, 100)


@pytest.mark.parametrize("case", sorted(CASES), ids=lambda c: f"F{c[0]}-D{c[1]}")
def test_official_values_float64(case, device):
    c = CASES[case]
    f = problem(*case, device=device).evaluate(torch.tensor(c["x"], dtype=torch.float64, device=device))
    torch.testing.assert_close(f.cpu(), torch.tensor(c["f"], dtype=torch.float64), rtol=1e-9, atol=0)


@pytest.mark.parametrize("dim", [2, 10, 20, 30, 50, 100])
def test_official_values_float32(dim, device):
    # o + 1e-6 N(0,1) is not a float32 point near o, and F2 overflows float32: those rows are left out
    for (function, d), c in sorted(CASES.items()):
        if d != dim:
            continue
        keep = [i for i, (row, v) in enumerate(zip(c["rows"], c["f"])) if row != "near-1e-6" and abs(v) < 1e38]
        x = torch.tensor([c["x"][i] for i in keep], dtype=torch.float32, device=device)
        f = problem(function, dim, torch.float32, device).evaluate(x)
        expected = torch.tensor([c["f"][i] for i in keep], dtype=torch.float64)
        torch.testing.assert_close(f.cpu().double(), expected, rtol=2e-3, atol=0, msg=f"F{function} D{dim}")


@pytest.mark.parametrize("function", range(1, 31))
def test_optimum_is_the_shift_with_the_bias(function):
    p = problem(function, 10)
    assert p.optimum_f == 100 * function
    assert p.evaluate(p.optimum_x).item() == pytest.approx(p.optimum_f, abs=1e-8)
    if function != 9:
        torch.testing.assert_close(p.optimum_x, p.shifts[0])
    assert bool(((p.optimum_x >= p.lower) & (p.optimum_x <= p.upper)).all())
    x = p.lower + (p.upper - p.lower) * torch.rand(3, 4, 10, dtype=torch.float64)  # batched, any leading dims
    assert p.evaluate(x).shape == (3, 4)
    assert (p.evaluate(x) > p.optimum_f).all()
    assert p.evaluate(x[0, 0]).shape == ()


def test_quirks_are_reproduced():
    x = torch.rand(5, 10, dtype=torch.float64) * 200 - 100
    # F8 has no step transform: equal to rotated Rastrigin at scale 5.12/100
    p8 = problem(8, 10)
    z = ((x - p8.shifts[0]) * 0.0512) @ p8.rotations[0].T
    torch.testing.assert_close(p8.evaluate(x), rastrigin(z) + 800)
    # F6's Schaffer F7 ignores the rotation
    p6 = problem(6, 10)
    before = p6.evaluate(x)
    p6.rotations = torch.eye(10, dtype=torch.float64)[None]
    torch.testing.assert_close(p6.evaluate(x), before)
    # F9's Levy: the shift is not the minimiser (official value at o, D = 10)
    p9 = problem(9, 10)
    shift_row = CASES[(9, 10)]["rows"].index("shift")
    assert p9.evaluate(p9.shifts[0]).item() == pytest.approx(CASES[(9, 10)]["f"][shift_row], rel=1e-12)
    assert p9.evaluate(p9.shifts[0]).item() > 901
    # F14 (hf04) at D = 10: segments of 2, 2, 2, 4 entries; Schaffer F7 reads the first two
    # entries of the shuffled vector, so nothing reads its own segment (entries 4-5)
    p14 = problem(14, 10)
    m, order = p14.rotations[0], p14.shuffles[0]
    for entries, read in ((order[4:6], False), (order[0:2], True)):
        step = torch.linalg.solve(m, torch.zeros(10, dtype=torch.float64).index_fill(0, entries, 1.0))
        assert torch.allclose(p14.evaluate(x + step), p14.evaluate(x)) is not read
    # F13 (hf03): the Lunacek segment (entries 6-9 at D = 10) is mirrored by the signs of the
    # *first* four shift entries; put it in its second funnel, z = mu1 - mu0 per entry
    p13 = problem(13, 10)
    o, m, order = p13.shifts[0], p13.rotations[0], p13.shuffles[0]
    first = o[:4] < 0
    assert not torch.equal(first, o[6:10] < 0)  # the data tells the two readings apart
    segment = torch.where(first, 24.5, -24.5).double()
    z = torch.zeros(10, dtype=torch.float64).index_put((order[6:10],), segment)
    value = p13.evaluate(o + torch.linalg.solve(m, z)) - 1300
    torch.testing.assert_close(value, cec2017.bi_rastrigin(segment * 0.1, first))
    assert not torch.allclose(value, cec2017.bi_rastrigin(segment * 0.1, o[6:10] < 0))


def test_composition_weights_match_the_c_code():
    # at the second component's optimum its weight is "INF": the value is that component's bias
    p = problem(21, 10)
    assert p.evaluate(p.shifts[1]).item() == pytest.approx(2100 + 100, abs=1e-9)
    # far outside every weight underflows to 0 and the C code averages with weights 1
    x = torch.full((10,), 1e4, dtype=torch.float64)
    c = CASES[(21, 10)]
    far = c["rows"].index("far")
    torch.testing.assert_close(p.evaluate(torch.tensor(c["x"][far], dtype=torch.float64)),
                               torch.tensor(c["f"][far], dtype=torch.float64), rtol=1e-12, atol=0)
    assert torch.isfinite(problem(27, 10, torch.float32).evaluate(x.float()))


def test_f2_is_registered_but_documented_as_left_out():
    entry = hs.problems.problem_entry("cec2017-f2")
    assert "left out" in entry.summary
    assert "left it out of the suite" in cec2017.__doc__
    assert problem(2, 10).evaluate(torch.zeros(10, dtype=torch.float64)).item() > 200


def test_bad_cec_input():
    with pytest.raises(ValueError, match="CEC 2017 F13 is defined for D = 10, 30, 50, 100 only"):
        hs.get_problem("cec2017-f13", dim=20)
    with pytest.raises(ValueError, match="CEC 2017 F1 is defined for D = 2, 10, 20, 30, 50, 100 only"):
        hs.get_problem("cec2017-f1", dim=5)
    with pytest.raises(ValueError, match="CEC 2017 F29 is defined for D = 10, 30, 50, 100 only"):
        hs.get_problem("cec2017-f29", dim=2)
    with pytest.raises(ValueError, match="has functions 1-30, got 31"):
        cec2017.CEC2017(31, 10)
    for bad in (0, 2.0, True):
        with pytest.raises(ValueError, match=f"has functions 1-30, got {bad}"):
            cec2017.CEC2017(bad, 10)
    with pytest.raises(ValueError, match="needs a dimension"):
        hs.get_problem("cec2017-f1")
    with pytest.raises(ValueError, match="unknown problem 'cec2017-f31'"):
        hs.get_problem("cec2017-f31", dim=10)


def test_missing_opfunu_is_a_clear_error(monkeypatch):
    cec2017.official_data.cache_clear()
    monkeypatch.setattr(cec2022.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ValueError, match="CEC 2017 problems .* pip install opfunu"):
        hs.get_problem("cec2017-f3", dim=10)
    monkeypatch.undo()
    cec2017.official_data.cache_clear()


def test_runs_in_the_engine():
    r = hs.minimize("cec2017-f3", hs.PSO(pop_size=20), dim=10, evals=2_000, runs=2, seed=0, device="cpu",
                    dtype="float64")
    assert torch.isfinite(r.best_f).all() and (r.best_f >= 300).all()
