"""Campaign statistics: scipy's numbers on fixed samples, Holm by hand and against R, Demsar's constants,
ties and zero variance, and signs that point the right way."""

import math

import numpy as np
import pytest
from scipy import stats

from heuriscale.studies.statistics import (a12, a12_magnitude, critical_difference, friedman, holm, rank_sum, summary,
                                          versus_reference)
from heuriscale.viz.campaign import cliques

A = [1.2, 3.4, 0.5, 2.2, 4.1]
B = [5.3, 6.1, 2.9, 7.7, 5.0]


def test_summary_uses_sample_std_and_counts_failed_runs():
    s = summary(A)
    assert s["mean"] == pytest.approx(np.mean(A))
    assert s["std"] == pytest.approx(np.std(A, ddof=1))
    assert (s["best"], s["median"], s["worst"], s["n"], s["failed"]) == (0.5, 2.2, 4.1, 5, 0)
    s = summary([1.0, math.nan, 3.0, math.inf])
    assert (s["failed"], s["mean"], s["std"]) == (2, 2.0, pytest.approx(math.sqrt(2)))
    assert (s["best"], s["worst"]) == (1.0, math.inf)
    assert summary([2.0])["std"] is None
    assert summary([math.nan])["mean"] is None


def test_rank_sum_is_scipys_mann_whitney():
    exact = stats.mannwhitneyu(A, B, alternative="two-sided", method="exact")
    assert rank_sum(A, B)["p"] == pytest.approx(exact.pvalue)  # 5 runs, no ties: exact
    big_a, big_b = np.arange(12.0), np.arange(12.0) + 4.5  # above 10 runs a side: normal, tie-corrected
    tied_a, tied_b = np.r_[np.zeros(6), np.arange(6.0)], np.r_[np.ones(4), np.arange(2.0, 10.0)]
    for a, b in ((big_a, big_b), (tied_a, tied_b)):
        res = rank_sum(a, b)
        assert res["method"] == "normal"
        assert res["p"] == pytest.approx(stats.mannwhitneyu(a, b, method="asymptotic").pvalue)


def _permutation_p(a, b) -> float:
    """scipy's exact permutation p: every split of the pooled samples enumerated."""
    splits = math.comb(len(a) + len(b), len(a))
    return stats.mannwhitneyu(a, b, alternative="two-sided", method=stats.PermutationMethod(n_resamples=splits)).pvalue


@pytest.mark.parametrize("a, b, published", [([0] * 5, [1] * 5, 0.0079), ([0, 0, 0, 0, 1], [1, 1, 1, 2, 2], 0.0317),
                                             (A, B, None), ([0, 0, 0, 1e-3, 2e-3], B, None),
                                             ([3, 3, 1, 2, 2, 5], [2, 3, 4, 4, 4, 4, 6], None)])
def test_rank_sum_with_ties_is_scipys_exact_permutation_p(a, b, published):
    res = rank_sum(a, b)
    assert res["method"] == "exact" and res["p"] == pytest.approx(_permutation_p(a, b), rel=1e-12)
    if published is not None:  # the values a referee computes (the normal approximation gave 0.0040 and 0.0189)
        assert round(res["p"], 4) == published


def test_rank_sum_exact_on_random_tied_samples_up_to_ten_a_side():
    rng = np.random.default_rng(3)
    for n_a, n_b in ((2, 9), (4, 4), (7, 5), (10, 3)):  # scipy's enumeration takes seconds at 10 vs 10
        for _ in range(4):
            a, b = rng.integers(0, 4, n_a).astype(float), rng.integers(1, 5, n_b).astype(float)
            if np.ptp(np.r_[a, b]) == 0:
                continue
            assert rank_sum(a, b)["p"] == pytest.approx(_permutation_p(a, b), rel=1e-12), (a, b)
    # 10 vs 10, every run of a side at one value: 2 / C(20, 10)
    assert rank_sum(np.zeros(10), np.ones(10))["p"] == pytest.approx(2 / 184756)
    assert rank_sum(np.zeros(11), np.ones(11))["method"] == "normal"


