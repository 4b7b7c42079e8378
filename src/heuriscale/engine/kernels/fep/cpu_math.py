"""FEP's elementary functions for its Numba kernel, as branch-free code that LLVM vectorises.

Numba leaves `math.log`, `math.cos`... as scalar calls into libm, which would cost more than
the rest of a generation; the kernel takes these polynomial versions instead, in the run's
dtype as the Triton kernels compute: exact range reductions, then polynomials accurate to
about an ulp (`_coefficients`). `fast_exp`, `fast_sin`, `cos_turns`, `box_muller` and
`cauchy` are compiled for the dtype of their last argument.
"""

from __future__ import annotations

import math
from decimal import Context, Decimal

import numpy as np
from numba import njit, types
from numba.extending import overload
from numpy.polynomial import Chebyshev, Polynomial

_DEC = Context(prec=40)
_LN2 = Decimal("0.6931471805599453094172321214581765680755")
_PI = Decimal("3.141592653589793238462643383279502884197")


def pi_error(ftype) -> float:
    """pi rounded to ftype, minus pi (the Triton kernel's Cauchy angles are multiples of the former)."""
    return float(_DEC.subtract(Decimal(float(ftype(math.pi))), _PI))


def _split(value: Decimal, bits: int, ftype) -> tuple:
    """value = hi + lo, hi on `bits` fractional bits, so that k * hi is exact for small k."""
    hi = round(float(value) * 2**bits) / 2**bits
    return ftype(hi), ftype(float(_DEC.subtract(value, Decimal(hi))))


def _coefficients(ftype) -> dict:
    """Polynomials (highest power first), about an ulp of ftype on the reduced ranges:
    exp(r) for |r| <= ln2/2; atanh(s)/s, sin(a)/a and cos(a) in s^2 or a^2 for
    |s| <= 3 - sqrt(8), |a| <= pi/4. float64: Taylor series; float32: Chebyshev interpolants
    (near-minimax, so fewer terms; in float64 their monomial form loses more precision than
    Taylor's extra terms cost)."""
    if ftype is np.float64:
        fact = math.factorial
        return {"exp": tuple(1 / fact(k) for k in reversed(range(14))),
                "atanh": tuple(1 / (2 * k + 1) for k in reversed(range(11))),
                "sin": tuple((-1) ** k / fact(2 * k + 1) for k in reversed(range(8))),
                "cos": tuple((-1) ** k / fact(2 * k) for k in reversed(range(9)))}

    def fit(fn, hi, degree, lo=0.0):
        p = Chebyshev.interpolate(fn, degree, domain=[lo, hi])
        return tuple(p.convert(kind=Polynomial, domain=[lo, hi], window=[lo, hi]).coef[::-1])

    r, s2, a2 = math.log(2) / 2, (3 - math.sqrt(8)) ** 2, (math.pi / 4) ** 2
    return {"exp": fit(np.exp, r, 6, -r),
            "atanh": fit(lambda t: np.arctanh(np.sqrt(t)) / np.sqrt(t), s2, 3),
            "sin": fit(lambda t: np.sin(np.sqrt(t)) / np.sqrt(t), a2, 3),
            "cos": fit(lambda t: np.cos(np.sqrt(t)), a2, 3)}


