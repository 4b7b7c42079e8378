"""Philox 4x32-10 (Salmon et al. 2011) for the native CPU kernels, as Triton's
`tl.random.philox` computes it, and the conversion of its words to uniforms.

Random numbers are counter-based: keyed by the run set's key, with the counter naming the
individual, coordinate, iteration and stream. A number therefore does not depend on which
thread draws it, or on how many threads there are: the same seed gives the same runs on 1
or 16 threads. The counter layouts are the Triton kernels', so where an algorithm has both,
the CPU and CUDA fast paths draw the same numbers.
"""

from __future__ import annotations

import numpy as np
from . import cpu_cache  # noqa: F401 - before any cached function (see there)
from numba import njit

_MASK = np.uint64(0xFFFFFFFF)


@njit(cache=True, inline="always")
def philox(key, c0, c1, c2, c3):
    """Four 32-bit words (in uint64s) for a 64-bit `key` and a 128-bit counter (c0..c3)."""
    k0 = np.uint64(key) & _MASK
    k1 = np.uint64(key) >> np.uint64(32)
    c0, c1, c2, c3 = np.uint64(c0) & _MASK, np.uint64(c1) & _MASK, np.uint64(c2) & _MASK, np.uint64(c3) & _MASK
    for _ in range(10):
        p0 = np.uint64(0xD2511F53) * c0
        p2 = np.uint64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = ((p2 >> np.uint64(32)) ^ c1 ^ k0, p2 & _MASK, (p0 >> np.uint64(32)) ^ c3 ^ k1, p0 & _MASK)
        k0 = (k0 + np.uint64(0x9E3779B9)) & _MASK
        k1 = (k1 + np.uint64(0xBB67AE85)) & _MASK
    return c0, c1, c2, c3


#: A 32-bit word as a float64 uniform in [0, 1): word x 2^-32 (the kernels' float64 draws).
UNIT32 = 2.0**-32


@njit(cache=True, inline="always")
def row_words(key, counter, c2, step, stream):
    """Philox's four words for a 64-bit row counter (split into the first two counter words,
    `c2` added to the high one), a step and a stream."""
    c = np.uint64(counter)
    return philox(key, c & _MASK, (c >> np.uint64(32)) + np.uint64(c2), step, stream)


@njit(cache=True, inline="always")
def uniform(word):
    """A 32-bit word as a number in [0, 1), as tl.random.uint_to_uniform_float does (float32):
    the word read as a signed int32 x, then -x - 1 where x < 0 (that is ~x), times 2^-31.
    All in int32, as int32 -> float32 is a SIMD conversion and int64 -> float32 is not
    before AVX-512: in int64 this took most of a Philox call's time again (checked equal
    on every one of the 2^32 words)."""
    x = np.int32(word)  # the low 32 bits, wrapped
    x = np.int32(x ^ np.int32(x >> np.int32(31)))
    return np.float32(x) * np.float32(4.6566127342e-10)


@njit(cache=True, inline="always")
def word_pair(key, row, d, half, step, stream):
    """Two uniforms for coordinate d of population row `row` in iteration `step`: the Triton
    kernels' `uniform_pairs` layout (one Philox call per pair of coordinates, row-major over
    `half` pairs per row)."""
    pair = np.uint64(row) * np.uint64(half) + np.uint64(d // 2)
    a, b, c, e = philox(key, pair & _MASK, pair >> np.uint64(32), step, stream)
    if d % 2 == 0:
        return uniform(a), uniform(c)
    return uniform(b), uniform(e)
