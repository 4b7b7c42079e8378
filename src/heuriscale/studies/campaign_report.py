"""The report of a finished benchmarking campaign (`heuriscale compare`): runs.csv,
comparisons.csv (every pairwise test: p, Holm-adjusted p, sign, A12), report.md, a
self-contained report.html, booktabs tables.tex and the figures, from a list of runs.

The tables are built once, as rows of cells, and rendered three ways (Markdown, HTML, LaTeX), so
the formats cannot disagree. A cell is a tuple of parts concatenated: a float (shown in scientific
notation, 3 significant digits), None (no data: '—') or text. Output is deterministic: runs are
sorted before anything is computed and nothing but `meta` is stamped in, so the same input gives
byte-identical md, tex and csv. A failed run (error NaN or inf) is never averaged in silently:
its cell says 'NaN runs: k', and it ranks worst (see `statistics`).

A multi-objective campaign (`meta["indicators"]`) scores each run by several indicators
instead of one error: every table, test and rank is written once per indicator, in its own
direction (a higher hypervolume is better: the statistics run on its negation, the tables
print the values), and a figure draws each algorithm's final front of its median run against
the true front.
"""

from __future__ import annotations

import base64
import csv
import dataclasses
import html
import json
import math
from pathlib import Path

import numpy as np

from .statistics import (ERROR_FLOOR, EXACT_RUNS, friedman, natural_key, reported_error, significance_sentence,
                         summary, versus_reference)

FORMATS = ("md", "html", "tex", "csv")
__all__ = ["write_report", "rebuild_report", "FORMATS", "ERROR"]

#: What a single-objective campaign reports: the run's "error", lower is better. A
#: multi-objective campaign lists its own in meta["indicators"], e.g. {"key": "hv", "label":
#: "final hypervolume", "short": "hypervolume", "higher": True}: the run's value under "key".
ERROR = {"key": "error", "label": "final error f - f*", "short": "error", "higher": False}


