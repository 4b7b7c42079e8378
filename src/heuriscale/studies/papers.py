"""The five papers' experiments as data: configurations and the numbers their tables print.

Each `Experiment` has rows; a row is a configuration (RunConfig fields without device and
runs), table labels (`tags`) and the paper's numbers for it (`paper`). `quick` says how the
quick scale shrinks a row while keeping the experiment's shape: ("cap", v) limits a value,
("scale", f) multiplies it. One generic runner (`reproduce.py`) reads all of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Experiment:
    name: str
    title: str
    kind: str  # timing | quality | hybrid | time_modes | phases | snapshots | spring | otsu
    rows: list[dict]
    runs: dict  # scale -> runs per configuration
    quick: dict = field(default_factory=dict)  # field -> ("cap", v) | ("scale", f)
    timing: str = "batched"
    dtype: str = "float32"
    devices: tuple[str, ...] = ("cpu", "cuda")
    differs: str = ""  # where our table or figure differs in shape from the paper's: what and why, one sentence


@dataclass(frozen=True)
class Paper:
    key: str
    source: str
    title: str
    hardware: dict
    experiments: list[Experiment]
    notes: str = ""
    citation: str = ""  # authors, title, venue, year, DOI, as far as they are known


# ---------------------------------------------------------------------------------------------
# 001: PSO on CPU vs CUDA; Tables IV (SPSO CPU) and V (CPSO GPU): min, max, avg, median, std (ms)
_PSO_CPU = {
    32: (309, 387, 335.90, 328, 23.31), 64: (604, 693, 634.30, 622.50, 28.35),
    128: (1222, 1401, 1259.30, 1243, 48.38), 256: (2676, 2813, 2735.10, 2731.50, 40.05),
    512: (5378, 5664, 5489.90, 5482, 81.48), 1024: (11189, 12237, 11496.10, 11360.50, 309.38),
    2048: (24548, 25640, 4865.50, 24812, 296.38), 4096: (45907, 47328, 46369.80, 46248.50, 387.45),
    8192: (101203, 103771, 102598, 102670, 703.28), 16384: (199465, 201425, 200503, 200560, 796.56),
    32768: (93643, 402628, 398791, 399447, 3717.68), 65536: (788879, 798531, 793711, 793717, 4784.19),
}
_PSO_GPU = {
    32: (5405, 5432, 5422.33, 5430, 15.04), 64: (5478, 5617, 5537, 5516, 71.84),
    128: (5703, 5823, 5752.33, 5731, 62.78), 256: (5783, 5902, 5824, 5787, 67.58),
    512: (5769, 5882, 5829.67, 5838, 56.96), 1024: (5797, 5893, 5841.33, 5834, 48.42),
    2048: (5806, 5939, 5864, 5847, 68.11), 4096: (5931, 6027, 5988, 6006, 50.47),
    8192: (6179, 6268, 6221, 6216, 44.71), 16384: (6828, 6904, 6869.67, 6877, 38.53),
    32768: (13121, 13212, 13180.33, 13208, 51.42), 65536: (21382, 21471, 21431, 21440, 45.18),
}
STATS = ("min", "max", "avg", "median", "std")

PSO = Paper(
    key="pso", source="001",
    title="Standard PSO on CPU vs CUDA PSO with tree-reduction global best (paper 001)",
    hardware={"cpu": "AMD Ryzen 9 5900HX (8 cores)", "cuda": "NVIDIA GeForce RTX 3080 Laptop GPU"},
    citation="a paper whose abstract presents \"an enhancement for Particle Swarm Optimization performance by "
             "utilizing CUDA and a Tree Reduction Algorithm\" (CPSO); its text has no title page and names no "
             "authors, venue, year or DOI",
    notes="Fitness sqrt(x^2 + y^2), w = 1, c1 = c2 = 2, 100,000 iterations, 10 runs per particle count. "
          "Table IV's 2,048 average (4,865.5) and 32,768 minimum (93,643) are typos in the paper.",
    experiments=[
        Experiment(
            "time", "Tables IV-VI: execution time per iteration (us) vs number of particles", "timing",
            rows=[{"tags": {"particles": n},
                   "config": {"algorithm": "pso", "preset": "paper001", "problem": "euclidean", "dim": 2,
                              "iters": 100_000, "algorithm_params": {"pop_size": n}},
                   "paper": {"cpu": dict(zip(STATS, _PSO_CPU[n])), "cuda": dict(zip(STATS, _PSO_GPU[n]))}}
                  for n in _PSO_CPU],
            runs={"quick": 3, "paper": 10}, quick={"iters": ("cap", 300)}, timing="each",
        ),
        Experiment(
            "positions", "Fig. 6: particle positions at iterations 0, 100 and 200", "snapshots",
            rows=[{"tags": {"particles": 256},
                   "config": {"algorithm": "pso", "preset": "paper001", "problem": "euclidean", "dim": 2,
                              "iters": 200, "algorithm_params": {"pop_size": 256}, "snapshots": (0, 100, 200)},
                   "paper": {}}],
            runs={"quick": 1, "paper": 1}, devices=("cpu",),
            differs="The paper draws 5,000 particles contracting on the optimum; ours draws 256 that stay spread over "
                    "the box and pile up on its edges, because with the paper's w = 1 (c1 = c2 = 2) the velocities are "
                    "never damped, so particles keep overshooting (a swarm contracts only with w < 1 or a velocity "
                    "limit, and the paper states neither).",
        ),
    ],
)

# ---------------------------------------------------------------------------------------------
# 000: PRS, Tables 2-5 (avg of 100 runs): CUDA rows' budgets; paper CPU/CUDA score and runtime
_PRS_BOUNDS = {"rastrigin": [-5.12, 5.12], "sphere": [-5.12, 5.12], "rosenbrock": [-5, 10], "griewank": [-600, 600]}
_PRS_ROWS = [  # table, function, D, MaxIter, PopSize, CUDA score, CUDA s, CPU score, CPU s, CPU iters, CPU pop
    (2, "rastrigin", 1, 10, 1024, 0.000137, 0.001864, 0.000282, 0.055207, 1000, 18),
    (2, "rastrigin", 2, 100, 2048, 0.059208, 0.014552, 0.099895, 3.853343, 2000, 400),
    (2, "rastrigin", 3, 8000, 1024, 0.104553, 0.682174, 0.151782, 19.482192, 3000, 800),
    (2, "rastrigin", 4, 12000, 1024, 0.249476, 1.892460, 0.202980, 57.037649, 5000, 1000),
    (3, "sphere", 1, 10, 2048, 0.000001, 0.001848, 0.000004, 0.034360, 1000, 20),
    (3, "sphere", 2, 200, 2048, 0.081354, 0.024434, 0.080217, 3.482226, 2000, 200),
    (3, "sphere", 3, 2000, 2048, 0.199241, 0.285832, 0.279868, 7.533911, 2000, 500),
    (3, "sphere", 4, 15000, 1024, 0.023390, 1.729266, 0.012489, 36.393386, 5000, 1000),
    (4, "rosenbrock", 1, 10, 1024, 0.000000, 0.002843, 0.000000, 0.053262, 1000, 100),
    (4, "rosenbrock", 2, 1000, 2048, 0.271784, 0.166852, 0.271784, 9.520549, 1000, 2000),
    (4, "rosenbrock", 3, 20000, 2048, 0.022650, 1.377080, 0.016273, 146.079431, 10000, 2000),
    (4, "rosenbrock", 4, 50000, 2048, 0.015784, 7.018276, 0.010350, 443.198342, 15000, 4000),
    (5, "griewank", 1, 10, 2048, 0.009929, 0.002974, 0.007969, 0.050755, 1000, 20),
    (5, "griewank", 2, 1000, 1024, 0.028577, 0.126386, 0.040733, 0.259725, 1000, 100),
    (5, "griewank", 3, 5000, 2048, 0.018956, 0.542837, 0.017556, 5.352715, 5000, 500),
    (5, "griewank", 4, 10000, 2048, 0.019204, 2.521094, 0.015332, 25.624583, 10000, 1000),
]

PRS = Paper(
    key="prs", source="000",
    title="Prism Refraction Search on CPU and CUDA (paper 000)",
    hardware={"cpu": "Intel Core i7-1065G7", "cuda": "NVIDIA GeForce MX250"},
    citation="\"Accelerating prism refraction search, a novel physics-based metaheuristic algorithm, using CUDA for "
             "optimization\" (a report that prints no authors, venue, year or DOI). "
             "The algorithm: R. Kundu, S. Chattopadhyay, S. Nag et al., \"Prism refraction search: a novel "
             "physics-based metaheuristic algorithm\", Journal of Supercomputing 80 (2024) 10746-10795, "
             "DOI 10.1007/s11227-023-05790-3",
    notes="Scores are the mean best value over runs; the paper averages 100 runs. Our rows use the paper's "
          "CUDA budgets (MaxIter, PopSize) on every device.",
    experiments=[
        Experiment(
            "tables", "Tables 2-5: score and runtime (Rastrigin, Sphere, Rosenbrock, Griewank)", "quality",
            rows=[{"tags": {"table": t, "function": fn, "D": d, "iters": it, "pop": pop},
                   "config": {"algorithm": "prs", "problem": fn, "dim": d, "iters": it,
                              "problem_params": {"bounds": _PRS_BOUNDS[fn]}, "algorithm_params": {"pop_size": pop}},
                   "paper": {"cuda_score": cs, "cuda_time": ct, "cpu_score": ps, "cpu_time": pt,
                             "cpu_budget": f"{ci} it x {cp}"}}
                  for t, fn, d, it, pop, cs, ct, ps, pt, ci, cp in _PRS_ROWS],
            runs={"quick": 5, "paper": 100}, quick={"iters": ("cap", 1000)},
            differs="The paper's CPU rows ran other budgets than its CUDA rows (its CPU MaxIter x PopSize differ); "
                    "ours run the CUDA rows' budget on both devices, so our CPU and CUDA scores compare like with like "
                    "and the paper's CPU scores and times are for another budget.",
        ),
    ],
)

# ---------------------------------------------------------------------------------------------
# 002: Firefly + BFGS; the paper reports figures only (no numeric tables)
_FF_FUNCTIONS = ("sphere", "rastrigin", "rosenbrock")
_FF = {"algorithm": "firefly", "preset": "paper002", "dim": 2, "iters": 100,
       "problem_params": {"bounds": [-5.12, 5.12]}}

FIREFLY = Paper(
    key="firefly", source="002",
    title="Firefly Algorithm with OpenMP and CUDA, BFGS refinement of the best firefly (paper 002)",
    hardware={"cpu": "Intel Core i5-8250U (4 cores)", "cuda": "NVIDIA GPU (model not stated)"},
    citation="Javed Abdullah, \"Firefly + BFGS algorithm with openMP and Cuda\", project report for the course "
             "Advanced Methods for Scientific Computing, academic year 2024/2025 (no venue or DOI)",
    notes="N = 40, D = 2, 100 iterations, alpha 0.5, beta0 0.2, gamma 1, 30 trials; bounds [-5.12, 5.12] "
          "(not stated in the paper). Paper 002 prints figures, not tables: its findings are quoted. Firefly vs "
          "Firefly + BFGS is read from the same 30 runs: the swarm's best when the Firefly phase ends, then the best "
          "after BFGS refined it.",
    experiments=[
        Experiment(
            "hybrid", "Figs. 7-8: best value per trial, Firefly vs Firefly + BFGS", "hybrid",
            rows=[{"tags": {"function": fn, "method": "firefly+bfgs"},
                   "config": {**_FF, "problem": fn, "refine": "bfgs"},
                   "paper": {"finding": {"sphere": "Firefly+BFGS almost all at the minimum (~0)",
                                         "rastrigin": "(not shown)",
                                         "rosenbrock": "BFGS often improves; some runs already good"}[fn]}}
                  for fn in _FF_FUNCTIONS],
            runs={"quick": 30, "paper": 30}, dtype="float64",
            differs="The paper plots Firefly alone and Firefly + BFGS as separate trials; ours takes both values from "
                    "each trial (before and after the refinement), so a pair differs only by what BFGS did.",
        ),
        Experiment(
            "time", "Figs. 9-13: execution time per run, CPU vs GPU vs GPU with CPU fitness; Fig. 10: quality",
            "time_modes",
            rows=[{"tags": {"function": fn, "mode": mode},
                   "config": {**_FF, "problem": fn, "host_fitness": mode == "gpu-cpufit"},
                   "paper": {"finding": "GPU fastest and most stable; GPU-CPUfit slower than GPU, faster than CPU"},
                   "device": {"cpu": "cpu", "gpu": "cuda", "gpu-cpufit": "cuda"}[mode]}
                  for fn in _FF_FUNCTIONS for mode in ("cpu", "gpu", "gpu-cpufit")],
            runs={"quick": 10, "paper": 30}, timing="each", dtype="float64",
            differs="The paper finds the GPU fastest; in our runs the CPU is fastest by more than an order of magnitude, "
                    "because at N = 40, D = 2 and 100 iterations a GPU run is a few small kernel launches per "
                    "iteration (run eagerly: runs under 256 iterations are not compiled), so launch latency, not "
                    "arithmetic, sets its time.",
        ),
    ],
)

# ---------------------------------------------------------------------------------------------
# 003: APO vs P-APO; Table 2 (D = 1000, 1000 iterations, 5 runs), Table 3 (spring), Table 4 (Otsu)
_APO_T2 = {  # function: {pop (k): (seq fit, seq s, par fit, par s, speedup)}
    "bent-cigar": {1: (9.01e8, 211, 7.95e8, 35, 6.03), 2: (3.24e8, 423, 3.51e8, 64, 6.61),
                   5: (1.01e8, 1040, 1.03e8, 158, 6.58), 10: (5.06e7, 2101, 5.40e7, 345, 6.09)},
    "elliptic": {1: (2.33e6, 238, 2.17e6, 67, 3.55), 2: (806290, 478, 761592, 129, 3.71),
                 5: (346675, 1180, 326084, 322, 3.66), 10: (148573, 2385, 156662, 673, 3.54)},
    "hgbat": {1: (2.19e7, 212, 2.12e7, 34, 6.24), 2: (1.47e7, 430, 1.43e7, 64, 6.72),
              5: (1.05e7, 1059, 1.15e7, 160, 6.62), 10: (1.09e7, 2135, 1.05e7, 345, 6.19)},
    "rosenbrock": {1: (1.21e6, 285, 968158, 96, 2.97), 2: (255588, 576, 241539, 190, 3.03),
                   5: (53900, 1408, 40864.2, 471, 2.99), 10: (16418, 2839, 17000, 971, 2.92)},
    "griewank": {1: (0.924789, 238, 0.907354, 48, 4.96), 2: (0.476121, 477, 0.450114, 93, 5.13),
                 5: (0.189392, 1164, 0.218021, 232, 5.02), 10: (0.094324, 2348, 0.096002, 492, 4.77)},
}
_APO_CEC_SEED = 3  # the shift and rotation of the like-for-like rerun of Table 2 (any fixed seed)
_APO_T4 = {512: (107.17, 8, 107.33, 3, 2.67), 1024: (104.15, 26, 104.45, 13, 2.0),
           2048: (104.20, 103, 104.56, 50, 2.06), 4096: (101.43, 404, 101.56, 199, 2.03)}

APO = Paper(
    key="apo", source="003",
    title="Artificial Protozoa Optimizer, sequential vs parallel (P-APO) (paper 003)",
    hardware={"cpu": "Intel Xeon @ 2.20GHz (2 cores, Colab)", "cuda": "NVIDIA Tesla T4"},
    citation="Henish Soliya and Anugrah Jain (Sardar Vallabhbhai National Institute of Technology, Surat), \"Design "
             "and Analysis of Parallel Artificial Protozoa Optimizer (P-APO) using CUDA Architecture\", arXiv preprint "
             "2510.14982v1, 2025 (its later versions are titled \"cuAPO: A CUDA-based Parallelization of Artificial "
             "Protozoa Optimizer\")",
    notes="Paper 003's 'CEC2022 functions' at D = 1000 are the plain base functions on [-100, 100], with their "
          "optimum at the origin (HGBat's at -1), which APO's multiplicative moves find easily; Table 2 runs them as "
          "printed, and 'like for like' runs the same functions shifted (o ~ U[-80, 80]^D) and rotated. Which the "
          "paper's numbers resemble: the shifted and rotated functions, by far, though not closely. A CPU check at the "
          "paper's size (D = 1000, pop 1000, 1000 iterations, one run, float32) gave plain / shifted+rotated / paper: "
          "bent cigar 7.2e-4 / 3.4e11 / 9.0e8, elliptic 1.6e-5 / 6.7e9 / 2.3e6, Rosenbrock 997 (f(0): APO sits at the "
          "origin) / 7.0e10 / 1.2e6, Griewank 6e-8 / 91 / 0.92, HGBat 0.50 / 3.4e5 / 2.2e7 (a shift alone gives what "
          "shift + rotation gives: 3.5e11 and 89 on bent cigar and Griewank). The paper's values lie 3 to 12 orders "
          "of magnitude above what APO reaches on the plain functions, so its runs did not find the origin: its "
          "functions were not centred there. They are 2 to 4 orders below our shifted runs, and its HGBat is above "
          "the value at random points of the box (3e6): its functions differ from both variants in detail. Its Otsu "
          "experiment uses the Lena image, which scikit-image does not ship: we threshold 'camera'.",
    experiments=[
        Experiment(
            "table2", "Table 2: five functions x four population sizes (D = 1000, 1000 iterations)", "quality",
            rows=[{"tags": {"function": fn, "pop": 1000 * k, "D": 1000},
                   "config": {"algorithm": "apo", "preset": "paper003", "problem": fn, "dim": 1000, "iters": 1000,
                              "problem_params": {"bounds": [-100, 100]}, "algorithm_params": {"pop_size": 1000 * k}},
                   "paper": {"cpu_score": v[0], "cpu_time": v[1], "cuda_score": v[2], "cuda_time": v[3], "speedup": v[4]}}
                  for fn, rows in _APO_T2.items() for k, v in rows.items()],
            runs={"quick": 2, "paper": 5},
            quick={"algorithm_params.pop_size": ("scale", 0.02), "dim": ("cap", 100), "iters": ("cap", 100)},
            differs="Our scores on these plain functions lie orders of magnitude below the paper's, because APO finds "
                    "their optimum at the origin, which the paper's runs evidently did not (see the note above and the "
                    "like-for-like table).",
        ),
        Experiment(  # Table 2 like for like: the CEC treatment the paper's "CEC2022 functions" imply
            "table2-cec", "Table 2 like for like: the same functions shifted and rotated CEC-style "
            f"(shift o ~ U[-80, 80]^D, Haar rotation around o, seed {_APO_CEC_SEED}; D = 1000, 1000 iterations)",
            "quality",
            rows=[{"tags": {"function": fn, "pop": 1000 * k, "D": 1000, "variant": "shifted+rotated"},
                   "config": {"algorithm": "apo", "preset": "paper003", "problem": fn, "dim": 1000, "iters": 1000,
                              "problem_params": {"bounds": [-100, 100], "shift": _APO_CEC_SEED, "rotate": _APO_CEC_SEED},
                              "algorithm_params": {"pop_size": 1000 * k}},
                   "paper": {"cpu_score": v[0], "cpu_time": v[1], "cuda_score": v[2], "cuda_time": v[3], "speedup": v[4]}}
                  for fn, rows in _APO_T2.items() for k, v in rows.items()],
            runs={"quick": 2, "paper": 5},
            quick={"algorithm_params.pop_size": ("scale", 0.02), "dim": ("cap", 100), "iters": ("cap", 100)},
        ),
        Experiment(
            "table3", "Table 3: tension/compression spring design", "spring",
            rows=[{"tags": {"problem": "spring"},
                   "config": {"algorithm": "apo", "preset": "paper003", "problem": "spring", "iters": 1000,
                              "algorithm_params": {"pop_size": 50}},
                   "paper": {"cpu": ([0.0518437, 0.359896, 11.1458], 0.01271611, 0.98),
                             "cuda": ([0.0514516, 0.350322, 11.7173], 0.01272141, 0.89)}}],
            runs={"quick": 5, "paper": 5}, dtype="float64",
        ),
        Experiment(
            "table4", "Table 4: Otsu thresholding at four image sizes (PS = 100, 50 iterations)", "otsu",
            differs="The paper thresholds the Lena image, which scikit-image does not ship; ours thresholds 'camera', so "
                    "the thresholds differ from the paper's by the image, and are checked against scikit-image's exact "
                    "threshold_otsu instead.",
            rows=[{"tags": {"size": size},
                   "config": {"algorithm": "apo", "preset": "paper003", "problem": "otsu", "iters": 50,
                              "problem_params": {"image": "camera", "levels": 1, "size": size},
                              "algorithm_params": {"pop_size": 100}},
                   "paper": {"cpu_threshold": v[0], "cpu_time": v[1], "cuda_threshold": v[2], "cuda_time": v[3],
                             "speedup": v[4]}}
                  for size, v in _APO_T4.items()],
            runs={"quick": 5, "paper": 5},
        ),
    ],
)

# ---------------------------------------------------------------------------------------------
# 004: FEP on the GPU; Table I (A) time ratios to mu = 400, (B) f5 phase times, (C) speedups
_FEP_RATIO = {"cuda": {800: (1.00,) * 5, 3200: (2.02,) * 5, 6400: (3.11, 3.09, 3.04, 3.05, 3.05)},
              "cpu": {800: (2.01, 2.02, 2.02, 2.02, 2.02), 3200: (8.30, 8.24, 8.37, 8.12, 8.29),
                      6400: (16.57, 16.45, 16.75, 16.40, 16.53)}}
_FEP_PHASES = {  # mu: device: (selection, evaluation, mutation, total) seconds
    400: {"cpu": (3.32, 7.28, 16.19, 26.79), "cuda": (4.14, 26.46, 2.19, 32.79)},
    800: {"cpu": (6.70, 14.86, 32.49, 54.05), "cuda": (7.33, 21.84, 3.61, 32.78)},
    3200: {"cpu": (28.26, 60.25, 133.52, 222.03), "cuda": (26.72, 26.12, 13.46, 66.30)},
    6400: {"cpu": (56.69, 118.91, 267.30, 442.95), "cuda": (52.57, 21.96, 25.61, 100.25)},
}
_FEP_SPEEDUP = {400: (0.62, 0.85, 0.62, 0.93, 0.82), 800: (1.25, 1.71, 1.25, 1.88, 1.65),
                3200: (2.55, 3.45, 2.57, 3.74, 3.35), 6400: (3.31, 4.50, 3.42, 5.02, 4.42)}
_FEP_POPS = (400, 800, 3200, 6400)

FEP = Paper(
    key="fep", source="004",
    title="Fast Evolutionary Programming on the GPU (paper 004)",
    hardware={"cpu": "Pentium 4 2.4 GHz (CPU approach)", "cuda": "NVIDIA GeForce 6800 Ultra (shaders)"},
    citation="Ka-Ling Fok, Tien-Tsin Wong (The Chinese University of Hong Kong) and Man-Leung Wong (Lingnan "
             "University), \"Evolutionary Computing on Consumer Graphics Hardware\", IEEE Intelligent Systems 22(2), "
             "69-78, 2007, DOI 10.1109/MIS.2007.28 (the manuscript reproduced here is titled \"Evolutionary Computing "
             "on Consumer-Level Graphics Hardware\")",
    notes="f1-f5 with 32 variables, q = 10, 2000 generations.",
    experiments=[
        Experiment(
            "table1", "Table I (A) time ratios to mu = 400, (C) speed-ups of the GPU", "ratios",
            rows=[{"tags": {"function": f"f{i + 1}", "mu": mu},
                   "config": {"algorithm": "fep", "preset": "paper004", "problem": f"fep-f{i + 1}", "iters": 2000,
                              "algorithm_params": {"pop_size": mu}},
                   "paper": {"ratio_cpu": _FEP_RATIO["cpu"].get(mu, (1.0,) * 5)[i],
                             "ratio_cuda": _FEP_RATIO["cuda"].get(mu, (1.0,) * 5)[i],
                             "speedup": _FEP_SPEEDUP[mu][i]}}
                  for i in range(5) for mu in _FEP_POPS],
            runs={"quick": 2, "paper": 3}, quick={"iters": ("cap", 100)}, timing="each",
        ),
        Experiment(
            "phases", "Table I (B): f5, time per phase (s)", "phases",
            rows=[{"tags": {"function": "f5", "mu": mu},
                   "config": {"algorithm": "fep", "preset": "paper004", "problem": "fep-f5", "iters": 2000,
                              "algorithm_params": {"pop_size": mu}, "profile": True},
                   "paper": {dev: dict(zip(("selection", "evaluation", "mutation", "total"), v))
                             for dev, v in _FEP_PHASES[mu].items()}}
                  for mu in _FEP_POPS],
            runs={"quick": 1, "paper": 1}, quick={"iters": ("cap", 100)}, timing="each",
            differs="The paper's GPU spends most of its time in evaluation; ours spends the least there on both "
                    "devices (selection and mutation dominate), because our evaluation of f5 is one vectorised tensor "
                    "expression over the population, while the paper's went through its graphics (shader) pipeline.",
        ),
        Experiment(
            "convergence", "Figs. 5-7: genome and fitness maps, best fitness and time by generation (f5)",
            "snapshots",
            rows=[{"tags": {"function": "f5", "mu": mu},
                   "config": {"algorithm": "fep", "preset": "paper004", "problem": "fep-f5", "iters": 2000,
                              "algorithm_params": {"pop_size": mu}, "snapshots": (100, 500, 1000, 2000)},
                   "paper": {}}
                  for mu in _FEP_POPS],
            runs={"quick": 1, "paper": 1}, quick={"iters": ("cap", 500)}, timing="each",
        ),
    ],
)

PAPERS = {p.key: p for p in (PSO, PRS, FIREFLY, APO, FEP)}
