"""The campaign report from a synthetic campaign: every file, bold on the true best, no NaN in a
table, deterministic md/tex/csv, a self-contained html."""

import csv
import math
import re
from pathlib import Path

import numpy as np
import pytest

from heuriscale.studies.campaign_report import write_report

ALGOS = ("PSO", "APO", "FEP")
FRACTIONS = [0.01, 0.1, 0.5, 1.0]


def campaign(dims=(10, 20), functions=3, repeats=5):
    """3 algorithms x 3 functions x 2 dims x 5 runs. PSO is best on f1 and f3, APO on f2; FEP (the
    reference) is worst everywhere; on f3 at D = 20 PSO and APO both reach 0."""
    rng = np.random.default_rng(7)
    scale = {"PSO": [1, 5, 1], "APO": [3, 1, 2], "FEP": [10, 10, 10]}
    runs = []
    for d in dims:
        for f in range(functions):
            for a in ALGOS:
                for rep in range(repeats):
                    final = 0.0 if (d == 20 and f == 2 and a != "FEP") else scale[a][f] * 10.0 ** f * (1 + 0.05 * rng.random())
                    runs.append({"algorithm": a, "function": f"cec2022-f{f + 1}", "dim": d, "repeat": rep, "seed": rep,
                                 "error": final, "curve": [final + 1e3 * (1 - x) for x in FRACTIONS], "evals": 1000 * d,
                                 "wall_s": 0.25 * (rep + 1)})
    meta = {"suite": "cec2022", "fractions": FRACTIONS, "budgets": {d: 1000 * d for d in dims}, "reference": "FEP",
            "alpha": 0.05, "device": "cpu (test)", "versions": {"heuriscale": "test"}, "seeds": "0..4",
            "wall_s": 12.5, "command": "heuriscale compare pso apo fep", "parameters": {a: {"pop_size": 20} for a in ALGOS}}
    return runs, meta


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    runs, meta = campaign()
    out = tmp_path_factory.mktemp("report")
    return runs, meta, out, write_report(runs, meta, out)


def _table(md: str, caption_start: str) -> list[list[str]]:
    block = md.split(f"**{caption_start}", 1)[1].split("\n\n", 2)[1]
    return [[c.strip() for c in line.strip("|").split("|")] for line in block.splitlines()]


def test_every_file_is_written(report):
    _, _, out, written = report
    for name in ("runs.csv", "comparisons.csv", "report.md", "report.html", "tables.tex", "cd_D10.png", "cd_D20.png",
                 "convergence_D10.png", "convergence_D20.png"):
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    assert written["md"] == out / "report.md" and written["cd_D10"] == out / "cd_D10.png"


def test_runs_csv_has_every_run_and_the_curve_by_fraction(report):
    runs, _, out, _ = report
    rows = list(csv.DictReader((out / "runs.csv").open()))
    assert len(rows) == len(runs) == 90
    assert [k for k in rows[0] if k.startswith("curve@")] == ["curve@0.01", "curve@0.1", "curve@0.5", "curve@1"]


def test_bold_lands_on_the_true_best(report):
    _, _, out, _ = report
    md = (out / "report.md").read_text()
    d10 = md.split("## D = 10", 1)[1].split("## D = 20", 1)[0]
    header, _, *body = _table(d10, "Mean ±")
    bold = {row[0]: [header[j] for j, c in enumerate(row) if c.startswith("**")] for row in body}
    assert bold == {"cec2022-f1": ["PSO"], "cec2022-f2": ["APO"], "cec2022-f3": ["PSO"]}
    d20 = md.split("## D = 20", 1)[1]
    header, _, *body = _table(d20, "Mean ±")
    assert [header[j] for j, c in enumerate(body[2]) if c.startswith("**")] == ["APO", "PSO"]  # tied at 0: both bold
    tex = (out / "tables.tex").read_text()
    assert tex.count("\\textbf{") == 7 and "\\toprule" in tex and "\\bottomrule" in tex


def test_wilcoxon_and_friedman_sections(report):
    _, _, out, _ = report
    md = (out / "report.md").read_text()
    d10 = md.split("## D = 10", 1)[1].split("## D = 20", 1)[0]
    header, _, *body = _table(d10, "Wilcoxon")
    assert header == ["function", "APO vs FEP", "PSO vs FEP"]
    assert body[-1] == ["+/=/-", "3/0/0", "3/0/0"] and all(c.startswith("+ (") for row in body[:-1] for c in row[1:])
    assert all(c.endswith("A12 = 1.00 large") for row in body[:-1] for c in row[1:])  # every run beats FEP's
    header, _, *ranks = _table(d10, "Mean ranks")
    assert ranks[-1][0] == "FEP" and ranks[-1][1] == "3.00"
    assert "Friedman test over N = 3 functions" in d10 and "CD = 1.91" in d10