def test_a12_direction_ties_and_magnitudes():
    assert a12([0] * 5, [1] * 5) == 1.0 and a12([1] * 5, [0] * 5) == 0.0  # lower error wins
    assert a12([1, 2], [1, 2]) == 0.5  # ties count half
    # each 0 beats all 5; the 1 beats the two 2s and ties the three 1s
    assert a12([0, 0, 0, 0, 1], [1, 1, 1, 2, 2]) == pytest.approx((22 + 0.5 * 3) / 25)
    assert a12([math.nan], [1e300]) == 0.0 and a12([], [1]) is None  # a failed run is the worst
    # thresholds on |A12 - 0.5|: 0.06, 0.14, 0.21, either direction, at the exact fraction
    def pair(k):  # 50 x 1 comparisons, k of them won: A12 = k / 50
        return list(range(50)), [k - 0.5]
    labels = {k / 50: a12_magnitude(*pair(k)) for k in (28, 27, 32, 31, 36, 35, 25, 22, 21, 15, 14)}
    assert labels == {0.56: "small", 0.54: "negligible", 0.64: "medium", 0.62: "small", 0.72: "large",
                      0.7: "medium", 0.5: "negligible", 0.44: "small", 0.42: "small", 0.3: "medium", 0.28: "large"}
    assert [a12(*pair(k)) for k in (28, 14)] == [0.56, 0.28]


def test_rank_sum_direction():
    assert rank_sum(A, B)["lower"] == "a"
    assert rank_sum(B, A)["lower"] == "b"
    assert rank_sum(A, B)["p"] == pytest.approx(rank_sum(B, A)["p"])


@pytest.mark.parametrize("a, b", [(A, A), ([3.0] * 5, [3.0] * 5), ([0.0] * 4, [0.0] * 6), ([math.nan] * 3, [math.inf] * 3),
                                  ([], B), ([1.0], [1.0])])
def test_rank_sum_without_difference_is_p_one(a, b):
    r = rank_sum(a, b)
    assert r["p"] == 1.0 and r["lower"] is None


def test_rank_sum_nan_counts_as_worst():
    r = rank_sum([math.nan] * 5, [1.0, 2.0, 3.0, 4.0, 5.0])
    assert r["lower"] == "b" and r["p"] < 0.05


def test_holm_by_hand():
    # sorted 0.005, 0.01, 0.03, 0.04 -> x4, x3, x2, x1 = 0.02, 0.03, 0.06, 0.04 -> running max 0.02, 0.03, 0.06, 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.01, 0.02, 0.03, 0.04, 0.05]) == pytest.approx([0.05, 0.08, 0.09, 0.09, 0.09])
    assert holm([0.5, 0.6]) == [1.0, 1.0]  # capped
    assert holm([0.3]) == [0.3]
    assert holm([]) == []


def test_holm_against_r_multtest():
    """The R multtest values statsmodels tests its 'holm' against (statsmodels/stats/tests/test_multi.py)."""
    raw = [0.838541367553, 0.642193923795, 0.680845947633, 0.967833824309, 0.71626938238, 0.177096952723,
           5.23656777208e-05, 0.0202732688798, 0.00028140506198, 0.0149877310796]
    expected = sorted([5.2365677720800005e-04, 2.5326455578199999e-03, 1.1990184863680001e-01, 1.4191288215860001e-01]
                      + [1.0] * 6)
    assert sorted(holm(raw)) == pytest.approx(expected, rel=1e-12)
    raw3 = [0.001, 0.002, 0.003, 0.004, 0.005, 0.05, 0.06, 0.07, 0.08, 0.09]
    assert holm(raw3) == pytest.approx([0.01, 0.018, 0.024, 0.028, 0.03, 0.25, 0.25, 0.25, 0.25, 0.25])


def test_holm_is_monotone_in_the_raw_order():
    p = np.random.default_rng(3).random(30) ** 3
    adj = np.array(holm(p))
    order = np.argsort(p)
    assert np.all(np.diff(adj[order]) >= 0) and np.all(adj >= p) and np.all(adj <= 1)


def _runs(errors: dict, dim=10):
    return [{"algorithm": a, "function": f, "dim": dim, "repeat": i, "seed": i, "error": e}
            for (a, f), es in errors.items() for i, e in enumerate(es)]


