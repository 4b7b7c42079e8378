import sys, re, torch
import heuriscale as hs
from heuriscale.engine import set_cpu_threads
from heuriscale.algorithms.registry import get_algorithm
set_cpu_threads(1)
r = hs.minimize("sphere", get_algorithm("prs", pop_size=32), dim=2, iters=5, engine="native", seed=3, device="cpu", dtype="float64")
from heuriscale.engine.kernels.prs import cpu
fn = cpu._steps
fn = getattr(fn, "serial", fn)
for sig, ir in fn.inspect_llvm().items():
    ir_main = ir
    print(len(ir), "incref", len(re.findall(r"call void @NRT_incref", ir)), "decref", len(re.findall(r"call void @NRT_decref", ir)))
    asm = fn.inspect_asm(sig)
    print("asm lines", asm.count("\n"), "lock", asm.count("lock"))
