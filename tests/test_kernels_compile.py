"""Every Triton kernel launch of the fused engines compiles for an H100 (sm_90), on this machine.

The CPU suite runs the fused kernels in Triton's interpreter, which never builds Triton IR:
code the interpreter runs may still not compile (a loop-carried variable that changes type,
for one). Here small runs of every fused algorithm (float32 and float64; an inline built-in
objective, an objective evaluated between two launches, a user's `TritonFunction`; the test
hooks that give or keep the random numbers; the algorithms' own variants) are interpreted
while each launch is recorded with the specialisation a GPU launch of the same arguments
would compile, then each distinct launch is compiled for sm_90 down to the cubin, with the
ptxas Triton bundles, in child processes (see triton_aot.py for why two processes).

About 115 launches: with nothing in Triton's cache a minute here (2 shared cores), most of it
LLVM and ptxas; then Triton's disk cache answers for every kernel whose source is unchanged
(about 15 s in all, mostly interpreting). A failure names the launch and quotes Triton's
error with the kernel's line.

Under `pytest -m slow` (and `-m gpu`, where the kernels compile for real): with a cold cache it
takes two to three minutes of the default run's ten on 2 cores.
"""

import ast
import inspect

import pytest
import torch
import triton
import triton.language as tl

import heuriscale as hs
from heuriscale.engine.kernels import declared
from heuriscale.engine.kernels.cuda_chain import PDL_AFTER_WORK, PDL_AT_ONCE
from heuriscale.engine.kernels.cuda_common import FITNESS, USER
from registered import each, with_kernels

import triton_aot

pytestmark = pytest.mark.slow

# 40 coordinates: BLOCK_D = 64, so row_tiles gives blocks of 16 rows and 37 rows make 3 blocks
# (NB = 1 would be compiled as a constant, as Triton does with any integer argument equal to 1).
DIM, POP = 40, 37
#: Each algorithm with kernels: its built-in inline objective here (together: all five, each in
#: both dtypes), its variants that its kernels specialise on (made with a population size),
#: and its problems' dimension.
ALGORITHMS = {
    "pso": ("sphere", [lambda pop: hs.PSO(pop_size=pop)], DIM),
    "prs": ("euclidean", [lambda pop: hs.PRS(pop_size=pop, max_iters=20)], DIM),
    "fep": ("rastrigin", [lambda pop: hs.FEP(pop_size=pop, q=4),
                          lambda pop: hs.FEP(pop_size=pop, q=4, mutation="gaussian", eta_min=None)], DIM),
    # 5 coordinates: its smallest tile (16), whose tl.dot compiles 3 times faster than one of 64
    "firefly": ("ackley", [lambda pop: hs.Firefly(pop_size=pop, alpha=0.5, beta0=1.0, gamma=0.01)], 5),
    "apo": ("griewank", [lambda pop: hs.APO(pop_size=pop, max_iters=20),
                         lambda pop: hs.APO(pop_size=pop, max_iters=20, np=2)], DIM),  # odd pairs read words c, e
}
POPS = {"firefly": 130}  # 2 blocks of its 128 rows in float32, 3 of 64 in float64
#: (dim, pop) of the runs with the objective evaluated between launches, per dtype, for the
#: algorithms whose kernels keep rows in registers: tiles of real sizes. Paper 003's 1,000
#: coordinates: one row a block (BLOCK_P = 1); 1,100 protozoa: APO's renewal tile and FEP's
#: selection tile take 8 warps.
SIZES = {"float32": (1000, 6), "float64": (2, 1100)}
BETWEEN_LAUNCHES = "rosenbrock"  # a built-in the kernels do not compute: evaluated between two launches


@triton.jit
def _user_objective(x, mask):
    """A user's objective (FITNESS = USER): Griewank-like, a product over the real coordinates."""
    cosines = tl.where(mask, tl.cos(x), 1.0)
    return tl.sum(x * x, 1) / 4000.0 - tl.reduce(cosines, 1, _product) + 1.0


@triton.jit
def _product(a, b):
    return a * b