def test_versus_reference_signs_counts_and_holm_family():
    low, high = [1.0, 1.1, 1.2, 1.3, 1.4], [9.0, 9.1, 9.2, 9.3, 9.4]
    errors = {("ref", "f1"): high, ("good", "f1"): low, ("bad", "f1"): high,
              ("ref", "f2"): high, ("good", "f2"): low, ("bad", "f2"): [v + 10 for v in high],
              ("ref", "f3"): low, ("good", "f3"): low, ("bad", "f3"): low}
    res = versus_reference(_runs(errors) + _runs(errors, dim=20), "ref", 0.05)
    assert set(res) == {10, 20} and set(res[10]) == {"good", "bad"}
    good, bad = res[10]["good"], res[10]["bad"]
    assert [good["functions"][f]["sign"] for f in ("f1", "f2", "f3")] == ["+", "+", "="]
    assert [bad["functions"][f]["sign"] for f in ("f1", "f2", "f3")] == ["=", "-", "="]
    assert good["counts"] == {"+": 2, "=": 1, "-": 0} and bad["counts"] == {"+": 0, "=": 2, "-": 1}
    raw = [good["functions"][f]["p"] for f in ("f1", "f2", "f3")]
    assert [good["functions"][f]["p_holm"] for f in ("f1", "f2", "f3")] == pytest.approx(holm(raw))
    assert [good["functions"][f]["a12"] for f in ("f1", "f2", "f3")] == [1.0, 1.0, 0.5]
    assert [bad["functions"][f]["magnitude"] for f in ("f1", "f2", "f3")] == ["negligible", "large", "negligible"]
    assert bad["functions"]["f2"]["a12"] == 0.0


def test_versus_reference_without_reference_runs_leaves_the_function_out():
    res = versus_reference(_runs({("ref", "f1"): [1, 2, 3], ("x", "f1"): [4, 5, 6], ("x", "f2"): [1, 2, 3]}), "ref")
    assert res[10]["x"]["functions"]["f2"] == {"p": None, "p_holm": None, "sign": None, "method": None, "a12": None,
                                               "magnitude": None}
    assert sum(res[10]["x"]["counts"].values()) == 1


def test_friedman_is_scipys_and_ranks_lower_error_first():
    m = np.array([[1.0, 2.0, 3.0], [2.0, 1.0, 3.0], [1.0, 3.0, 2.0], [1.0, 2.0, 2.0]])
    res = friedman(m)
    ref = stats.friedmanchisquare(*m.T)
    assert res["test"] == "friedman"
    assert res["statistic"] == pytest.approx(ref.statistic) and res["p"] == pytest.approx(ref.pvalue)
    assert res["ranks"] == pytest.approx([1.25, 2.125, 2.625])  # the tie in the last row is averaged (2.5 each)
    assert res["cd"] == pytest.approx(critical_difference(3, 4))


def test_friedman_complete_ties_one_function_and_nan():
    tie = friedman(np.ones((5, 4)))
    assert (tie["p"], tie["statistic"], tie["test"]) == (1.0, 0.0, "none") and tie["ranks"] == [2.5] * 4
    one = friedman(np.array([[1.0, 2.0, 3.0]]))
    assert (one["p"], one["test"]) == (1.0, "none") and one["ranks"] == [1, 2, 3]
    nan = friedman(np.array([[math.nan, 1.0, 2.0], [math.nan, 2.0, 1.0]]))
    assert nan["ranks"][0] == 3.0 and math.isfinite(nan["p"])
    empty = friedman(np.zeros((0, 3)))
    assert empty["p"] == 1.0 and empty["ranks"] == [2.0] * 3 and empty["cd"] == 0.0


def test_friedman_two_algorithms_is_the_sign_test():
    m = np.array([[1.0, 2.0]] * 7 + [[2.0, 1.0]] + [[3.0, 3.0]])  # 7 wins, 1 loss, 1 tie
    res = friedman(m)
    assert res["test"] == "sign" and res["statistic"] == 7 and res["untied"] == 8
    assert res["p"] == pytest.approx(stats.binomtest(7, 8).pvalue)
    assert res["ranks"] == pytest.approx([(7 + 2 + 1.5) / 9, (14 + 1 + 1.5) / 9])