def write_report(runs: list[dict], meta: dict, out_dir, formats=FORMATS, truths: dict | None = None) -> dict[str, Path]:
    """Write the campaign report under `out_dir`; returns {"md" | "html" | "tex" | "csv" | "comparisons" |
    figure stem: path} ("csv": runs.csv, one row per run; "comparisons": comparisons.csv, one row
    per algorithm, function and dimension tested against the reference; both with "csv"; a
    multi-objective campaign writes comparisons_<indicator>.csv, one per indicator).

    Figures (`cd_D10.png`, `convergence_D10.png`, ...) are drawn when md or html is asked for.
    `truths`: {function: true Pareto front (n, M)} of a multi-objective campaign, whose runs
    carry their final non-dominated set under "front": the fronts figure draws them."""
    unknown = set(formats) - set(FORMATS)
    if unknown:
        raise ValueError(f"unknown report formats {sorted(unknown)}; choose from {FORMATS}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    # one error convention for every format: below 1e-8 is 0, never negative (statistics.reported_error);
    # a run whose f* is unknown ("known_optimum": False) reports its values as they are
    runs = [r if not r.get("known_optimum", True) else
            {**r, "error": reported_error(r["error"]), "curve": [reported_error(v) for v in r.get("curve") or []]}
            for r in runs]
    runs = sorted(runs, key=lambda r: (r["dim"], natural_key(r["function"]), r["algorithm"], r["repeat"], r["seed"]))
    ref, alpha = meta["reference"], float(meta.get("alpha", 0.05))
    algorithms = [ref] + sorted({r["algorithm"] for r in runs} - {ref})
    indicators = meta.get("indicators") or [ERROR]
    written: dict[str, Path] = {}
    if "csv" in formats:
        written["csv"] = _write_csv(out / "runs.csv", runs, meta.get("fractions", []),
                                    [i["key"] for i in indicators if i is not ERROR])
    tests: dict[str, dict] = {}
    blocks = _header(runs, meta, algorithms)
    draw = "md" in formats or "html" in formats
    for dim in sorted({r["dim"] for r in runs}):
        if indicators != [ERROR]:
            blocks.append(("h2", f"D = {dim}"))
        for indicator in indicators:
            scored = [_scored(r, indicator) for r in runs if r["dim"] == dim]
            wilcoxon = versus_reference(scored, ref, alpha)
            tests.setdefault(indicator["key"], {}).update(wilcoxon)
            blocks += _dimension(dim, scored, meta, algorithms, wilcoxon.get(dim, {}), alpha,
                                 out if draw else None, written, indicator)
    if "csv" in formats:
        for indicator in indicators:
            name = "comparisons" if indicator is ERROR else f"comparisons_{indicator['key']}"
            written[name] = _write_comparisons(out / f"{name}.csv", tests.get(indicator["key"], {}), ref)
    if truths is not None and draw:
        blocks += _fronts_figure(runs, truths, algorithms, meta, out, written)
    elif draw and indicators != [ERROR] and (out / "fronts.png").is_file():
        # a report rebuilt from runs.csv, which holds no fronts: the figure drawn when the campaign ran stays
        blocks += [("h2", "Final fronts"), ("figure", out / "fronts.png", FRONTS_CAPTION)]
        written["fronts"] = out / "fronts.png"
    if "md" in formats:
        written["md"] = _write(out / "report.md", _markdown(blocks))
    if "html" in formats:
        written["html"] = _write(out / "report.html", _html(blocks, meta))
    if "tex" in formats:
        written["tex"] = _write(out / "tables.tex", _latex(blocks))
    return written


# -- content ---------------------------------------------------------------------------------------
# blocks: ("h1" | "h2" | "h3" | "p" | "code", text), ("list", [text]), ("table", caption, label, header, rows, bold),
#         ("figure", path, caption); bold is a set of (row, column) of body cells
def _budget(meta: dict, dim) -> int | None:
    budgets = meta.get("budgets") or {}
    return budgets.get(dim, budgets.get(str(dim)))


def _header(runs, meta, algorithms) -> list:
    dims = sorted({r["dim"] for r in runs})
    per_cell = sorted({n for n in _count_cells(runs).values()})
    cells = "—" if not per_cell else f"{per_cell[0]}" if len(per_cell) == 1 else f"{per_cell[0]} to {per_cell[-1]}"
    budgets = "; ".join(f"D = {d}: {_budget(meta, d):,} evaluations" if _budget(meta, d) else f"D = {d}: —" for d in dims)
    versions = ", ".join(f"{k} {v}" for k, v in sorted((meta.get("versions") or {}).items(),
                                                       key=lambda kv: (kv[0] != "heuriscale", kv[0]))) or "—"
    wall = meta.get("wall_s")
    params = meta.get("parameters") or {}
    return [
        ("h1", f"Benchmark campaign: {meta.get('suite', '—')}"),
        ("list", [f"Suite: {meta.get('suite', '—')}",
                  f"Algorithms ({len(algorithms)}): {', '.join(algorithms)}; reference: {meta['reference']}",
                  f"Dimensions: {', '.join(map(str, dims))}",
                  f"Runs: {len(runs)} in all, {cells} per algorithm, function and dimension",
                  f"Budgets: {budgets}",
                  f"Recording points (fractions of the budget): {', '.join(f'{x:g}' for x in meta.get('fractions', []))}",
                  f"Device: {meta.get('device', '—')}",
                  f"Versions: {versions}",
                  f"Seeds: {meta.get('seeds', '—')}",
                  f"Wall time: {wall:.1f} s" if isinstance(wall, (int, float)) else "Wall time: —"]),
        ("p", "Command:"), ("code", str(meta.get("command", "—"))),
        ("table", "Algorithm parameters", "tab:parameters", ["algorithm", "parameters"],
         [[(a + (" (reference)" if a == meta["reference"] else ""),),
           (", ".join(f"{k}={v}" for k, v in _in_field_order(a, params.get(a, {}))) or "defaults",)]
          for a in algorithms], set()),
    ]


def _in_field_order(algorithm: str, params: dict) -> list:
    """An algorithm's parameters in its class's field order, others after them by name: the
    same lines whether they come from the run or from campaign.json (stored with sorted keys)."""
    from ..algorithms import algorithm_class

    try:
        rank = {f.name: i for i, f in enumerate(dataclasses.fields(algorithm_class(algorithm)))}
    except ValueError:  # an algorithm this version does not know (a campaign.json from elsewhere)
        rank = {}
    return sorted(params.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0]))