def _give_numbers(name, fused, x):
    """The test hooks that hand the kernels numbers to use instead of Philox's (GIVEN_R)."""
    runs, pop, _ = x.shape
    if name == "fep":
        fused.given_r = torch.randn(3, *x.shape, dtype=x.dtype)
        fused.given_opponents = torch.randint(0, 2 * pop, (runs, 2 * pop * fused.q))
    else:
        fused.given_r = torch.rand(2, *x.shape, dtype=x.dtype)
    if name == "firefly":  # (and its option of float64 sums, SUMS64)
        fused.float64_sums = True
    if name == "apo":
        fused.given_scalars = torch.rand(6, runs, pop, dtype=x.dtype)
        fused.given_ranks = torch.randint(0, pop, (1 + 2 * fused.pairs, runs, pop))


def _keep_numbers(name, fused, x):
    """The test hooks that keep the numbers the kernels draw (EMIT_R)."""
    runs, pop, _ = x.shape
    if name == "apo":
        fused.drawn_ranks = torch.empty(1 + 2 * fused.pairs, runs, pop, dtype=torch.int64)
    else:
        fused.drawn_r = torch.empty(3 if name == "fep" else 2, *x.shape, dtype=x.dtype)


def _step(problem, algorithm, dtype, hook=None, target=None):
    runner = hs.Runner(problem, algorithm, runs=1, seed=0, device="cpu", dtype=dtype, engine="fused", target=target)
    assert runner._engine_used() == "fused"
    if hook is not None:
        hook(runner._kernels, runner.state.x)
    chained = getattr(runner._kernels, "chained", None)
    if chained is None:
        runner.step(1)
    else:  # a chain's first launch, a later one and its settling (cuda_chain), with each PDL mode of a GPU's
        runner._kernels.pdl = {"float32": PDL_AFTER_WORK, "float64": PDL_AT_ONCE}[dtype]
        with chained():
            runner.step(2)


def fused_runs() -> None:
    """One step of every fused algorithm in each configuration its kernels specialise on (the
    workload whose launches are recorded). In each dtype: the objective inline with a target;
    the objective evaluated between a move and a select launch (in SIZES' tiles); the user's
    objective, keeping the numbers drawn (EMIT_R); the numbers given (GIVEN_R). In float32,
    the algorithm's other variants, objective inline."""
    torch.manual_seed(0)
    for name, (builtin, makers, dim) in ALGORITHMS.items():
        pop, make = POPS.get(name, POP), makers[0]
        for dtype in ("float32", "float64"):
            _step(hs.get_problem(builtin, dim=dim), make(pop), dtype, target=1e-3)
            size_dim, size_pop = (dim, pop) if name == "firefly" else SIZES[dtype]  # its tiles are fixed
            widest = name == "fep" and dtype == "float64"  # (FEP's selection in its widest tiles: a million's)
            _step(hs.get_problem(BETWEEN_LAUNCHES, dim=size_dim), make(size_pop), dtype,
                  hook=(lambda fused, x: setattr(fused, "select_tile", 2048)) if widest else None)
            _step(hs.TritonFunction(_user_objective, dim, -5.0, 5.0), make(pop), dtype,
                  hook=lambda fused, x: _keep_numbers(name, fused, x))
            _step(hs.get_problem(builtin, dim=dim), make(pop), dtype,
                  hook=lambda fused, x: _give_numbers(name, fused, x))
        for variant in makers[1:]:
            _step(hs.get_problem(builtin, dim=dim), variant(pop), "float32", target=1e-3)


def wide(launch: dict) -> dict | None:
    """A real run's launch on 2**31 elements or more, too many to interpret: WIDE, with the
    element count RPD (if the kernel takes it) a 64-bit integer, as Triton types one that
    large. Of float32 launches that move rows without test hooks only: WIDE changes integer
    index arithmetic, the same in either dtype (and each compile costs about a second here)."""
    flags = launch["constexprs"]
    if (flags.get("WIDE") is not False or flags.get("GIVEN_R") or flags.get("EMIT_R") or flags.get("MOVE") is False
            or "*fp64" in launch["signature"].values()):
        return None
    out = {k: dict(v) if isinstance(v, dict) else v for k, v in launch.items()}
    out["constexprs"]["WIDE"] = True
    if "RPD" in out["signature"]:
        out["signature"]["RPD"] = "i64"
    return out


@pytest.fixture(scope="module")
def launches() -> list[dict]:
    recorded = triton_aot.recorded(f"{__name__}:fused_runs")
    return recorded + [w for launch in recorded if (w := wide(launch)) is not None]


@pytest.fixture(scope="module")
def compiled(launches) -> list[dict]:
    return triton_aot.compiled(launches)


