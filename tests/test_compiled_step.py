"""The compiled step in a long-lived process (engine/compiled.py): every kind of run set
compiles in a frame of its own, so configurations do not use up one another's share of
dynamo's cache, and a step that cannot run compiled raises instead of running eagerly.

Checked on the CPU with dynamo's "eager" backend: frames, guards and the recompile limit are
dynamo's whatever backend generates the code (inductor would take minutes here). The limit is
lowered to 2 so that a handful of configurations meets it (at its default, 8, the ninth would).
On CUDA, thirty configurations compile with inductor in one process under `-m gpu`
(test_fast_engine.py).
"""

import gc
import logging
import weakref
from collections import OrderedDict

import pytest
import torch
from registered import small
from torch._dynamo.utils import counters

from heuriscale.engine import compiled
from heuriscale.engine.graph import clone_carry
from heuriscale.engine.runner import Runner


@pytest.fixture
def dynamo_log(monkeypatch):
    """Dynamo's messages while the test runs (its recompile-limit warning among them), with
    the eager backend, no compiled kinds kept from other tests and a recompile limit of 2."""
    monkeypatch.setattr(compiled, "BACKEND", "eager")
    monkeypatch.setattr(compiled, "_compiled_kinds", OrderedDict())
    records = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append
    logger = logging.getLogger("torch._dynamo")
    logger.addHandler(handler)
    with torch._dynamo.config.patch(recompile_limit=2):
        yield records
    logger.removeHandler(handler)


def _runner(name: str, problem: str, dtype: str) -> Runner:
    return Runner(problem, small(name, pop=8), dim=3, runs=2, dtype=dtype, seed=0, device="cpu")


def _carry(runner: Runner) -> tuple:
    return clone_carry((runner.state, runner.best_x, runner._hit_iter, runner._it, runner.best_f))


def _graphs() -> int:
    return counters["stats"]["unique_graphs"]


def test_each_kind_of_run_set_compiles_in_a_frame_of_its_own(dynamo_log):
    kinds = [("pso", "sphere", "float32"), ("pso", "rastrigin", "float64"), ("prs", "sphere", "float64"),
             ("prs", "rastrigin", "float32")]  # more than the limit of 2: one shared frame would run out
    for name, problem, dtype in kinds:
        before = _graphs()
        runner = _runner(name, problem, dtype)
        step = compiled.compiled_step(runner._advance)
        carry = _carry(runner)
        with runner._rng, torch.no_grad():
            rng = runner._rng.generator.get_state()
            out = step(*clone_carry(carry))
            runner._rng.generator.set_state(rng)
            reference = runner._advance(*clone_carry(carry))
        assert _graphs() - before == 1, (name, problem, dtype)  # the whole iteration, one graph
        # (the eager backend runs the traced operations in order: the eager step's numbers)
        assert torch.equal(out[0].x, reference[0].x) and torch.equal(out[-1], reference[-1])
    assert not [r.getMessage() for r in dynamo_log]

    before = _graphs()  # a run set of a kind seen before reuses its compiled step
    again = _runner("pso", "sphere", "float32")
    with again._rng, torch.no_grad():
        compiled.compiled_step(again._advance)(*_carry(again))
    assert _graphs() == before and len(compiled._compiled_kinds) == len(kinds)
    gone = weakref.ref(again)  # the kept steps hold no run set (nor its device memory)
    del again
    gc.collect()
    assert gone() is None


def test_a_step_that_cannot_run_compiled_raises_instead_of_running_eagerly(dynamo_log, monkeypatch):
    monkeypatch.setattr(compiled, "kind_of", lambda runner: "every run set")  # one frame for all, with
    first, other = _runner("pso", "sphere", "float32"), _runner("pso", "sphere", "float64")
    with torch._dynamo.config.patch(recompile_limit=1), torch.no_grad():  # room for one variant
        compiled.compiled_step(first._advance)(*_carry(first))
        with pytest.raises(torch._dynamo.exc.FailOnRecompileLimitHit):  # not a quiet eager step
            compiled.compiled_step(other._advance)(*_carry(other))
        assert not compiled._compiled_kinds  # that frame is given up: the next run set starts a new one
        compiled.compiled_step(other._advance)(*_carry(other))
        with torch.compiler.set_stance("force_eager"), pytest.raises(compiled.NotCompiled, match="without compiling"):
            compiled.compiled_step(other._advance)(*_carry(other))