def _elementary(ftype, itype) -> dict:
    """exp, Box-Muller, Cauchy, cos(2 pi v) and sin in `ftype`, as branch-free code that
    LLVM vectorises: exact range reductions, then `_coefficients`' polynomials. Valid where
    the kernels use them: |z| < 80 for exp, 0 < w <= 1 for log, |v|, |a| < 2^20 (cpu.py's FAST_BOX)."""
    F, I = ftype, itype
    bits, exponent_bias = (52, 1023) if ftype is np.float64 else (23, 127)  # IEEE 754 layout
    mantissa, one_bits, shift, bias = I((1 << bits) - 1), I(exponent_bias << bits), I(bits), I(exponent_bias)
    exp_c, atanh_c, sin_c, cos_c = (tuple(F(c) for c in cs) for cs in _coefficients(ftype).values())
    ln2_hi, ln2_lo = _split(_LN2, 32 if bits == 52 else 16, F)
    half_pi_hi, half_pi_lo = _split(_DEC.divide(_PI, 2), 32 if bits == 52 else 12, F)
    ln2, inv_ln2, sqrt2 = F(math.log(2)), F(1 / math.log(2)), F(math.sqrt(2))
    pi, two_pi, two_by_pi = F(math.pi), F(2 * math.pi), F(2 / math.pi)
    zero, half, quarter, one, two, four = F(0), F(0.5), F(0.25), F(1), F(2), F(4)

    @njit(inline="always")
    def horner(c, r):
        p = c[0]
        for i in range(1, len(c)):
            p = p * r + c[i]
        return p

    @njit(inline="always")
    def exp(z):
        k = np.floor(z * inv_ln2 + half)  # z = k ln2 + r, |r| <= ln2 / 2
        r = (z - k * ln2_hi) - k * ln2_lo
        return horner(exp_c, r) * I((I(k) + bias) << shift).view(F)  # times 2^k, made as a float's bits

    @njit(inline="always")
    def log(w):
        b = F(w).view(I)
        e = F((b >> shift) - bias)
        m = I((b & mantissa) | one_bits).view(F)  # w = 2^e m, 1 <= m < 2
        big = m > sqrt2
        m, e = (m * half, e + one) if big else (m, e)
        s = (m - one) / (m + one)  # log m = 2 atanh(s)
        return e * ln2 + two * s * horner(atanh_c, s * s)

    @njit(inline="always")
    def sincos(a):  # |a| <= pi/4
        a2 = a * a
        return a * horner(sin_c, a2), horner(cos_c, a2)

    @njit(inline="always")
    def quadrant(a, n):
        """(cos, sin) of a + n pi/2, |a| <= pi/4: sin and cos of a, swapped and negated."""
        s, c = sincos(a)
        q = I(n)
        cos_v, sin_v = (s, c) if q & 1 else (c, s)
        return -cos_v if (q + 1) & 2 else cos_v, -sin_v if q & 2 else sin_v

    @njit(inline="always")
    def turns(v):
        """(cos, sin) of 2 pi v: v = n / 4 + t exactly, |t| <= 1/8."""
        n = np.floor(four * v + half)
        return quadrant(two_pi * (v - quarter * n), n)

    @njit(inline="always")
    def sin(a):
        n = np.floor(a * two_by_pi + half)  # a = n pi/2 + r
        return quadrant((a - n * half_pi_hi) - n * half_pi_lo, n)[1]

    @njit(inline="always")
    def cos_turns(v):
        return turns(v)[0]

    @njit(inline="always")
    def box_muller(u, v):
        """N(0,1) x 2 from U[0,1) x 2, as the Triton kernel's _box_muller (1 - u > 0)."""
        c, s = turns(F(v))
        radius = np.sqrt(-two * log(one - F(u)))
        return radius * c, radius * s

    @njit(inline="always")
    def cauchy(u, pi_err):
        """tan((u - 1/2) pi_F), pi_F = pi rounded to F = pi + pi_err, as the Triton kernel
        takes sin / cos of that rounded angle: t = n / 2 + r exactly, |r| <= 1/4."""
        t = F(u) - half
        n = np.floor(two * t + half)
        s, c = sincos(pi * (t - half * n) + pi_err * t)
        num, den = (s, c) if n == zero else (-c, s)  # tan, or -cot a quarter turn on (one division)
        return num / den

    return {"exp": exp, "sin": sin, "cos_turns": cos_turns, "box_muller": box_muller, "cauchy": cauchy}


_ELEMENTARY = {types.float32: _elementary(np.float32, np.int32), types.float64: _elementary(np.float64, np.int64)}


# Functions for kernels only, compiled for the dtype of their last argument.
def fast_exp(z):
    """exp(z)."""


def fast_sin(a):
    """sin(a)."""


def cos_turns(v):
    """cos(2 pi v)."""


def box_muller(u, v, like):
    """Two N(0,1) from two U[0,1), in like's dtype."""


def cauchy(u, pi_err):
    """A standard Cauchy number from a U[0,1), in pi_err's dtype (see `_elementary`)."""


@overload(fast_exp)
def _fast_exp(z):
    impl = _ELEMENTARY[z]["exp"]
    return lambda z: impl(z)


@overload(fast_sin)
def _fast_sin(a):
    impl = _ELEMENTARY[a]["sin"]
    return lambda a: impl(a)


@overload(cos_turns)
def _cos_turns(v):
    impl = _ELEMENTARY[v]["cos_turns"]
    return lambda v: impl(v)


@overload(box_muller)
def _box_muller(u, v, like):
    impl = _ELEMENTARY[like]["box_muller"]
    return lambda u, v, like: impl(u, v)


@overload(cauchy)
def _cauchy(u, pi_err):
    impl = _ELEMENTARY[pi_err]["cauchy"]
    return lambda u, pi_err: impl(u, pi_err)