def test_comparisons_csv_has_p_holm_sign_and_a12_of_every_pair(report):
    _, _, out, _ = report
    rows = list(csv.DictReader((out / "comparisons.csv").open()))
    assert len(rows) == 2 * 3 * 2  # 2 dims x 3 functions x 2 algorithms against FEP
    assert list(rows[0]) == ["dim", "function", "algorithm", "reference", "p", "method", "p_holm", "sign", "a12",
                             "magnitude"]
    f3 = next(r for r in rows if (r["dim"], r["function"], r["algorithm"]) == ("20", "cec2022-f3", "PSO"))
    assert (f3["reference"], f3["method"], f3["sign"]) == ("FEP", "exact", "+")
    assert (f3["a12"], f3["magnitude"]) == ("1.0", "large")
    assert float(f3["p"]) == pytest.approx(2 / 252) and float(f3["p_holm"]) == pytest.approx(3 * 2 / 252)
    tex = (out / "tables.tex").read_text()
    assert "A12 = 1.00 large" in tex and "A12" in (out / "report.html").read_text()


def test_a12_in_the_table_points_to_the_better_side(tmp_path, fast_figures):
    """A12 is the algorithm's chance to beat the reference: below 0.5 where the algorithm is worse."""
    runs, meta = campaign(dims=(10,), functions=1, repeats=6)
    meta = {**meta, "reference": "PSO"}
    md = write_report(runs, meta, tmp_path, formats=("md",))["md"].read_text()
    header, _, *body = _table(md, "Wilcoxon")
    assert header == ["function", "APO vs PSO", "FEP vs PSO"]
    assert body[0][1].startswith("- (") and body[0][1].endswith("A12 = 0.00 large")
    assert "A12: the probability that a run of the algorithm ends with a lower error than a run of PSO" in md


def test_rewrite_is_byte_identical_and_independent_of_run_order(report, tmp_path, fast_figures):
    runs, meta, out, _ = report
    again = write_report(list(reversed(runs)), meta, tmp_path, formats=("md", "tex", "csv"))
    for key, name in (("md", "report.md"), ("tex", "tables.tex"), ("csv", "runs.csv"),
                      ("comparisons", "comparisons.csv")):
        assert again[key].read_bytes() == (out / name).read_bytes(), name


def test_html_is_self_contained(report):
    _, _, out, _ = report
    page = (out / "report.html").read_text()
    assert page.count('src="data:image/png;base64,') == 4
    assert not re.search(r"https?://|<link|<script|url\(|href=", page)
    assert all(src.startswith("data:") for src in re.findall(r'src="([^"]*)"', page))


def test_failed_runs_are_shown_never_nan(tmp_path):
    runs, meta = campaign(dims=(10,))
    for r in runs:
        if r["function"] == "cec2022-f1" and r["algorithm"] == "PSO" and r["repeat"] < 2:
            r["error"] = math.nan
            r["curve"] = [math.nan] * len(FRACTIONS)
        if r["function"] == "cec2022-f2" and r["algorithm"] == "APO":
            r["error"] = math.inf
    runs = [r for r in runs if not (r["function"] == "cec2022-f3" and r["algorithm"] == "APO")]  # a missing cell
    written = write_report(runs, meta, tmp_path)
    md, tex = written["md"].read_text(), written["tex"].read_text()
    for text in (md, tex):
        assert not re.search(r"\bnan\b(?! runs)", text, re.IGNORECASE) and "NaN runs: 2" in text and "NaN runs: 5" in text
    header, _, *body = _table(md, "Mean ±")
    assert not body[0][header.index("PSO")].startswith("**")  # a cell with failed runs is never bold
    assert body[2][header.index("APO")] == "—"
    assert "1 function(s) left out" in md


@pytest.mark.parametrize("algos, functions", [(("FEP",), 3), (("PSO", "FEP"), 3), (ALGOS, 1)])
def test_degenerate_campaigns_report_without_nan(tmp_path, algos, functions, fast_figures):
    runs, meta = campaign(dims=(10,), functions=functions)
    runs = [r for r in runs if r["algorithm"] in algos]
    written = write_report(runs, meta, tmp_path, formats=("md", "tex"))
    md = written["md"].read_text()
    assert not re.search(r"\bnan\b(?! runs)", md, re.IGNORECASE)
    if len(algos) == 1:
        assert "No algorithm other than the reference" in md and "cd_D10" not in written
    elif len(algos) == 2:
        assert "sign test over N = 3 functions" in md and "PSO lower on 3 of 3" in md
    else:
        assert "No Friedman test" in md and (tmp_path / "cd_D10.png").is_file()