# Demsar (2006), Table 5(a): q_0.05 for k = 2..10
DEMSAR_Q05 = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]


@pytest.mark.parametrize("k, q", list(zip(range(2, 11), DEMSAR_Q05)))
def test_critical_difference_constants(k, q):
    n = 7
    assert critical_difference(k, n) / math.sqrt(k * (k + 1) / (6 * n)) == pytest.approx(q, abs=1e-3)


def test_critical_difference_demsar_example_and_degenerate():
    assert critical_difference(4, 14) == pytest.approx(1.25, abs=5e-3)  # Demsar's worked example (4 classifiers, 14 sets)
    assert critical_difference(1, 10) == 0.0 and critical_difference(3, 0) == 0.0


def test_cliques_are_maximal_runs_below_cd():
    assert cliques([1.0, 1.5, 2.0, 3.5, 3.8], 1.1) == [(0, 2), (3, 4)]
    assert cliques([1.0, 1.5, 2.0, 3.5, 3.8], 1.0) == [(0, 1), (1, 2), (3, 4)]
    assert cliques([1.0, 1.5, 2.2, 2.4], 1.0) == [(0, 1), (1, 3)]
    assert cliques([1.0, 2.0], 1.0) == []  # a difference of exactly CD is significant
    assert cliques([1.0, 1.0], 0.0) == []


def test_smallest_p_is_that_of_perfectly_separated_samples_each_of_one_value():
    from heuriscale.studies.statistics import smallest_p

    # up to 10 a side the test is exact: 2 / C(2n, n), tied or not (5 vs 5: 2/252; the normal
    # approximation gave tied samples 0.0040); above it, tied samples go lower than untied ones
    # (the normal approximation's tie correction shrinks its variance)
    assert smallest_p(5) == pytest.approx(2 / 252) and smallest_p(10) == pytest.approx(2 / 184756)
    tied = stats.mannwhitneyu([0] * 12, [1] * 12, alternative="two-sided", method="asymptotic").pvalue
    assert smallest_p(12) == pytest.approx(tied) and tied < stats.mannwhitneyu(range(12), range(12, 24)).pvalue
    for n in (3, 6, 9, 12, 30):  # no data with n runs per side gives a smaller p, tied or not
        rng = np.random.default_rng(n)
        samples = [(rng.normal(size=n), rng.normal(size=n) + 5) for _ in range(5)]
        samples += [(np.zeros(n), rng.normal(size=n) + 5), (np.zeros(n), np.r_[np.ones(n - 1), 2.0]),
                    (np.r_[np.zeros(n - 1), 1.0], np.full(n, 3.0))]
        assert all(rank_sum(a, b)["p"] >= smallest_p(n) * (1 - 1e-12) for a, b in samples)


def test_unreachable_significance_5_runs_x_12_functions_warns_30_runs_does_not():
    from heuriscale.studies.compare import plan, significance_warnings
    from heuriscale.studies.statistics import attainable, smallest_p

    # exact p: 5 runs a side cannot go below 2/252, x 12 functions = 0.095 > 0.05 (the normal
    # approximation's 0.0040 x 12 = 0.048 said it could); 6 runs: 2/924 x 12 = 0.026
    five = attainable(5, 12, 0.05)
    assert not five["possible"] and five["min_p_holm"] == pytest.approx(12 * smallest_p(5)) == pytest.approx(24 / 252)
    assert five["runs_needed"] == 6 and attainable(6, 12, 0.05)["possible"]
    assert attainable(30, 12, 0.05)["possible"]
    warned = significance_warnings(plan("pso,apo", "cec2022", [10], runs=5, device="cpu"))
    assert len(warned) == 1 and "0.0952" in warned[0] and "D = 10" in warned[0]
    assert "at least 6 runs" in warned[0]
    assert significance_warnings(plan("pso,apo", "cec2022", [10, 20], runs=30, device="cpu")) == []
    assert significance_warnings(plan("pso", "cec2022", [10], runs=4, device="cpu")) == []  # nothing is tested
    # a stricter alpha makes 30 runs x 12 functions fine still, 6 runs not
    assert significance_warnings(plan("pso,apo", "cec2022", [10], runs=6, alpha=0.01, device="cpu"))
