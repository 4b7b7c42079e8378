"""Shifted, Rotated and cec_treatment: the optimum moves with the shift and stays put under
the rotation, everything follows from the seed, M is orthogonal and Haar, errors are clear."""

import numpy as np
import pytest
import torch

import heuriscale as hs
from heuriscale.problems import NumpyFunction, Rotated, Shifted, TorchFunction
from heuriscale.problems.classic import rastrigin, sphere
from heuriscale.problems.transforms import cec_treatment, random_orthogonal
from heuriscale.problems.yao import YaoProblem


def _rastrigin(dim=5):
    return hs.get_problem("rastrigin", dim=dim)


def _at_optimum(p):
    return p.evaluate(p.optimum_x).item()


def test_shift_is_uniform_from_the_seed_and_moves_the_optimum(device):
    inner = hs.get_problem("sphere", dim=6)  # box [-100, 100], wider than the radius
    p = Shifted(inner, seed=11, radius=80.0)
    u = torch.rand(6, generator=torch.Generator().manual_seed(11), dtype=torch.float64)
    torch.testing.assert_close(p.shift, -80.0 + 160.0 * u, rtol=0, atol=1e-12)
    torch.testing.assert_close(p.optimum_x, p.shift)
    assert p.name == "shifted(sphere)" and p.optimum_f == 0.0
    q = p.to(device, torch.float64)
    x = torch.randn(7, 6, dtype=torch.float64, device=device)
    torch.testing.assert_close(q.evaluate(x), sphere(x - q.shift))
    assert q.evaluate(q.optimum_x).item() == 0.0


@pytest.mark.parametrize("name,build", [
    ("rastrigin", lambda: _rastrigin(5)),
    ("yao-f5", lambda: YaoProblem(5, 4)),  # minimiser at 1
    ("yao-f19", lambda: YaoProblem(19)),  # box [0, 1], much narrower than the radius
    ("yao-f17", lambda: YaoProblem(17)),  # a box of two widths
    ("yao-f21", lambda: YaoProblem(21)),
])
@pytest.mark.parametrize("seed", [0, 1, 2**64 - 1])
def test_shifted_optimum_keeps_its_value_inside_the_box(name, build, seed):
    inner = build()
    p = Shifted(inner, seed=seed)
    assert bool(((p.optimum_x >= p.lower) & (p.optimum_x <= p.upper)).all())
    assert not torch.equal(p.optimum_x, inner.optimum_x)
    assert _at_optimum(p) == pytest.approx(inner.optimum_f, rel=1e-9, abs=1e-9)
    torch.testing.assert_close(p.lower, inner.lower)
    torch.testing.assert_close(p.upper, inner.upper)