def _count_cells(runs) -> dict:
    counts: dict = {}
    for r in runs:
        key = (r["dim"], r["function"], r["algorithm"])
        counts[key] = counts.get(key, 0) + 1
    return counts


def _scored(run: dict, indicator: dict) -> dict:
    """The run with its "error" the indicator's value, negated where higher is better, so that
    every statistic (lower is better) reads it in the right direction."""
    if indicator is ERROR:
        return run
    value = float(run[indicator["key"]])
    return {**run, "error": -value if indicator["higher"] else value}


def _shown(s: dict | None, indicator: dict) -> dict | None:
    """A summary as the tables print it: the values themselves (negated back where higher is better)."""
    if s is None or not indicator["higher"]:
        return s
    flip = {k: (None if s[k] is None else -s[k]) for k in ("mean", "best", "median", "worst")}
    return {**s, **flip}


def _ranked_mean(s: dict | None) -> float:
    """What ranks and bold compare: the mean, +inf once a run failed, missing data +inf too."""
    if s is None or s["failed"] or s["mean"] is None:
        return math.inf
    return s["mean"]


def _dimension(dim, runs, meta, algorithms, wilcoxon, alpha, folder, written, indicator=ERROR) -> list:
    functions = sorted({r["function"] for r in runs}, key=natural_key)
    algos = [a for a in algorithms if any(r["algorithm"] == a for r in runs)]
    errors: dict = {}
    for r in runs:
        errors.setdefault((r["function"], r["algorithm"]), []).append(r["error"])
    stats = {key: summary(v) for key, v in errors.items()}
    shown_stats = {key: _shown(s, indicator) for key, s in stats.items()}
    single = indicator is ERROR
    label, short, tag = indicator["label"], indicator["short"], "" if single else f"-{indicator['key']}"
    blocks = [("h2", f"D = {dim}")] if single else [("h3", f"{label[0].upper()}{label[1:]}, D = {dim}")]

    rows, bold = [], set()
    for i, f in enumerate(functions):
        means = [_ranked_mean(stats.get((f, a))) for a in algos]
        shown = [float(f"{m:.2e}") if math.isfinite(m) else m for m in means]  # bold every mean tied as printed
        best = min(shown)
        bold |= {(i, j + 1) for j, m in enumerate(shown) if m == best and math.isfinite(best)}
        rows.append([(f,)] + [_mean_cell(shown_stats.get((f, a))) for a in algos])
    blocks.append(("table", f"Mean ± sample std (ddof = 1) of the {label}, D = {dim}, over the runs "
                   "that did not fail; best mean per function in bold (ties as printed all bold; a cell with NaN runs "
                   "ranks last and is never bold)", f"tab:mean-D{dim}{tag}",
                   ["function"] + algos, rows, bold))
    rows = [[(f,)] + [_spread_cell(shown_stats.get((f, a))) for a in algos] for f in functions]
    worst = "inf" if not indicator["higher"] else "-inf"
    blocks.append(("table", f"Best / median / worst {'final error' if single else short}, D = {dim} "
                   f"(a failed run counts as {worst})", f"tab:spread-D{dim}{tag}", ["function"] + algos, rows, set()))

    others = [a for a in algos if a in wilcoxon]
    ref = meta["reference"]
    what = "" if single else f" ({short})"
    if others:
        rows = [[(f,)] + [_sign_cell(wilcoxon[a]["functions"].get(f)) for a in others] for f in functions]
        rows.append([("+/=/-",)] + [("{+}/{=}/{-}".format(**wilcoxon[a]["counts"]),) for a in others])
        blocks.append(("table", f"Wilcoxon rank-sum against {ref}{what}, D = {dim}: sign (Holm-adjusted p), "
                       f"Vargha-Delaney A12 and its magnitude", f"tab:wilcoxon-D{dim}{tag}",
                       ["function"] + [f"{a} vs {ref}" for a in others], rows, set()))
        better, worse = ("higher", "lower") if indicator["higher"] else ("lower", "higher")
        blocks.append(("p", f"Two-sided Wilcoxon rank-sum (Mann-Whitney U) of each algorithm against {ref}: exact "
                       f"(the permutation distribution given the ties) when neither sample has more than {EXACT_RUNS} "
                       f"runs, else normal with tie and continuity correction; p adjusted by Holm over the functions "
                       f"of D = {dim} for that algorithm. '+': significantly {better} {short} than {ref} (adjusted p < "
                       f"{alpha:g}), '-': significantly {worse}, '=': no significant difference. A12: the probability "
                       f"that a run of the algorithm ends with a {better} {short} than a run of {ref} (ties count half; "
                       f"above 0.5 favours the algorithm), negligible below |A12 - 0.5| = 0.06, small from 0.06, "
                       f"medium from 0.14, large from 0.21 (A12 = 0.56, 0.64, 0.71 and 0.44, 0.36, 0.29)."))
        counts = _count_cells(runs)
        fewest = min(counts.values())
        family = max(sum(1 for t in wilcoxon[a]["functions"].values() if t["p"] is not None) for a in others)
        possible, text = significance_sentence(fewest, family, alpha, f" at D = {dim}")
        blocks.append(("p", text if possible else f"Warning: {text}"))
    else:
        blocks.append(("p", f"No algorithm other than the reference {ref} ran at D = {dim}: no rank-sum tests."))

    complete = [f for f in functions if all((f, a) in stats for a in algos)]
    matrix = np.array([[_ranked_mean(stats[f, a]) for a in algos] for f in complete]).reshape(len(complete), len(algos))
    res = friedman(matrix, alpha)
    order = sorted(range(len(algos)), key=lambda j: (res["ranks"][j], algos[j]))
    best_mean = "lowest mean error" if single else f"best mean {short}"
    blocks.append(("table", f"Mean ranks over functions{what}, D = {dim} (1 = {best_mean}, "
                   "ties averaged)", f"tab:ranks-D{dim}{tag}", ["algorithm", "mean rank"],
                   [[(algos[j],), (f"{res['ranks'][j]:.2f}",)] for j in order], set()))
    blocks.append(("p", _friedman_text(res, alpha, len(functions) - len(complete), algos)))
    if folder is not None:
        blocks += _figures(dim, runs, meta, algos, functions, res, folder, written, tag.replace("-", "_"))
    return blocks


