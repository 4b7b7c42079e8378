"""Paper 004's genome / fitness maps: the texture layout of its Fig. 2 and one scale per figure."""

from types import SimpleNamespace

import numpy as np
import pytest
from matplotlib.colors import LogNorm

from heuriscale.viz.figures import _maps, fitness_grid, genome_tiles, grid_shape, maps_figure


@pytest.mark.parametrize("n, shape", [(400, (20, 20)), (800, (25, 32)), (3200, (50, 64)), (6400, (80, 80)),
                                      (7, (3, 3))])  # 7 has no near-square factorisation: padded
def test_grid_shape(n, shape):
    assert grid_shape(n) == shape


def test_tiles_follow_the_papers_layout():
    mu, k = 800, 32
    x = np.arange(mu * k, dtype=float).reshape(mu, k)
    tex = genome_tiles(x)
    assert tex.shape == (2 * 25, 4 * 32, 4)  # 2 x 4 tiles of 25 x 32 individuals, a quadruple per pixel
    i, g = np.meshgrid(np.arange(mu), np.arange(k), indexing="ij")
    t = g // 4  # genes 4t+1..4t+4 (1-based) form tile t; tiles fill rows of 4
    rows, cols = (t // 4) * 25 + i // 32, (t % 4) * 32 + i % 32
    np.testing.assert_array_equal(tex[rows, cols, g % 4], x)
    np.testing.assert_array_equal(fitness_grid(x[:, 0])[i[:, 0] // 32, i[:, 0] % 32], x[:, 0])


def test_padding_is_nan():
    tex = genome_tiles(np.ones((7, 6)))  # 7 individuals on a 3 x 3 grid, 6 genes in 2 quadruples
    assert tex.shape == (3, 6, 4)
    assert np.isnan(tex).sum() == 2 * 2 * 4 + 7 * 2  # 2 empty cells in both tiles, genes 7-8 missing
    assert np.isnan(fitness_grid(np.ones(7))).sum() == 2


def _shots(*populations, f=None):
    return {str(100 * (n + 1)): {"x": x.tolist(), "f": (f[n] if f else np.abs(x).sum(1) + 1).tolist()}
            for n, x in enumerate(populations)}


def _panels(fig) -> np.ndarray:
    """The maps' axes as (3, snapshots): rows (r, g, b), alpha, fitness; colour bars left out."""
    panels = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    return np.array(panels, dtype=object).reshape(3, -1)


def test_converged_population_is_one_colour_per_tile():
    rng = np.random.default_rng(0)
    one = rng.uniform(-5, 5, 32)
    converged = np.tile(one, (400, 1))  # every individual equal
    fig = maps_figure(_shots(rng.uniform(-5, 5, (400, 32)), converged), "t")
    panels = _panels(fig)
    rgb = panels[0, 1].images[0].get_array()  # (r, g, b, shown) of the converged snapshot
    alpha = panels[1, 1].images[0].get_array()
    for r in range(2):
        for c in range(4):
            tile = rgb[20 * r:20 * (r + 1), 20 * c:20 * (c + 1)].reshape(-1, 4)
            assert len(np.unique(tile, axis=0)) == 1
            assert len(np.unique(alpha[20 * r:20 * (r + 1), 20 * c:20 * (c + 1)])) == 1
    # genes that differ still give tiles of different colours (the paper's visible tile boundaries)
    assert len(np.unique(rgb.reshape(-1, 4), axis=0)) == 8
    # a population converged to one value everywhere is one colour in the whole image
    flat = maps_figure(_shots(rng.uniform(-5, 5, (400, 32)), np.zeros((400, 32))), "t")
    image = _panels(flat)[0, 1].images[0].get_array()
    assert len(np.unique(image.reshape(-1, 4), axis=0)) == 1


def test_snapshots_share_one_scale():
    rng = np.random.default_rng(1)
    spread, converged = rng.uniform(-1, 1, (400, 32)), np.zeros((400, 32))
    spread[0, 0], spread[1, 1] = -1, 1  # the gene range over both snapshots is exactly [-1, 1]
    f = [np.linspace(1, 1000, 400), np.full(400, 2.0)]
    fig = maps_figure(_shots(spread, converged, f=f), "t")
    panels = _panels(fig)
    genes = [ax.images[0].norm for ax in panels[1]]
    assert [(n.vmin, n.vmax) for n in genes] == [(-1, 1), (-1, 1)]
    fitness = [ax.images[0].norm for ax in panels[2]]
    assert [(n.vmin, n.vmax) for n in fitness] == [(1, 1000), (1, 1000)]
    assert all(isinstance(n, LogNorm) for n in fitness)  # three decades: log, and said so
    assert "log scale" in fig.get_supxlabel()
    # the converged snapshot sits mid-scale (0 on [-1, 1]), not stretched to its own min / max
    np.testing.assert_allclose(panels[0, 1].images[0].get_array()[..., :3], 0.5)


def test_linear_fitness_scale_within_a_decade():
    x = np.random.default_rng(2).uniform(-1, 1, (400, 32))
    fig = maps_figure(_shots(x, x, f=[np.linspace(2, 5, 400)] * 2), "t")
    norm = _panels(fig)[2, 0].images[0].norm
    assert not isinstance(norm, LogNorm) and (norm.vmin, norm.vmax) == (2, 5)
    assert "linear" in fig.get_supxlabel()


def test_figure_has_colour_bars_and_is_written(tmp_path):
    x = np.random.default_rng(3).uniform(-1, 1, (800, 32))
    fig = maps_figure(_shots(x, x / 10), "t")
    bars = [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]
    assert len(bars) == 2  # genes and fitness
    assert "gene value" in bars[0].get_ylabel() and "fitness" in bars[1].get_ylabel()
    config = SimpleNamespace(problem="fep-f5", algorithm_params={"pop_size": 800}, device="cpu")
    path, caption = _maps(_shots(x, x / 10), config, tmp_path / "maps.png")
    assert path.is_file() and path.stat().st_size > 10_000
    assert caption.startswith(f"Genome- and fitness-convergence maps of one run at {len(_shots(x, x))} generations (cpu)")
