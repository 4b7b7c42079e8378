"""`compare --suite zdt|dtlz`: the suites, the refusals, and a report that tests hypervolume
(higher is better) and IGD (lower is better) each in its own direction."""

from __future__ import annotations

import csv

import numpy as np
import pytest

import heuriscale as hs
from heuriscale.studies.campaign_report import write_report
from heuriscale.studies.compare import INDICATORS, plan
from heuriscale.engine.fronts import reference_point
from heuriscale.studies.suites import get_suite


def test_suites_hold_pymoo_dimensions_budgets_and_reference_points():
    zdt, dtlz = get_suite("zdt"), get_suite("dtlz")
    assert zdt.functions == ("zdt1", "zdt2", "zdt3", "zdt4", "zdt6") and zdt.multi_objective and zdt.runs == 31
    assert {f: zdt.dims[f] for f in zdt.functions} == {"zdt1": (30,), "zdt2": (30,), "zdt3": (30,), "zdt4": (10,),
                                                      "zdt6": (10,)}
    assert zdt.budget("zdt1", 30) == 25_000 and dtlz.budget("dtlz2", 12) == 30_000
    assert dtlz.functions == tuple(f"dtlz{k}" for k in range(1, 8)) and dtlz.dims["dtlz7"] == (22,)
    assert reference_point(hs.get_problem("zdt1"), None).tolist() == pytest.approx([1.1, 1.1])
    assert reference_point(hs.get_problem("dtlz2"), None).tolist() == pytest.approx([1.1, 1.1, 1.1])
    assert reference_point(hs.get_problem("dtlz1"), None).tolist() == pytest.approx([0.55, 0.55, 0.55])


@pytest.mark.parametrize("algorithms, suite, message", [
    (["pso"], "zdt", "has problems with several objectives; algorithm 'pso' optimises one"),
    (["nsga2"], "cec2022", "algorithm 'nsga2' is for several"),
])
def test_a_campaign_refuses_algorithms_of_the_other_kind(algorithms, suite, message, tmp_path):
    with pytest.raises(ValueError, match=message) as info:
        plan(algorithms, suite, out=tmp_path, device="cpu")
    assert "\n" not in str(info.value)


def test_exports_are_refused_for_several_objectives(tmp_path):
    from heuriscale.studies.compare import check_exports

    campaign = plan(["nsga2", "moead"], "zdt", runs=3, out=tmp_path, device="cpu")
    assert campaign.dtype == "float64" and {c.iters for _, c in campaign.configs if c.algorithm == "nsga2"} == {249}
    with pytest.raises(ValueError, match="single-objective formats"):
        check_exports(campaign, "ioh")


def _runs(rng) -> list[dict]:
    """Two algorithms on zdt1 whose fronts differ clearly: 'good' near the front, 'far' shifted up."""
    truth = hs.get_problem("zdt1").pareto_front().numpy()
    ref = np.array([1.1, 1.1])
    runs = []
    for algo, shift in (("far", 0.3), ("good", 0.0)):
        for repeat in range(10):
            front = truth[rng.choice(len(truth), 30, replace=False)] + shift + rng.uniform(0, 0.02, (30, 2))
            runs.append({"algorithm": algo, "function": "zdt1", "dim": 30, "repeat": repeat, "seed": repeat,
                         "known_optimum": False, "error": float("nan"), "front": front, "curve": [],
                         "hv": hs.metrics.hypervolume(front, ref), "igd": hs.metrics.igd(front, truth),
                         "evals": 25_000, "wall_s": 1.0})
    return runs


def test_report_tests_hypervolume_upwards_and_igd_downwards(tmp_path):
    runs = _runs(np.random.default_rng(0))
    meta = {"suite": "zdt", "reference": "far", "alpha": 0.05, "fractions": [1.0], "budgets": {30: 25_000},
            "indicators": INDICATORS}
    truths = {"zdt1": hs.get_problem("zdt1").pareto_front().numpy()}
    written = write_report(runs, meta, tmp_path, truths=truths)
    md = written["md"].read_text()
    # 'good' has the higher hypervolume and the lower IGD than the reference 'far': '+' in both tables
    hv_section, igd_section = md.split("### Final IGD")
    assert "### Final hypervolume, D = 30" in hv_section
    for section in (hv_section, igd_section):
        table = section.split("Wilcoxon rank-sum against far")[1]
        assert "| zdt1 | + (" in table and "| +/=/- | 1/0/0 |" in table
    assert "significantly higher hypervolume than far" in hv_section
    assert "significantly lower IGD than far" in igd_section
    good_hv = np.mean([r["hv"] for r in runs if r["algorithm"] == "good"])
    assert f"**{good_hv:.2e}" in hv_section  # the printed value is the hypervolume itself, best in bold
    assert "-" + f"{good_hv:.2e}" not in md
    ranks = hv_section.split("Mean ranks over functions (hypervolume)")[1].split("|")
    assert ranks.index(" good ") < ranks.index(" far ")  # rank 1 = the highest hypervolume
    assert written["fronts"].is_file() and "![" in md.split("## Final fronts")[1]
    with written["csv"].open() as fh:
        rows = list(csv.DictReader(fh))
    assert "error" not in rows[0] and float(rows[0]["hv"]) == pytest.approx(runs[0]["hv"])



def test_a_rebuilt_report_keeps_the_fronts_figure_runs_csv_cannot_hold(tmp_path):
    """rebuild_report reads runs.csv, which has each run's indicators but not its front: the
    figure drawn when the campaign ran stays in the report, which comes out the same."""
    import json

    from heuriscale.studies.compare import rebuild_report

    meta = {"suite": "zdt", "reference": "far", "alpha": 0.05, "fractions": [1.0], "budgets": {30: 25_000},
            "indicators": INDICATORS}
    truths = {"zdt1": hs.get_problem("zdt1").pareto_front().numpy()}
    first = write_report(_runs(np.random.default_rng(0)), meta, tmp_path, formats=("md", "csv"), truths=truths)
    (tmp_path / "campaign.json").write_text(json.dumps({"meta": meta}))
    rebuilt = rebuild_report(tmp_path, formats=("md", "csv"))
    assert "## Final fronts" in first["md"].read_text()
    assert rebuilt["md"].read_text() == first["md"].read_text() and rebuilt["fronts"] == first["fronts"]
    (tmp_path / "fronts.png").unlink()  # without the figure, no section points at a missing file
    assert "## Final fronts" not in rebuild_report(tmp_path, formats=("md",))["md"].read_text()

def test_fronts_figure_draws_three_objectives(tmp_path):
    from heuriscale.viz.fronts import front_panels

    truth = hs.get_problem("dtlz2").pareto_front().numpy()
    path = front_panels({"dtlz2": {"nsga2": truth[::5] * 1.05}}, {"dtlz2": truth}, tmp_path / "f.png", "t")
    assert path.stat().st_size > 10_000
