"""The classic benchmark functions one row at a time, f(x, data) -> float64 for one point x
(1-D, float32 or float64, computed in float64; data unused), each equal to its torch
function in `problems/classic.py`: what the native kernels compute inline
(`cpu_objectives.py`), and the building blocks of the CEC functions (`cpu_cec.py`)."""

from __future__ import annotations

import math

import numpy as np

from .cpu_jobs import inner


@inner
def sphere(x, data):
    acc = 0.0
    for d in range(x.shape[0]):
        acc += np.float64(x[d]) * x[d]
    return acc


@inner
def euclidean(x, data):
    return math.sqrt(sphere(x, data))


@inner
def rastrigin(x, data):
    n, acc = x.shape[0], 0.0
    for d in range(n):
        v = np.float64(x[d])
        acc += v * v - 10.0 * math.cos(2.0 * math.pi * v)
    return 10.0 * n + acc


@inner
def ackley(x, data):
    n, sq, cs = x.shape[0], 0.0, 0.0
    for d in range(n):
        v = np.float64(x[d])
        sq += v * v
        cs += math.cos(2.0 * math.pi * v)
    return -20.0 * math.exp(-0.2 * math.sqrt(sq / n)) - math.exp(cs / n) + 20.0 + math.e


@inner
def griewank(x, data):
    acc, prod = 0.0, 1.0
    for d in range(x.shape[0]):
        v = np.float64(x[d])
        acc += v * v
        prod *= math.cos(v / math.sqrt(d + 1.0))
    return acc / 4000.0 - prod + 1.0


@inner
def rosenbrock(x, data):
    acc = 0.0
    for d in range(x.shape[0] - 1):
        a, b = np.float64(x[d]), np.float64(x[d + 1])
        acc += 100.0 * (b - a * a) ** 2 + (a - 1.0) ** 2
    return acc


@inner
def schwefel_1_2(x, data):
    acc, s = 0.0, 0.0
    for d in range(x.shape[0]):
        s += x[d]
        acc += s * s
    return acc


@inner
def schwefel_2_21(x, data):
    acc = 0.0
    for d in range(x.shape[0]):
        acc = max(acc, abs(np.float64(x[d])))
    return acc


@inner
def schwefel_2_22(x, data):
    acc, prod = 0.0, 1.0
    for d in range(x.shape[0]):
        acc += abs(np.float64(x[d]))
        prod *= abs(np.float64(x[d]))
    return acc + prod


@inner
def schwefel_2_26(x, data):
    acc = 0.0
    for d in range(x.shape[0]):
        v = np.float64(x[d])
        acc -= v * math.sin(math.sqrt(abs(v)))
    return acc


@inner
def step(x, data):
    acc = 0.0
    for d in range(x.shape[0]):
        acc += math.floor(np.float64(x[d]) + 0.5) ** 2
    return acc


@inner
def zakharov(x, data):
    acc, s = 0.0, 0.0
    for d in range(x.shape[0]):
        v = np.float64(x[d])
        acc += v * v
        s += 0.5 * (d + 1) * v
    return acc + s * s + s ** 4


@inner
def levy(x, data):
    n = x.shape[0]
    w0 = 1.0 + (np.float64(x[0]) - 1.0) / 4.0
    acc = math.sin(math.pi * w0) ** 2
    for d in range(n - 1):
        w = 1.0 + (np.float64(x[d]) - 1.0) / 4.0
        acc += (w - 1.0) ** 2 * (1.0 + 10.0 * math.sin(math.pi * w + 1.0) ** 2)
    w = 1.0 + (np.float64(x[n - 1]) - 1.0) / 4.0
    return acc + (w - 1.0) ** 2 * (1.0 + math.sin(2.0 * math.pi * w) ** 2)


@inner
def bent_cigar(x, data):
    acc = 0.0
    for d in range(1, x.shape[0]):
        acc += np.float64(x[d]) * x[d]
    return np.float64(x[0]) * x[0] + 1e6 * acc


@inner
def elliptic(x, data):
    """Weights 1e6 ** (d / (n - 1)) as a running product (a power per term is slow)."""
    n, acc = x.shape[0], 0.0
    ratio, weight = 1e6 ** (1.0 / max(n - 1, 1)), 1.0
    for d in range(n):
        acc += weight * np.float64(x[d]) * x[d]
        weight *= ratio
    return acc


@inner
def hgbat(x, data):
    n, acc, s = x.shape[0], 0.0, 0.0
    for d in range(n):
        v = np.float64(x[d])
        acc += v * v
        s += v
    return math.sqrt(abs(acc * acc - s * s)) + (0.5 * acc + s) / n + 0.5