def _kernel_module(name: str) -> str:
    owner, folder = declared(hs.get_algorithm(name), "cuda")
    return f"heuriscale.engine.kernels.{folder}.cuda"


def _launched_kernels(module_name: str) -> set[str]:
    """The @triton.jit functions of a module that its host code names: the kernels it launches
    (device functions are named only inside other @triton.jit functions)."""
    module = __import__(module_name, fromlist=["_"])
    tree = ast.parse(inspect.getsource(module))
    jitted = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)
              and any("jit" in ast.unparse(d) for d in node.decorator_list)}
    host = [node for node in tree.body if isinstance(node, ast.ClassDef)
            or (isinstance(node, ast.FunctionDef) and node.name not in jitted)]
    named = {n.id for node in host for n in ast.walk(node) if isinstance(n, ast.Name)}
    return {f"{module_name}:{fn}" for fn in jitted & named}


def _by_kernel(launches):
    kernels = {}
    for launch in launches:
        kernels.setdefault(launch["kernel"], []).append(launch)
    return kernels


def test_every_fused_algorithm_is_recorded_here():
    assert set(ALGORITHMS) == set(with_kernels("cuda"))


@pytest.mark.parametrize("algorithm", each(with_kernels("cuda")))
def test_the_runs_launch_every_kernel_in_every_specialisation(algorithm, launches):
    """Each kernel the algorithm's host code launches was launched, each of its flags (bool
    constexprs) both ways, and its objective inline, between launches and the user's."""
    module = _kernel_module(algorithm)
    kernels = _by_kernel(launch for launch in launches if launch["kernel"].startswith(module + ":"))
    assert set(kernels) == _launched_kernels(module)
    for kernel, seen in kernels.items():
        for flag, value in seen[0]["constexprs"].items():
            if isinstance(value, bool):
                assert {launch["constexprs"][flag] for launch in seen} == {False, True}, (kernel, flag)
        if "FITNESS" in seen[0]["constexprs"]:
            fitness = {launch["constexprs"]["FITNESS"] for launch in seen}
            assert {0, USER, FITNESS[hs.get_problem(ALGORITHMS[algorithm][0], dim=2).fn]} <= fitness, kernel
            assert {launch["constexprs"]["USER_FN"]["jit_function"] for launch in seen
                    if launch["constexprs"]["FITNESS"] == USER} == {f"{__name__}:_user_objective"}
        floats = {t for launch in seen for t in launch["signature"].values() if t.startswith("*fp")}
        assert floats == {"*fp32", "*fp64"}, kernel
        if algorithm != "firefly" and "BLOCK_P" in seen[0]["constexprs"]:  # SIZES' tiles
            assert 1 in {launch["constexprs"]["BLOCK_P"] for launch in seen}, kernel
        if "TILE" in seen[0]["constexprs"]:
            assert max(launch["constexprs"]["TILE"] for launch in seen) >= 2048, kernel


def test_each_built_in_objective_is_compiled_inline_in_both_dtypes(launches):
    inline = {(launch["constexprs"]["FITNESS"], launch["signature"]["x_ptr"]) for launch in launches
              if launch["constexprs"].get("FITNESS") in FITNESS.values()}
    assert inline == {(f, t) for f in FITNESS.values() for t in ("*fp32", "*fp64")}


def _failures(launches, compiled, module_prefix: str) -> list[str]:
    return [f"{triton_aot.describe(launch)}\n  -> {result['error'][-2000:]}"
            for launch, result in zip(launches, compiled)
            if launch["kernel"].startswith(module_prefix) and result["error"] is not None]


@pytest.mark.parametrize("algorithm", each(with_kernels("cuda")))
def test_every_launch_compiles_for_the_h100(algorithm, launches, compiled):
    module = _kernel_module(algorithm)
    assert any(launch["kernel"].startswith(module + ":") for launch in launches)
    failures = _failures(launches, compiled, module + ":")
    assert not failures, f"{len(failures)} launches do not compile for sm_90:\n" + "\n".join(failures)


def test_the_triton_function_kernel_compiles_for_the_h100(launches, compiled):
    """The kernel a `TritonFunction` evaluates its points with (here: the first population's)."""
    module = "heuriscale.problems.triton_function:"
    assert any(launch["kernel"].startswith(module) for launch in launches)
    failures = _failures(launches, compiled, module)
    assert not failures, "\n".join(failures)