def _fronts_figure(runs, truths, algorithms, meta, folder, written) -> list:
    """Each algorithm's final front of its median-hypervolume run, per function, over the true front."""
    from ..viz.fronts import front_panels

    fronts: dict = {}
    for f in sorted({r["function"] for r in runs}, key=natural_key):
        for a in algorithms:
            cell = sorted((r for r in runs if (r["function"], r["algorithm"]) == (f, a) and r.get("front") is not None),
                          key=lambda r: (r["hv"], r["repeat"]))
            if cell:
                fronts.setdefault(f, {})[a] = np.asarray(cell[(len(cell) - 1) // 2]["front"], dtype=float)
    if not fronts:
        return []
    path = front_panels(fronts, truths, folder / "fronts.png", f"Final fronts, {meta.get('suite', '')}")
    written[path.stem] = path
    return [("h2", "Final fronts"), ("figure", path, FRONTS_CAPTION)]


FRONTS_CAPTION = ("Each algorithm's final non-dominated set in its median-hypervolume run (the lower median), over "
                  "the true Pareto front (grey).")


def _mean_cell(s):
    if s is None:
        return (None,)
    failed = (f" (NaN runs: {s['failed']})",) if s["failed"] else ()
    if s["mean"] is None:
        return (f"NaN runs: {s['failed']}",)
    return (s["mean"], " ± ", s["std"]) + failed


def _spread_cell(s):
    return (None,) if s is None else (s["best"], " / ", s["median"], " / ", s["worst"])


def _sign_cell(t):
    if t is None or t["sign"] is None:
        return (None,)
    return t["sign"], " (", t["p_holm"], f"), A12 = {t['a12']:.2f} {t['magnitude']}"


def _friedman_text(res, alpha, dropped, algos) -> str:
    n, k = res["n"], res["k"]
    left = f" ({dropped} function(s) left out: some algorithm has no run there)" if dropped else ""
    cd = f"Nemenyi critical difference CD = {res['cd']:.2f} at alpha = {alpha:g} (k = {k}, N = {n})."
    if res["test"] == "friedman":
        test = f"Friedman test over N = {n} functions{left}: chi-square = {res['statistic']:.3f}, p = {res['p']:.2e}."
    elif res["test"] == "sign":
        wins, untied = int(res["statistic"]), res["untied"]
        lead, won = (algos[0], wins) if 2 * wins >= untied else (algos[1], untied - wins)
        test = (f"Two algorithms: exact two-sided sign test over N = {n} functions{left} (what Friedman reduces to "
                f"for k = 2, ties dropped): {lead} lower on {won} of {untied} untied functions, p = {res['p']:.2e}.")
    else:
        test = f"No Friedman test (k = {k} algorithms, N = {n} functions{left}, or every function a complete tie): p = 1."
    return f"{test} {cd}"


def _figures(dim, runs, meta, algos, functions, res, folder, written, tag="") -> list:
    from ..viz.campaign import cd_diagram, convergence_panels

    out = []
    if res["k"] >= 2 and res["n"] >= 1:
        title = f"Mean ranks, D = {dim}, {res['n']} functions"
        path = cd_diagram(dict(zip(algos, res["ranks"])), res["cd"], folder / f"cd_D{dim}{tag}.png", title)
        written[path.stem] = path
        out.append(("figure", path, f"Critical-difference diagram, D = {dim}: algorithms joined by a bar are "
                    f"not significantly different (Nemenyi, alpha = {float(meta.get('alpha', 0.05)):g})."))
    fractions, budget = meta.get("fractions") or [], _budget(meta, dim)
    curves: dict = {}
    for f in functions:
        for a in algos:
            c = [r["curve"] for r in runs if (r["function"], r["algorithm"]) == (f, a) and len(r["curve"]) == len(fractions)]
            if c:  # a run without a curve of len(fractions) points is in the tables, not in the figure
                curves.setdefault(f, {})[a] = np.array(c, dtype=float)
    if curves and budget:
        path = convergence_panels(curves, fractions, budget, folder / f"convergence_D{dim}.png",
                                  f"Convergence, {meta.get('suite', '')} D = {dim}")
        written[path.stem] = path
        out.append(("figure", path, f"Error against evaluations, D = {dim}: median over runs with the inter-quartile band."))
    return out


# -- rendering ---------------------------------------------------------------------------------------
def _number(v: float, tex: bool) -> str:
    if v == 0:
        return "0"
    if not math.isfinite(v):
        return ("$\\infty$" if tex else "inf") if v > 0 else ("$-\\infty$" if tex else "-inf")
    text = f"{v:.2e}"
    if not tex:
        return text
    mantissa, exp = text.split("e")
    return f"${mantissa}\\times10^{{{int(exp)}}}$"


def _cell(parts, how: str) -> str:
    out = []
    for p in parts:
        if p is None:
            out.append({"tex": "---"}.get(how, "—"))
        elif isinstance(p, float):
            out.append(_number(p, how == "tex"))
        elif how == "tex":
            out.append("$-$" if p == "-" else _tex_escape(p).replace("±", "$\\pm$").replace("—", "---"))
        elif how == "html":
            out.append(html.escape(p))
        else:
            out.append(p.replace("|", "\\|").replace("*", "\\*"))
    return "".join(out)


def _tex_escape(text: str) -> str:
    table = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
             "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
    return "".join(table.get(c, c) for c in text)


def _markdown(blocks) -> str:
    md = []
    for b in blocks:
        kind = b[0]
        if kind in ("h1", "h2", "h3"):
            md += ["#" * int(kind[1]) + " " + b[1], ""]
        elif kind == "p":
            md += [b[1], ""]
        elif kind == "code":
            md += ["```", b[1], "```", ""]
        elif kind == "list":
            md += [f"- {item}" for item in b[1]] + [""]
        elif kind == "table":
            _, caption, _, header, rows, bold = b
            md += [f"**{_cell((caption,), 'md')}**", "", "| " + " | ".join(_cell((h,), "md") for h in header) + " |",
                   "|" + "---|" * len(header)]
            for i, row in enumerate(rows):
                cells = [_cell(c, "md") for c in row]
                md.append("| " + " | ".join(f"**{c}**" if (i, j) in bold else c for j, c in enumerate(cells)) + " |")
            md.append("")
        elif kind == "figure":
            md += [f"![{_cell((b[2],), 'md').replace('[', '(').replace(']', ')')}]({b[1].name})", "", f"*{b[2]}*", ""]
    return "\n".join(md)


STYLE = ("body{font-family:sans-serif;max-width:1200px;margin:auto;padding:0 1em}"
         "table{border-collapse:collapse;margin:0.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px}"
         "td{text-align:right}td:first-child{text-align:left}th{background:#f3f3f3}caption{text-align:left;"
         "font-weight:bold;padding:4px 0}pre{background:#f6f6f6;padding:6px;white-space:pre-wrap}img{max-width:100%}"
         "figcaption{font-style:italic}")


def _html(blocks, meta) -> str:
    page = []
    for b in blocks:
        kind = b[0]
        if kind in ("h1", "h2", "h3", "p"):
            page.append(f"<{kind}>{html.escape(b[1])}</{kind}>")
        elif kind == "code":
            page.append(f"<pre>{html.escape(b[1])}</pre>")
        elif kind == "list":
            page.append("<ul>" + "".join(f"<li>{html.escape(i)}</li>" for i in b[1]) + "</ul>")
        elif kind == "table":
            _, caption, _, header, rows, bold = b
            page.append(f"<table><caption>{html.escape(caption)}</caption><tr>"
                        + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>")
            for i, row in enumerate(rows):
                cells = [_cell(c, "html") for c in row]
                page.append("<tr>" + "".join(f"<td><b>{c}</b></td>" if (i, j) in bold else f"<td>{c}</td>"
                                             for j, c in enumerate(cells)) + "</tr>")
            page.append("</table>")
        elif kind == "figure":
            data = base64.b64encode(b[1].read_bytes()).decode()
            page.append(f'<figure><img src="data:image/png;base64,{data}" alt="{html.escape(b[2])}">'
                        f"<figcaption>{html.escape(b[2])}</figcaption></figure>")
    title = html.escape(f"Benchmark campaign: {meta.get('suite', '')}")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title><style>{STYLE}</style>"
            f"</head><body>{''.join(page)}</body></html>\n")


def _latex(blocks) -> str:
    tex = ["% Tables of a heuriscale benchmark campaign; needs \\usepackage{booktabs}.", ""]
    for b in blocks:
        if b[0] != "table":
            continue
        _, caption, label, header, rows, bold = b
        caption = _cell((caption,), "tex")
        tex += ["\\begin{table}[htbp]", "\\centering", "\\small", f"\\caption{{{caption}}}", f"\\label{{{label}}}",
                f"\\begin{{tabular}}{{l{'r' * (len(header) - 1)}}}", "\\toprule",
                " & ".join(_cell((h,), "tex") for h in header) + " \\\\", "\\midrule"]
        for i, row in enumerate(rows):
            if row[0] == ("+/=/-",):
                tex.append("\\midrule")
            cells = [_cell(c, "tex") for c in row]
            cells = [f"\\textbf{{\\boldmath {c}}}" if (i, j) in bold else c for j, c in enumerate(cells)]  # \\boldmath: math bold too
            tex.append(" & ".join(cells) + " \\\\")
        tex += ["\\bottomrule", "\\end{tabular}", "\\end{table}", ""]
    return "\n".join(tex)


def _write(path: Path, text: str) -> Path:
    path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    return path


def _write_csv(path: Path, runs, fractions, indicators=()) -> Path:
    """Every run, one row; the curve in columns curve@<fraction>. Errors as every format reports
    them (0 below 1e-8); floats as Python writes them (repr: exact round trip), so a failed run
    reads 'nan' or 'inf' here. A multi-objective campaign adds a column per indicator."""
    fields = ["algorithm", "function", "dim", "repeat", "seed", *(indicators or ["error"]), "evals", "wall_s"]
    points = [f"curve@{x:g}" for x in fractions]
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(fields + points)
        for r in runs:
            curve = list(r.get("curve") or [])
            w.writerow([r[k] for k in fields] + [repr(float(v)) for v in curve[: len(points)]]
                       + [""] * (len(points) - len(curve)))
    return path


COMPARISON_FIELDS = ["dim", "function", "algorithm", "reference", "p", "method", "p_holm", "sign", "a12", "magnitude"]


def _write_comparisons(path: Path, wilcoxon: dict, reference: str) -> Path:
    """One row per algorithm, function and dimension tested against `reference` (the rows of the
    report's Wilcoxon tables): raw and Holm-adjusted p, sign, A12 and its magnitude; floats as
    Python writes them (repr), a function left out of the tests (a side without runs) empty."""
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(COMPARISON_FIELDS)
        for dim in sorted(wilcoxon):
            for algo in sorted(wilcoxon[dim]):
                for function, t in wilcoxon[dim][algo]["functions"].items():
                    w.writerow([dim, function, algo, reference]
                               + ["" if t[k] is None else repr(float(t[k])) if k in ("p", "p_holm", "a12") else t[k]
                                  for k in COMPARISON_FIELDS[4:]])
    return path


def rebuild_report(folder: str | Path, formats=FORMATS) -> dict[str, Path]:
    """Write a finished campaign's report again from its `runs.csv` and `campaign.json` alone
    (no results store, no run): for a committed campaign whose store is elsewhere, after a
    change to how reports are written. The errors are taken as runs.csv has them, with the
    convention of `statistics.reported_error`; a runs.csv written when CEC 2022 recorded errors
    below 1e-8 as 1e-8 (campaign.json: "recorded_as": 1e-08) has those read as 0. runs.csv holds
    no fronts: a multi-objective report keeps the fronts.png drawn when the campaign ran.
    Returns the files written, as `compare` does."""
    folder = Path(folder)
    doc = json.loads((folder / "campaign.json").read_text(encoding="utf-8"))
    meta = doc["meta"]
    floor = doc.get("suite", {}).get("recorded_as") or 0.0
    below = doc.get("suite", {}).get("errors_below")

    def error(text: str) -> float:
        v = float(text)
        return 0.0 if floor and below and v == floor else v  # an error recorded as the floor was below it

    runs = []
    with (folder / "runs.csv").open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            curve = [error(v) for k, v in row.items() if k.startswith("curve@") and v != ""]
            runs.append({"algorithm": row["algorithm"], "function": row["function"], "dim": int(row["dim"]),
                         "repeat": int(row["repeat"]), "seed": int(row["seed"]), "error": error(row.get("error", "nan")),
                         "evals": int(row["evals"]), "wall_s": float(row["wall_s"]), "curve": curve,
                         **{i["key"]: float(row[i["key"]]) for i in meta.get("indicators") or []}})
    written = write_report(runs, meta, folder, formats)
    doc["suite"] = {**doc.get("suite", {}), "errors_below": ERROR_FLOOR, "recorded_as": 0.0}
    path = folder / "campaign.json"
    path.write_text(json.dumps(doc, indent=1, sort_keys=True, default=str) + "\n", encoding="utf-8")
    written["json"] = path
    return written
