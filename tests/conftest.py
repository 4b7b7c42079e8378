"""Shared fixtures: every behaviour test that takes `device` runs on the CPU and, under
`pytest -m gpu` on a machine with CUDA, on the GPU as well."""

import pytest
import torch


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def device(request) -> str:
    if request.param == "cuda" and not torch.cuda.is_available():
        pytest.fail("GPU tests were selected (-m gpu) but torch sees no CUDA device")
    return request.param
