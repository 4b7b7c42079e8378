"""Shared fixtures: every behaviour test that takes `device` runs on the CPU and, under
`pytest -m gpu` on a machine with CUDA, on the GPU as well.

Without CUDA, Triton's interpreter runs the engine's fused kernels on CPU tensors, so the
CPU suite checks them too (`fused_device`); with CUDA they run compiled, under `-m gpu`.
"""

import os

import pytest
import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # before any kernel is defined


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def device(request) -> str:
    if request.param == "cuda" and not torch.cuda.is_available():
        pytest.fail("GPU tests were selected (-m gpu) but torch sees no CUDA device")
    return request.param


@pytest.fixture(params=[pytest.param("cuda", marks=pytest.mark.gpu)] if torch.cuda.is_available() else ["cpu"])
def fused_device(request) -> str:
    """Where the fused kernels run here: CUDA (compiled, `-m gpu`) or the CPU (interpreted)."""
    return request.param


@pytest.fixture
def fast_figures(monkeypatch):
    """Empty PNGs instead of drawing, for tests about campaign text, runs and the store (the
    figures themselves are drawn and checked in test_campaign_report's `report`)."""
    from pathlib import Path

    from heuriscale.viz import campaign as figures

    def stub(position):
        def draw(*args, **kwargs):
            path = Path(args[position])
            path.write_bytes(b"")
            return path
        return draw

    monkeypatch.setattr(figures, "cd_diagram", stub(2))
    monkeypatch.setattr(figures, "convergence_panels", stub(3))