def test_one_error_convention_in_every_format_no_negative_no_noise(tmp_path, fast_figures):
    """Below 1e-8 is 0 (the CEC rule) with a std of 0, whatever the suite; float rounding a hair
    below f* never prints a negative error; md, html, LaTeX and CSV agree."""
    runs, meta = campaign(dims=(10,), functions=2)
    noise = [5e-9, -3e-13, 2.67e-14, 1e-8 - 1e-20, -0.0]
    for r in runs:
        if r["function"] == "cec2022-f1" and r["algorithm"] in ("PSO", "APO"):
            r["error"] = noise[r["repeat"]]
            r["curve"] = [r["error"] + 1e3 * (1 - x) for x in FRACTIONS[:-1]] + [r["error"]]
    meta = {**meta, "suite": "classic"}
    written = write_report(runs, meta, tmp_path, formats=("md", "html", "tex", "csv"))
    md, page, tex = (written[k].read_text() for k in ("md", "html", "tex"))
    for text in (md, page):
        assert not re.search(r"(?<![\w.])-\d", text.replace("+/=/-", "")), "a negative number is printed"
        assert "e-14" not in text and "e-09" not in text and "e-13" not in text
    assert not re.search(r"\$-\d", tex) and "10^{-14}" not in tex and "10^{-9}" not in tex
    header, _, *body = _table(md, "Mean ±")
    assert body[0][header.index("PSO")].strip("*") == "0 ± 0" and body[0][header.index("APO")].strip("*") == "0 ± 0"
    rows = list(csv.DictReader(written["csv"].open()))
    errors = [float(r["error"]) for r in rows if r["function"] == "cec2022-f1" and r["algorithm"] in ("PSO", "APO")]
    assert errors == [0.0] * 10
    assert all(float(v) >= 0 for r in rows for k, v in r.items() if k == "error" or k.startswith("curve@"))


def test_report_lists_functions_in_natural_order(tmp_path, fast_figures):
    runs, meta = campaign(dims=(10,), functions=1, repeats=2)
    runs = [{**r, "function": f"cec2022-f{k}"} for k in (10, 2, 11, 1, 3, 4, 5, 6, 7, 8, 9) for r in runs]
    md = write_report(runs, meta, tmp_path, formats=("md",))["md"].read_text()
    header, _, *body = _table(md, "Mean ±")
    assert [row[0] for row in body] == [f"cec2022-f{k}" for k in range(1, 12)]


def test_report_says_when_significance_cannot_be_reached(tmp_path, fast_figures):
    runs, meta = campaign(dims=(10,), functions=3, repeats=3)  # 3 vs 3 runs: smallest p 0.1, x 3 functions
    md = write_report(runs, meta, tmp_path, formats=("md",))["md"].read_text()
    assert "Warning: With 3 runs per algorithm and 3 functions at D = 10" in md and "no function can come out" in md
    header, _, *body = _table(md, "Wilcoxon")
    assert body[-1][1:] == ["0/3/0", "0/3/0"]  # every cell '=' although FEP is worst in every run
    runs, meta = campaign(dims=(10,), functions=3, repeats=5)
    md = write_report(runs, meta, tmp_path, formats=("md",))["md"].read_text()
    assert "Warning:" not in md and "a difference can show" in md


def test_rebuild_from_runs_csv_and_campaign_json_reads_old_floor_as_zero(tmp_path, fast_figures):
    """A committed campaign (runs.csv + campaign.json, no store) written when CEC 2022 recorded
    errors below 1e-8 as 1e-8 is rebuilt with the one convention: those read 0."""
    import json

    from heuriscale.studies.compare import rebuild_report

    runs, meta = campaign(dims=(10,), functions=2)
    for r in runs:
        if r["function"] == "cec2022-f1" and r["algorithm"] == "PSO":
            r["error"], r["curve"][-1] = 1e-8, 1e-8  # as the old rule recorded a run below 1e-8
    write_report(runs, meta, tmp_path, formats=("csv",))
    doc = {"meta": meta, "suite": {"name": "cec2022", "errors_below": 1e-8, "recorded_as": 1e-8}}
    (tmp_path / "campaign.json").write_text(json.dumps(doc))
    written = rebuild_report(tmp_path, formats=("md", "csv"))
    header, _, *body = _table(written["md"].read_text(), "Mean ±")
    assert body[0][header.index("PSO")].strip("*") == "0 ± 0"
    assert json.loads(written["json"].read_text())["suite"]["recorded_as"] == 0.0
    again = rebuild_report(tmp_path, formats=("md", "csv"))  # rebuilding a rebuilt campaign changes nothing
    assert again["md"].read_text() == written["md"].read_text()
