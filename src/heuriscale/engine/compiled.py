"""The compiled step (`engine="compiled"`): `torch.compile` of a runner's iteration, one frame
per kind of run set, whole or not at all.

Dynamo keeps what it compiled per code object, and a code object accepts at most
`torch._dynamo.config.recompile_limit` (8) variants; past that it runs the function
uncompiled and only logs a warning. Compiling every runner's `Runner._advance` would make
all the configurations of a process (other algorithms, problems, dtypes, sizes) variants of
one code object, and the ninth would quietly run eager while the engine said "compiled".
So each kind of run set (its configuration but the seed, on its device) gets a code object
of its own, a copy of `_iterate`'s: a run set of a kind seen before reuses that compiled step
(no tracing again), and a new kind never competes with the others for their cache.
The most recent `KINDS_KEPT` kinds stay compiled; an older one is traced again if it comes
back (inductor's caches still hold its kernels).

The step is compiled with `fullgraph=True`: a graph break, or a code object's own variants
past the limit, raises instead of running parts of the step eagerly; and every call checks
that it ran compiled (`torch.compiler.is_compiling()` inside the compiled function is the
constant True). A step that did not raises `NotCompiled`, and the engine replays the
uncompiled step instead and says so (`graph.py`), so `result.extra["engine"]` names what
ran.
"""

from __future__ import annotations

import json
import re
import types
from collections import OrderedDict
from collections.abc import Callable

import torch

#: Kinds of run sets whose compiled step a process keeps (each holds dynamo's guards and
#: inductor's compiled graph). A campaign that cycles through more configurations traces
#: the ones it comes back to again; inductor's in-memory and disk caches still hold their kernels.
KINDS_KEPT = 32
#: torch.compile's backend for the step (the tests use dynamo's "eager" backend: what is
#: checked here, frames and guards, is dynamo's, and inductor would spend minutes on the CPU).
BACKEND = "inductor"

_compiled_kinds: OrderedDict[str, Callable] = OrderedDict()


class NotCompiled(RuntimeError):
    """The compiled step ran uncompiled (dynamo disabled, or set to run eagerly)."""


def _iterate(runner, *carry):
    """The template each kind's compiled step copies: one iteration, and whether it ran compiled."""
    return runner._advance(*carry), torch.compiler.is_compiling()


def kind_of(runner) -> str:
    """What tells run sets apart for the compiled step: the configuration (algorithm and its
    parameters, problem, sizes, dtype, target...) but the seed, the problem's classes, and
    the device. Run sets of one kind trace to the same graph."""
    config = {k: v for k, v in runner.config().items() if k != "seed"}
    classes, problem = [], runner.problem
    while problem is not None:  # wrappers (constraints, transforms) and what they wrap
        classes.append(f"{type(problem).__module__}.{type(problem).__qualname__}")
        problem = getattr(problem, "inner", None)
    algorithm = type(runner.algorithm.stepping())
    return json.dumps([config, classes, f"{algorithm.__module__}.{algorithm.__qualname__}", str(runner.device)],
                      sort_keys=True, default=repr)


def _compile(label: str) -> Callable:
    """`_iterate` in a code object of its own (named after `label`, which dynamo's logs show),
    compiled: its cache holds this kind's graph and nothing else."""
    name = "iterate_" + re.sub(r"\W", "_", label)
    code = _iterate.__code__.replace(co_name=name)
    function = types.FunctionType(code, _iterate.__globals__, name)
    return torch.compile(function, dynamic=False, fullgraph=True, backend=BACKEND)


def compiled_step(advance) -> Callable:
    """`advance` (a runner's bound `_advance`) compiled as its kind's step: called with the
    carry as `advance` is, it raises (dynamo's errors, or `NotCompiled`) rather than run
    any part of the iteration uncompiled."""
    runner = advance.__self__
    kind = kind_of(runner)
    step = _compiled_kinds.pop(kind, None)
    if step is None:
        step = _compile(f"{runner.algorithm.name}_{runner.problem.name}_{str(runner.dtype).split('.')[-1]}")
    _compiled_kinds[kind] = step  # the most recent last
    while len(_compiled_kinds) > KINDS_KEPT:
        _compiled_kinds.popitem(last=False)

    def iterate(*carry):
        try:
            carry, compiled = step(runner, *carry)
        except Exception:
            if _compiled_kinds.get(kind) is step:  # (a frame whose variants ran out: the next run set starts afresh)
                del _compiled_kinds[kind]
            raise
        if not compiled:
            raise NotCompiled("torch.compile ran the step without compiling it (torch._dynamo is disabled or set "
                              "to run eagerly in this process)")
        return carry

    return iterate