def test_narrow_box_restricts_the_draw_to_shifts_that_keep_the_optimum_inside():
    inner = YaoProblem(19)  # [0, 1]^3
    u = torch.rand(3, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    lo, hi = -inner.optimum_x, 1.0 - inner.optimum_x
    torch.testing.assert_close(Shifted(inner, seed=5).shift, lo + u * (hi - lo))


def test_shift_reproducible_and_seed_dependent():
    a, b, c = Shifted(_rastrigin(), 3), Shifted(_rastrigin(), 3), Shifted(_rastrigin(), 4)
    assert torch.equal(a.shift, b.shift) and not torch.equal(a.shift, c.shift)
    assert bool((Shifted(_rastrigin(), 3, radius=0.0).shift == 0).all())


def test_rotation_is_orthogonal_reproducible_and_seed_dependent():
    m = random_orthogonal(40, 1)
    torch.testing.assert_close(m @ m.T, torch.eye(40, dtype=torch.float64), rtol=0, atol=1e-12)
    p, q = Rotated(_rastrigin(40), 1), Rotated(_rastrigin(40), 1)
    torch.testing.assert_close(p.matrix @ p.matrix.T, torch.eye(40, dtype=torch.float64), rtol=0, atol=1e-12)
    assert torch.equal(p.matrix, q.matrix)
    assert not torch.equal(p.matrix, Rotated(_rastrigin(40), 2).matrix)
    # same seed, different stream than the shift's
    assert not torch.allclose(Rotated(_rastrigin(2), 0).matrix, random_orthogonal(2, 0))


def test_rotation_is_haar_not_biased_by_the_qr_signs():
    """Without the sign fix, LAPACK's QR makes M[0, 0] = -|g_00| / |g_0| < 0 always."""
    first = torch.tensor([random_orthogonal(3, s)[0, 0].item() for s in range(400)])
    assert abs(first.mean().item()) < 0.1
    assert 0.3 < (first > 0).double().mean().item() < 0.7


def test_rotated_evaluates_around_the_optimum(device):
    inner = YaoProblem(5, 4)  # Rosenbrock, minimiser (1, 1, 1, 1)
    p = Rotated(inner, seed=9).to(device, torch.float64)
    assert p.name == "rotated(yao-f5)"
    torch.testing.assert_close(p.optimum_x, inner.optimum_x.to(device))
    assert _at_optimum(p) == pytest.approx(0.0, abs=1e-20)
    x = torch.randn(3, 4, 4, dtype=torch.float64, device=device)
    c = p.center
    expected = inner.to(device, torch.float64).evaluate(c + (x - c) @ p.matrix.T)
    f = p.evaluate(x)
    assert f.shape == (3, 4)
    torch.testing.assert_close(f, expected)
    assert not torch.allclose(f, inner.to(device, torch.float64).evaluate(x))  # it does rotate


def test_rotation_keeps_distances():
    p = Rotated(hs.get_problem("sphere", dim=12), seed=4)
    x = torch.randn(50, 12, dtype=torch.float64)
    torch.testing.assert_close(p.evaluate(x), sphere(x), rtol=1e-12, atol=0)


def test_rotated_without_a_known_minimiser_turns_around_the_origin():
    inner = TorchFunction(lambda x: (x - 1.0).pow(2).sum(-1), dim=3, lower=-5, upper=5, optimum_f=0.0)
    p = Rotated(inner, seed=1)
    assert p.optimum_x is None and p.optimum_f is None
    x = torch.randn(4, 3, dtype=torch.float64)
    torch.testing.assert_close(p.evaluate(x), ((x @ p.matrix.T) - 1.0).pow(2).sum(-1))


def test_cec_treatment_is_f_of_m_times_x_minus_o(device):
    p = cec_treatment(_rastrigin(6), seed=21).to(device, torch.float64)
    assert p.name == "rotated(shifted(rastrigin))"
    o, m = p.inner.shift, p.matrix
    torch.testing.assert_close(p.optimum_x, o)
    x = torch.randn(10, 6, dtype=torch.float64, device=device)
    torch.testing.assert_close(p.evaluate(x), rastrigin((x - o) @ m.T))
    assert _at_optimum(p) == pytest.approx(0.0, abs=1e-9)


def test_describe_records_every_transform_with_its_seed():
    d = cec_treatment(YaoProblem(7, noise_seed=8), seed=33, radius=1.0).describe()
    assert d["name"] == "rotated(shifted(yao-f7))" and d["dim"] == 30 and d["bounds"] == [-1.28, 1.28]
    assert d["noise_seed"] == 8
    assert d["transforms"] == [{"kind": "shifted", "seed": 33, "radius": 1.0}, {"kind": "rotated", "seed": 33}]


def test_wrappers_carry_the_stochastic_flag():
    assert cec_treatment(YaoProblem(7), 0).stochastic is True
    assert cec_treatment(YaoProblem(1, 3), 0).stochastic is False


def test_to_moves_and_casts_shift_matrix_and_inner():
    p = cec_treatment(_rastrigin(5), seed=2)
    q = p.to("cpu", torch.float32)
    assert q.matrix.dtype == q.center.dtype == q.inner.shift.dtype == q.inner.lower.dtype == torch.float32
    assert p.matrix.dtype == torch.float64  # the original stays
    meta = p.to("meta")
    assert meta.matrix.device.type == meta.inner.shift.device.type == "meta"
    x = torch.randn(9, 5, dtype=torch.float64)
    f32 = q.evaluate(x.float())
    assert f32.dtype == torch.float32
    torch.testing.assert_close(f32.double(), p.evaluate(x), rtol=1e-4, atol=1e-3)


def test_wrapping_a_host_bound_problem():
    inner = NumpyFunction(lambda X: (X**2).sum(axis=1), dim=3, lower=-10, upper=10, name="np-sphere",
                          optimum_f=0.0, optimum_x=0.0)
    p = cec_treatment(inner, seed=6, radius=5.0)
    assert p.host_bound and p.name == "rotated(shifted(np-sphere))"
    x = torch.randn(4, 3, dtype=torch.float64)
    expected = np.sum(((x - p.inner.shift) @ p.matrix.T).numpy() ** 2, axis=1)
    np.testing.assert_allclose(p.evaluate(x).numpy(), expected, rtol=1e-12)
    assert _at_optimum(p) == pytest.approx(0.0, abs=1e-20)


@pytest.mark.parametrize("make,match", [
    (lambda: Shifted(_rastrigin(), radius=-1.0), "radius must be a finite number >= 0"),
    (lambda: Shifted(_rastrigin(), radius=float("nan")), "radius"),
    (lambda: Shifted(_rastrigin(), seed=1.5), "seed must be an integer"),
    (lambda: Shifted(_rastrigin(), seed=True), "seed must be an integer"),
    (lambda: Rotated(_rastrigin(), seed=-1), "seed must be an integer"),
    (lambda: Rotated(_rastrigin(), seed=2**64), "seed must be an integer"),
    (lambda: Rotated(lambda x: x.sum(-1)), "wraps a heuriscale Problem"),
    (lambda: cec_treatment("rastrigin", 0), "wraps a heuriscale Problem"),
])
def test_bad_input(make, match):
    with pytest.raises(ValueError, match=match) as err:
        make()
    assert "\n" not in str(err.value)
