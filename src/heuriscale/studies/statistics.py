"""Statistics of a benchmarking campaign: summaries, pairwise rank-sum tests, Holm, Friedman + Nemenyi.

Every test is scipy's; this module only decides the conventions a campaign report needs and writes
them down once:

- Lower error is better. A run whose error is NaN or inf failed: it counts as worse than every
  number (NaN -> +inf before any ranking), and it is counted, never silently dropped.
- Pairwise: two-sided Wilcoxon rank-sum = Mann-Whitney U. With at most `EXACT_RUNS` (10) runs a
  side, p is exact: the permutation distribution of the rank sum given the observed ties (every
  split of the pooled midranks into the two sample sizes equally likely), two-sided as
  `scipy.stats.permutation_test` takes it (twice the smaller tail, capped at 1), so it equals
  `scipy.stats.mannwhitneyu(..., method=scipy.stats.PermutationMethod())` with exhaustive
  enumeration. Above that, scipy's normal approximation with tie and continuity correction
  (`mannwhitneyu(..., method="asymptotic")`). Errors tie often (runs that all reach 0), and
  with ties the normal approximation is too small for small samples (5 runs each, all 0 against
  all 1: 0.0040 against the exact 0.0079).
- Effect size: Vargha-Delaney A12 beside every p (`a12`): the probability that a run of one
  algorithm has a lower error than a run of the other, ties counting half; magnitudes
  negligible / small / medium / large at |A12 - 0.5| >= 0.06, 0.14, 0.21 (A12 = 0.56, 0.64,
  0.71; Vargha & Delaney 2000).
- Multiplicity: Holm step-down over a family = the functions of one dimension for one algorithm
  against the reference (what one '+/=/-' row of the report summarises).
- Many algorithms over many functions: Friedman on per-function mean errors, then the Nemenyi
  critical difference (Demsar 2006), which the CD diagram draws.
- One error convention for every suite and every format (`reported_error`): an error below
  1e-8 is 0 (the CEC rule: "error value smaller than 10^-8 will be taken as zero"), which also
  takes care of float rounding that puts a best f a hair below a stored f*. The results store
  keeps the raw best values; the convention is applied where a report reads them.
- Before a campaign: `attainable` says whether the runs per side and the size of Holm's
  family can give a significant result at all (the smallest p of the rank-sum test, exact or
  approximate as `rank_sum` computes it, is that of two perfectly separated samples).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np
from scipy import stats

from ..names import natural_key

__all__ = ["summary", "rank_sum", "holm", "versus_reference", "friedman", "critical_difference", "as_errors",
           "natural_key", "reported_error", "error_of", "ERROR_FLOOR", "attainable", "smallest_p", "a12",
           "a12_magnitude", "EXACT_RUNS", "A12_THRESHOLDS"]

#: Errors below this are reported as 0 (CEC 2017 / 2022 technical reports, sec. 2.2).
ERROR_FLOOR = 1e-8

#: Up to this many runs a side the rank-sum p is exact (the permutation distribution given the
#: ties, C(20, 10) = 184,756 splits at 10 and 10), above it the normal approximation.
EXACT_RUNS = 10

#: Vargha & Delaney (2000): |A12 - 0.5| from which an effect is small, medium, large (A12 = 0.56,
#: 0.64, 0.71 or, the other way round, 0.44, 0.36, 0.29); below the first it is negligible.
A12_THRESHOLDS = ((Fraction(21, 100), "large"), (Fraction(14, 100), "medium"), (Fraction(6, 100), "small"))


def reported_error(error: float) -> float:
    """The error as every report prints and tests it: below `ERROR_FLOOR` (negative ones from
    float rounding included) it is 0.0; NaN (a failed run) and inf stay as they are."""
    error = float(error)
    return 0.0 if error < ERROR_FLOOR else error  # NaN compares False: kept


def error_of(f: float, optimum: float | None) -> float:
    """What a report shows for a best value f: the error f - f* in the one convention
    (`reported_error`), or, where f* is unknown, f itself (a value, not an error: never
    floored, negative values included)."""
    return float(f) if optimum is None else reported_error(float(f) - float(optimum))


def as_errors(values) -> np.ndarray:
    """Float array with NaN (a failed run) replaced by +inf, so that it ranks worst."""
    a = np.asarray(values, dtype=float).ravel()
    return np.where(np.isnan(a), np.inf, a)


def summary(errors) -> dict:
    """n, failed (runs with NaN/inf error), mean and std (sample, ddof=1) of the finite errors,
    best, median and worst of all runs (a failed run is +inf there).

    mean/std are None when no finite run is left (std also with a single one); report them beside
    `failed` so a mean over fewer runs is never mistaken for a mean over all."""
    a = as_errors(errors)
    finite = a[np.isfinite(a)]
    return {
        "n": int(a.size),
        "failed": int(a.size - finite.size),
        "mean": float(finite.mean()) if finite.size else None,
        "std": float(finite.std(ddof=1)) if finite.size > 1 else None,
        "best": float(a.min()) if a.size else None,
        "median": float(np.median(a)) if a.size else None,
        "worst": float(a.max()) if a.size else None,
    }


def rank_sum(a, b) -> dict:
    """Two-sided Wilcoxon rank-sum test of samples a and b: {"p", "u", "lower", "method"}.

    `u` is scipy's U of `a`; "lower" says which sample tends to the lower values ("a", "b" or
    None when U sits exactly at its null mean n_a n_b / 2); "method" is "exact" (at most
    `EXACT_RUNS` runs a side: the permutation distribution given the ties, `exact_rank_sum_p`)
    or "normal" (scipy's normal approximation with tie and continuity correction). Samples with
    no spread between them (identical, or all one constant) give p = 1 rather than NaN; so does
    an empty sample."""
    a, b = as_errors(a), as_errors(b)
    exact = max(a.size, b.size) <= EXACT_RUNS
    method = "exact" if exact else "normal"
    if a.size == 0 or b.size == 0:
        return {"p": 1.0, "u": 0.0, "lower": None, "method": method}
    both = np.concatenate([a, b])
    if np.all(both == both[0]):  # zero variance of the pooled ranks: the normal approximation divides by 0
        return {"p": 1.0, "u": a.size * b.size / 2, "lower": None, "method": method}
    if exact:
        ranks = stats.rankdata(both)  # midranks: +inf ties with +inf
        u = float(ranks[: a.size].sum() - a.size * (a.size + 1) / 2)
        p = exact_rank_sum_p(ranks, a.size)
    else:
        res = stats.mannwhitneyu(a, b, alternative="two-sided", method="asymptotic")
        u, p = float(res.statistic), float(res.pvalue)
    mid = a.size * b.size / 2
    return {"p": min(1.0, p) if math.isfinite(p) else 1.0, "u": u,
            "lower": "a" if u < mid else "b" if u > mid else None, "method": method}


def exact_rank_sum_p(ranks, n_a: int) -> float:
    """Exact two-sided p of the rank sum of the first `n_a` of the pooled midranks `ranks`: over
    all C(N, n_a) equally likely ways to pick n_a of them, twice the smaller of P(S <= s) and
    P(S >= s), capped at 1 (the two-sided p of `scipy.stats.permutation_test`).

    Counted, not sampled: midranks are multiples of 1/2, so with integer r = 2 x rank the
    number of n_a-subsets of each sum is a 0/1 knapsack count over the N items (a few thousand
    integer additions at 10 runs a side, where scipy's exhaustive permutation test re-ranks
    184,756 splits)."""
    doubled = np.rint(2 * np.asarray(ranks, dtype=float)).astype(np.int64)
    observed = int(doubled[:n_a].sum())
    total = int(doubled.sum())
    counts = np.zeros((n_a + 1, total + 1), dtype=np.int64)  # counts[k, s]: k-subsets with sum s
    counts[0, 0] = 1
    for r in doubled:
        counts[1:, r:] += counts[:-1, : total + 1 - r].copy()  # take item r or not (copy: each item once)
    dist = counts[n_a]
    splits = dist.sum()
    low, high = dist[: observed + 1].sum(), dist[observed:].sum()
    return min(1.0, 2 * int(min(low, high)) / int(splits))


def a12(a, b) -> float | None:
    """Vargha-Delaney A12 of sample a against b, lower values better: P(X_a < X_b) + P(X_a = X_b) / 2
    over all pairs of a run of a and a run of b. 1: every run of a beats every run of b; 0.5:
    no tendency; 0: every run of b beats a. NaN (a failed run) counts as +inf, the worst; None
    when a sample is empty."""
    a, b = as_errors(a), as_errors(b)
    if a.size == 0 or b.size == 0:
        return None
    return float(_a12_fraction(a, b))


def _a12_fraction(a: np.ndarray, b: np.ndarray) -> Fraction:
    wins = int((a[:, None] < b[None, :]).sum())
    ties = int((a[:, None] == b[None, :]).sum())
    return Fraction(2 * wins + ties, 2 * a.size * b.size)


def a12_magnitude(a, b) -> str | None:
    """'negligible', 'small', 'medium' or 'large' for the A12 of a against b (`A12_THRESHOLDS`,
    either direction), computed on the exact fraction so that A12 = 0.56 is 'small' whatever the
    float rounding; None when a sample is empty."""
    a, b = as_errors(a), as_errors(b)
    if a.size == 0 or b.size == 0:
        return None
    distance = abs(_a12_fraction(a, b) - Fraction(1, 2))
    return next((label for at_least, label in A12_THRESHOLDS if distance >= at_least), "negligible")


def holm(pvalues) -> list[float]:
    """Holm (1979) step-down adjusted p-values, in the input order.

    Sorted ascending, p_(i) becomes max_{j <= i} min(1, (m - j + 1) p_(j)): monotone in the raw
    order and capped at 1; reject where adjusted p < alpha controls the family-wise error."""
    p = np.asarray(pvalues, dtype=float)
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (len(p) - np.arange(len(p))) * p[order])
    out = np.empty_like(p)
    out[order] = np.maximum.accumulate(scaled)
    return out.tolist()


def versus_reference(runs, reference: str, alpha: float = 0.05) -> dict:
    """Every other algorithm against `reference`, per dimension and function.

    Returns {dim: {algorithm: {"functions": {function: {"p", "p_holm", "sign", "method", "a12",
    "magnitude"}}, "counts": {"+", "=", "-"}}}}.
    sign '+': the algorithm has significantly lower error than the reference (Holm-adjusted
    p < alpha), '-': significantly higher, '=': no significant difference. Holm's family is the
    functions of one dimension for one algorithm. a12: Vargha-Delaney A12 of the algorithm
    against the reference (the probability that a run of the algorithm has a lower error than a
    run of the reference, ties half; > 0.5 favours the algorithm), magnitude its label. A
    function where either side has no run is left out of the family, with every entry None,
    and not counted."""
    cells: dict = {}
    for r in runs:
        cells.setdefault((r["dim"], r["function"], r["algorithm"]), []).append(r["error"])
    out: dict = {}
    for dim in sorted({d for d, _, _ in cells}):
        functions = sorted({f for d, f, _ in cells if d == dim}, key=natural_key)
        algorithms = sorted({a for d, _, a in cells if d == dim and a != reference})
        out[dim] = {}
        for algo in algorithms:
            tested = {f: rank_sum(cells[dim, f, algo], cells[dim, f, reference]) for f in functions
                      if (dim, f, algo) in cells and (dim, f, reference) in cells}
            adjusted = dict(zip(tested, holm([t["p"] for t in tested.values()])))
            rows, counts = {}, {"+": 0, "=": 0, "-": 0}
            for f in functions:
                if f not in tested:
                    rows[f] = {"p": None, "p_holm": None, "sign": None, "method": None, "a12": None,
                               "magnitude": None}
                    continue
                lower = tested[f]["lower"] if adjusted[f] < alpha else None
                sign = "+" if lower == "a" else "-" if lower == "b" else "="
                counts[sign] += 1
                mine, theirs = cells[dim, f, algo], cells[dim, f, reference]
                rows[f] = {"p": tested[f]["p"], "p_holm": adjusted[f], "sign": sign, "method": tested[f]["method"],
                           "a12": a12(mine, theirs), "magnitude": a12_magnitude(mine, theirs)}
            out[dim][algo] = {"functions": rows, "counts": counts}
    return out


@lru_cache(maxsize=None)
def _q_alpha(k: int, alpha: float) -> float:
    return float(stats.studentized_range.ppf(1 - alpha, k, np.inf) / math.sqrt(2))


def critical_difference(k: int, n: int, alpha: float = 0.05) -> float:
    """Nemenyi critical difference of mean ranks, q_alpha sqrt(k (k + 1) / (6 n)), with q_alpha the
    studentized range quantile over sqrt 2 (Demsar 2006, Table 5); 0 when k < 2 or n < 1."""
    if k < 2 or n < 1:
        return 0.0
    return _q_alpha(k, alpha) * math.sqrt(k * (k + 1) / (6 * n))


def friedman(matrix, alpha: float = 0.05) -> dict:
    """Friedman test of a (functions x algorithms) matrix of mean errors.

    Returns {"ranks": mean rank per column (1 = lowest error, ties averaged), "statistic", "p",
    "test", "n", "k", "cd"}. `test` names what gave p:
      "friedman": scipy.stats.friedmanchisquare, when k >= 3 and n >= 2 and some row is not a tie;
      "sign":     k = 2, n >= 2: the exact two-sided sign test over functions (scipy.stats.binomtest,
                  ties dropped; statistic = functions where column 0 is lower, "untied" = functions
                  tested). Friedman with two columns is this test; it stays scale-free, unlike a
                  signed-rank test on the errors of differently scaled functions;
      "none":     nothing to test (k < 2, n < 2, or every row a complete tie): statistic 0, p 1.
    NaN entries count as the worst (+inf)."""
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2:
        raise ValueError(f"friedman expects a 2-D (functions x algorithms) matrix, got shape {m.shape}")
    m = np.where(np.isnan(m), np.inf, m)
    n, k = m.shape
    ranks = np.vstack([stats.rankdata(row) for row in m]).mean(axis=0) if n else np.full(k, (k + 1) / 2)
    out = {"ranks": ranks.tolist(), "statistic": 0.0, "p": 1.0, "test": "none", "n": n, "k": k,
           "cd": critical_difference(k, n, alpha)}
    untied = [row for row in m if not np.all(row == row[0])] if k else []
    if n < 2 or k < 2 or not untied:
        return out
    if k == 2:
        wins = sum(int(row[0] < row[1]) for row in untied)
        res = stats.binomtest(wins, len(untied), 0.5)
        return {**out, "statistic": float(wins), "untied": len(untied), "p": float(res.pvalue), "test": "sign"}
    res = stats.friedmanchisquare(*m.T)  # ranks rows itself; +inf ties with +inf and ranks last
    return {**out, "statistic": float(res.statistic), "p": float(res.pvalue), "test": "friedman"}


def smallest_p(runs_a: int, runs_b: int | None = None) -> float:
    """The smallest two-sided p `rank_sum` can give with these sample sizes: that of two
    perfectly separated samples. Exact (at most `EXACT_RUNS` a side) it is 2 / C(n_a + n_b, n_a),
    with or without ties within the samples; above that, ties within the samples (each all one
    value) shrink the normal approximation's variance (its tie correction) and give a smaller p
    than separated samples without ties; in campaigns they are common (every run of one
    algorithm reaching 0 error), so the smaller of the two counts."""
    runs_b = runs_a if runs_b is None else runs_b
    if runs_a < 1 or runs_b < 1:
        return 1.0
    untied = rank_sum(np.arange(runs_a), runs_a + np.arange(runs_b))["p"]
    tied = rank_sum(np.zeros(runs_a), np.ones(runs_b))["p"]
    return min(untied, tied)


def attainable(runs: int, functions: int, alpha: float = 0.05, most_runs: int = 200) -> dict:
    """Whether `runs` runs per side over a Holm family of `functions` tests can give any
    significant result at `alpha`.

    Holm multiplies the smallest p of the family by its size, so the smallest adjusted p any
    data can give is min(1, functions x smallest_p(runs)). Returns {"possible", "min_p_holm",
    "runs_needed"}: runs_needed is the fewest runs per side from which every larger count (up to
    `most_runs`) makes a significant result possible (None if none does)."""
    def best(n: int) -> float:
        return min(1.0, functions * smallest_p(n))

    floor = best(runs) if functions >= 1 else 1.0
    needed = None
    for n in range(most_runs, 1, -1):
        if best(n) >= alpha:
            break
        needed = n
    return {"possible": floor < alpha, "min_p_holm": floor, "runs_needed": needed}


def significance_sentence(runs: int, functions: int, alpha: float, where: str = "") -> tuple[bool, str]:
    """(possible, one sentence) on whether `runs` runs per side over `functions` functions
    (Holm's family) can show a significant difference at `alpha`; `where` e.g. ' at D = 10'."""
    a = attainable(runs, functions, alpha)
    head = (f"With {runs} run{'s' if runs != 1 else ''} per algorithm and {functions} function"
            f"{'s' if functions != 1 else ''}{where} (Holm's family), the smallest Holm-adjusted rank-sum p any data "
            f"can give is {a['min_p_holm']:.3g}")
    if a["possible"]:
        return True, f"{head} (< alpha = {alpha:g}): a difference can show."
    n = a["runs_needed"]
    more = (f"; it takes at least {n} runs per algorithm (at {n}, only samples that do not overlap can come out "
            f"significant; more runs detect smaller differences)" if n else "; no run count up to 200 reaches it")
    return False, (f"{head}, not below alpha = {alpha:g}: no function can come out '+' or '-' whatever the "
                   f"data{more}.")
