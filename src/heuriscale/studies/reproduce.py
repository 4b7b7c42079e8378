"""`heuriscale reproduce`: run a paper's experiments and set our numbers beside the paper's.

One generic runner for all papers: each experiment in `papers.py` becomes store-backed run
configurations (rerunning resumes), then a table per experiment (the paper's numbers next
to ours), figures, `results.csv`, `report.md` and a self-contained `report.html` under
`DIR/<paper>/`.
"""

from __future__ import annotations

import base64
import csv
import html
import math
import statistics
from pathlib import Path

import torch

from ..engine.device import device_name, resolve_device
from .papers import PAPERS, Experiment, Paper
from .store import ResultStore, StoreError
from .sharded import run_study, study_group
from .statistics import error_of
from .study import RunConfig, aggregate

SCALES = ("quick", "paper")


def available_devices(requested: str | None) -> list[str]:
    """'cpu,cuda' as asked (checked), or every device present."""
    if requested is None:
        return ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]
    devices = [d.strip() for d in requested.split(",") if d.strip()]
    for d in devices:
        resolve_device(d)  # a clear error for a device that is not there
    return devices


def _shrink(row_config: dict, quick: dict) -> dict:
    config = {**row_config, "algorithm_params": dict(row_config.get("algorithm_params", {}))}
    full_iters = config["iters"]
    for field_name, (how, value) in quick.items():
        target, key = (config["algorithm_params"], field_name.split(".", 1)[1]) if "." in field_name else (config, field_name)
        if key not in target or target[key] is None:
            continue
        target[key] = min(target[key], value) if how == "cap" else max(1, int(round(target[key] * value)))
    if config.get("snapshots") and config["iters"] != full_iters:  # keep snapshots at the same fractions
        config["snapshots"] = tuple(max(0, round(s * config["iters"] / full_iters)) for s in config["snapshots"])
    return config


def configs_for(exp: Experiment, scale: str, devices: list[str]) -> list[tuple[dict, RunConfig]]:
    out = []
    for row in exp.rows:
        config = row["config"] if scale == "paper" else _shrink(row["config"], exp.quick)
        for device in ([row["device"]] if "device" in row else exp.devices):
            if device not in devices:
                continue
            ran = {"ran": f"{config['iters']} it x {config.get('algorithm_params', {}).get('pop_size', '')}".rstrip(" x")}
            run = RunConfig(**{k: (tuple(v) if k == "snapshots" else v) for k, v in config.items()},
                            runs=exp.runs[scale], device=device, dtype=exp.dtype, timing=exp.timing,
                            tags={**row["tags"], "experiment": exp.name, **ran})
            out.append((row, run))
    return out


def reproduce_paper(paper: Paper, scale: str, devices: list[str], out: Path, progress=None,
                    timeout: float | None = None, parallel_cells: int | str = 1) -> Path | None:
    """Run (or resume) every experiment of `paper`, then write its report; returns report.md.

    Under torchrun the runs are shared out over the ranks (see `sharded`); rank 0 alone
    writes the store and the report, and the other ranks return None. `parallel_cells`
    ("auto" or a number, `studies.cells`): CPU configurations run at once in worker
    processes; 1 by default, as the papers' CPU times are results, measured alone."""
    from ..viz import figures

    folder = out / paper.key
    group = study_group(devices, timeout)
    pairs = {exp.name: configs_for(exp, scale, devices) for exp in paper.experiments}
    study = study_name(paper, scale)
    lead = group is None or group.lead
    if lead:
        (folder / "figures").mkdir(parents=True, exist_ok=True)
    store = ResultStore(store_path(paper, out)) if lead else None
    sections, csv_rows = [], []
    try:
        run_study(study, [c for exp_pairs in pairs.values() for _, c in exp_pairs], store, group, progress,
                  parallel_cells=parallel_cells)
        if not lead:
            return None
        for exp in paper.experiments:
            results = [(row, config, aggregate(store, study, config)) for row, config in pairs[exp.name]]
            for _, config, agg in results:
                for run in agg["runs"]:
                    csv_rows.append({"experiment": exp.name, **config.tags, "device": config.device,
                                     "device_name": run["device_name"], "repeat": run["repeat"], "seed": run["seed"],
                                     "best_f": run["best_f"], "wall_time_s": run["wall_time"],
                                     "setup_time_s": run["setup_time"], "evals": run["evals"],
                                     "engine": run["extra"].get("engine"), "cpu_threads": run["extra"].get("cpu_threads")})
            title, header, body = TABLES.get(exp.kind, _no_table)(exp, results, devices)
            # a refined run's (before, after) pairs go to the figures with it (they do not import this module)
            drawn = [(r, c, {**a, "pairs": hybrid_pairs(c, a)} if c.refine and a["runs"] else a) for r, c, a in results]
            figs = figures.for_experiment(exp, drawn, folder / "figures")  # (path, caption) each
            notes = [_budget_note(exp, [(r, c, a) for r, c, a in results if a["runs"]])] + ([exp.differs] if exp.differs else [])
            notes += _restored_note(results)
            sections.append((exp, title, header, body, figs, notes))
    finally:
        if store is not None:
            store.close()
    _write_csv(folder / "results.csv", csv_rows)
    return _write_reports(paper, scale, devices, folder, sections, csv_rows)


def store_path(paper: Paper, out: Path) -> Path:
    return out / paper.key / "results.sqlite"


def study_name(paper: Paper, scale: str) -> str:
    return f"{paper.key}-{scale}"


def stored_runs(paper: Paper, scale: str, devices: list[str], out: Path) -> tuple[int, int, Path]:
    """(runs of the paper's study in its store, runs the study has in all, the store's path),
    read without the writer's lock; a store that is missing or unreadable counts as empty."""
    configs = {config.key(): config for exp in paper.experiments for _, config in configs_for(exp, scale, devices)}
    total = sum(config.runs for config in configs.values())
    path = store_path(paper, out)
    stored = 0
    if path.is_file():
        try:
            with ResultStore(path, readonly=True) as store:
                study = study_name(paper, scale)
                stored = sum(len(store.finished(study, key) & set(range(config.runs))) for key, config in configs.items())
        except StoreError:
            pass
    return stored, total, path


# -- tables ------------------------------------------------------------------------------------
def _fmt(v, digits: int = 4) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return str(v)


def _matches(config: RunConfig, tags: dict) -> bool:
    """A stored configuration belongs to a table row when it carries the row's tags (it also
    carries the experiment's name and what ran, which the row does not)."""
    return all(config.tags.get(k) == v for k, v in tags.items())


def _by_device(results, **tags):
    return {c.device: a for r, c, a in results if _matches(c, tags)}


def _ran(agg: dict) -> dict | None:
    """The configuration we actually ran for a table row (the quick scale may shrink it)."""
    first = next(iter(agg.values()), None)
    return first["runs"][0]["config"] if first and first["runs"] else None


def _speedup(cpu, cuda):
    return cpu / cuda if cpu and cuda and cuda > 0 else None


_OPTIMA: dict = {}


def _optimum(config: RunConfig) -> float | None:
    """f* of a configuration's problem (its value does not depend on the dimension)."""
    key = (config.problem, repr(sorted(config.problem_params.items())))
    if key not in _OPTIMA:
        from .. import problems

        entry = problems.problem_entry(config.problem)
        _OPTIMA[key] = problems.get_problem(config.problem, dim=2 if entry.needs_dim else None,
                                            **config.problem_params).optimum_f
    return _OPTIMA[key]


def _errors(config: RunConfig, values) -> list[float]:
    """Best values as errors f - f*, with the convention every report uses (0 below 1e-8, never
    negative: `statistics.reported_error`); values as they are where f* is unknown."""
    opt = _optimum(config)
    return [error_of(v, opt) for v in values]


def _mean_error(config: RunConfig, agg: dict) -> float:
    return statistics.fmean(_errors(config, [r["best_f"] for r in agg["runs"]])) if agg["runs"] else float("nan")


def _times(agg: dict, scale: float = 1.0, per: float = 1.0) -> list[float]:
    """The timed measurements of a row: one per run timed alone, one per batch of runs advanced
    together (its runs share its time), each x scale / per."""
    runs = agg["runs"]
    if agg.get("batched"):
        batches = {}
        for r in runs:
            batches.setdefault((r["wall_time"], r["setup_time"]), r)
        runs = list(batches.values())
    return [scale * (r["wall_time"] - r["setup_time"]) / per for r in runs]


def _time_cell(agg: dict | None, scale: float = 1.0, per: float = 1.0, digits: int = 3) -> str:
    """mean ± sample std of a row's timed measurements ('mean (1 timing)' when there is one)."""
    if not agg:
        return "–"
    t = _times(agg, scale, per)
    if not t:
        return "–"
    if len(t) == 1:
        return f"{_fmt(t[0], digits)} (1 timing)"
    return f"{_fmt(statistics.fmean(t), digits)} ± {_fmt(statistics.stdev(t), 2)}"


def _timing_table(exp, results, devices):
    """Paper 001: our time per iteration (any run length) beside the paper's (100,000 iterations)."""
    header = ["particles", "ours: iters x runs", "ours CPU us/it", "paper CPU us/it", "ours CUDA us/it",
              "paper CUDA us/it", "ours speedup", "paper speedup"]
    body = []
    for row in exp.rows:
        n = row["tags"]["particles"]
        agg = _by_device(results, particles=n)
        ours = {d: 1e6 * a["time"]["mean"] / a["runs"][0]["config"]["iters"] for d, a in agg.items()}
        cells = {d: _time_cell(a, 1e6, a["runs"][0]["config"]["iters"], 4) for d, a in agg.items()}
        ran = _ran(agg)
        paper_its = row["config"]["iters"]
        p = {d: 1000 * row["paper"][d]["avg"] / paper_its for d in ("cpu", "cuda")}
        body.append([n, f"{ran['iters']} x {ran['runs']}" if ran else "–",
                     cells.get("cpu", "–"), _fmt(p["cpu"]), cells.get("cuda", "–"), _fmt(p["cuda"]),
                     _fmt(_speedup(ours.get("cpu"), ours.get("cuda")), 3), _fmt(p["cpu"] / p["cuda"], 3)])
    return (exp.title + " (ours: mean ± std over runs timed one by one; paper: 100,000 iterations, avg of 10 runs)",
            header, body)


def _quality_table(exp, results, devices):
    keys = [k for k in exp.rows[0]["tags"]]
    header = keys + ["ours: iters x pop", "ours CPU score", "ours CUDA score", "paper CPU score", "paper CUDA score",
                     "ours CPU s (all runs)", "ours CPU s per run", "ours CUDA s (all runs)", "ours CUDA s per run",
                     "paper CPU s per run", "paper CUDA s per run", "ours speedup", "paper speedup"]
    body = []
    for row in exp.rows:
        agg = _by_device(results, **row["tags"])
        p = row["paper"]
        t = {d: a["time"]["mean"] for d, a in agg.items()}
        paper_speedup = p.get("speedup") or _speedup(p.get("cpu_time"), p.get("cuda_time"))
        ran = _ran(agg)
        score = {d: _mean_error(c, a) for _, c, a in results if _matches(c, row["tags"]) for d in [c.device]}
        per_run = {d: _time_cell(a, per=max(1, a["n"])) for d, a in agg.items()}
        body.append([row["tags"][k] for k in keys] + [ran["tags"]["ran"] if ran else "–",
            _fmt(score.get("cpu")), _fmt(score.get("cuda")),
            _fmt(p["cpu_score"]), _fmt(p["cuda_score"]), _time_cell(agg.get("cpu")), per_run.get("cpu", "–"),
            _time_cell(agg.get("cuda")), per_run.get("cuda", "–"),
            _fmt(p["cpu_time"]), _fmt(p["cuda_time"]), _fmt(_speedup(t.get("cpu"), t.get("cuda")), 3), _fmt(paper_speedup, 3)])
    runs = exp.runs
    note = (f" (scores: mean of the best error f - f* over runs, 0 below 1e-8; our times: the {runs['quick']} (quick) "
            f"or {runs['paper']} (paper scale) runs of a row advanced together in one timed call, and that time divided "
            "by the runs, which compares with the paper's time of one run; ± the spread over timed calls where a row "
            "had several)")
    return exp.title + note, header, body


def _hybrid_table(exp, results, devices):
    """Paper 002's Figs. 7-8 as numbers: per trial, the swarm's best before BFGS and after it,
    both from the same run (the hybrid records the first in extra["global_best_f"])."""
    header = ["function", "device", "trials", "Firefly median (before BFGS)", "Firefly + BFGS median (same runs)",
              "improved trials", "worsened trials", "paper's finding"]
    body = []
    for fn in dict.fromkeys(r["tags"]["function"] for r in exp.rows):
        for device in devices:
            found = [(c, a) for _, c, a in results if c.device == device and _matches(c, {"function": fn}) and c.refine]
            if not found:
                continue
            config, agg = found[0]
            before, after = hybrid_pairs(config, agg)
            improved = sum(y < x for x, y in zip(before, after))
            worse = sum(y > x for x, y in zip(before, after))
            finding = next(r["paper"]["finding"] for r in exp.rows if r["tags"]["function"] == fn)
            body.append([fn, device, len(before), _fmt(statistics.median(before)), _fmt(statistics.median(after)),
                         f"{improved} of {len(before)}", f"{worse} of {len(before)}", finding])
    return exp.title + " (errors f - f*, 0 below 1e-8; improved: BFGS lowered that run's best)", header, body


def hybrid_pairs(config: RunConfig, agg: dict) -> tuple[list[float], list[float]]:
    """(before, after) per trial of a Firefly + BFGS configuration, as reported errors: the swarm's
    best when the global search ended and the refined best, from the same stored run."""
    before = _errors(config, [r["extra"]["global_best_f"] for r in agg["runs"]])
    after = _errors(config, [r["best_f"] for r in agg["runs"]])
    return before, after


def _time_modes_table(exp, results, devices):
    header = ["function", "mode", "runs timed", "mean ms per run", "std ms", "median best error", "paper's finding"]
    body = []
    for row in exp.rows:
        for _, c, a in results:
            if _matches(c, row["tags"]):
                body.append([row["tags"]["function"], row["tags"]["mode"], a["n"], _fmt(1000 * a["time"]["mean"]),
                             _fmt(1000 * a["time"]["std"], 3), _fmt(statistics.median(_errors(c, [r["best_f"] for r in a["runs"]]))),
                             row["paper"]["finding"]])
    return exp.title + " (each run timed alone; errors f - f*, 0 below 1e-8)", header, body


def _ratios_table(exp, results, devices):
    header = ["function", "mu", "ours: generations", "ours CPU s", "ours CUDA s", "ours CPU ratio", "paper CPU ratio",
              "ours CUDA ratio", "paper CUDA ratio", "ours speedup", "paper speedup"]
    body = []
    for row in exp.rows:
        fn, mu = row["tags"]["function"], row["tags"]["mu"]
        agg, base = _by_device(results, function=fn, mu=mu), _by_device(results, function=fn, mu=400)
        t = {d: a["time"]["mean"] for d, a in agg.items()}
        ratio = {d: t[d] / base[d]["time"]["mean"] for d in t if d in base}
        p = row["paper"]
        ran = _ran(agg)
        body.append([fn, mu, ran["iters"] if ran else "–", _time_cell(agg.get("cpu")), _time_cell(agg.get("cuda")),
                     _fmt(ratio.get("cpu"), 3), _fmt(p["ratio_cpu"]),
                     _fmt(ratio.get("cuda"), 3), _fmt(p["ratio_cuda"]), _fmt(_speedup(t.get("cpu"), t.get("cuda")), 3),
                     _fmt(p["speedup"])])
    return exp.title + " (ours: s per run, mean ± std over runs timed one by one; paper: 2,000 generations)", header, body


def _phases_table(exp, results, devices):
    phases = ("selection", "evaluation", "mutation")
    header = ["mu", "device", "ours: generations"] + [f"ours {p} s" for p in phases] + ["ours total s"] + \
             [f"paper {p} s" for p in phases] + ["paper total s"]
    body = []
    for row in exp.rows:
        for device, a in _by_device(results, mu=row["tags"]["mu"]).items():
            measured = {p: statistics.fmean(r["extra"]["phases"].get(p, 0.0) for r in a["runs"]) for p in phases}
            p = row["paper"][device]
            body.append([row["tags"]["mu"], device, a["runs"][0]["config"]["iters"]] +
                        [_fmt(measured[k], 3) for k in phases] +
                        [_time_cell(a)] + [_fmt(p[k]) for k in phases] + [_fmt(p["total"])])
    paper_its = exp.rows[0]["config"]["iters"]
    return (exp.title + f" (ours: phases timed with device synchronisation, over the generations in column "
            f"'ours: generations'; paper: {paper_its:,} generations)", header, body)


def _spring_table(exp, results, devices):
    header = ["who", "device", "best design [d, D, N]", "weight", "largest violation", "feasible runs", "time s"]
    body = []
    row = exp.rows[0]
    for device, a in _by_device(results, problem="spring").items():
        best = min(a["runs"], key=lambda r: r["best_f"])
        feasible = sum(bool(r["extra"].get("feasible")) for r in a["runs"])
        body.append(["heuriscale APO", device, "[" + ", ".join(f"{v:.6g}" for v in best["best_x"]) + "]",
                     _fmt(best["extra"].get("objective", best["best_f"]), 7), _fmt(best["extra"].get("max_violation"), 3),
                     f"{feasible} of {a['n']}", _time_cell(a)])
    for device, label in (("cpu", "paper APO"), ("cuda", "paper P-APO")):
        design, weight, seconds = row["paper"][device]
        body.append([label, device, str(design), _fmt(weight, 7), "–", "–", _fmt(seconds)])
    return exp.title + " (best known 0.0126652; our time: all runs of a row advanced together)", header, body


def _otsu_table(exp, results, devices):
    header = ["size", "ours CPU threshold", "ours CUDA threshold", "skimage threshold_otsu", "paper APO threshold",
              "paper P-APO threshold", "ours CPU s", "ours CUDA s", "paper APO s", "paper P-APO s", "paper speedup"]
    body = []
    from skimage.filters import threshold_otsu

    from ..problems.otsu import load_image
    for row in exp.rows:
        size = row["tags"]["size"]
        agg = _by_device(results, size=size)
        thr = {d: statistics.fmean(math.floor(r["best_x"][0]) for r in a["runs"]) for d, a in agg.items()}
        p = row["paper"]
        exact = int(threshold_otsu(load_image("camera", size)))
        body.append([size, _fmt(thr.get("cpu")), _fmt(thr.get("cuda")), exact, p["cpu_threshold"], p["cuda_threshold"],
                     _time_cell(agg.get("cpu")), _time_cell(agg.get("cuda")), p["cpu_time"], p["cuda_time"], p["speedup"]])
    return exp.title + " (ours: the camera image; paper: Lena; our time: all runs of a row advanced together)", header, body


def _no_table(exp, results, devices):
    return exp.title, [], []


def _restored_note(results) -> list[str]:
    """A sentence when some runs were put back from an earlier results.csv (`studies.restore`)."""
    runs = [run for _, _, a in results for run in a["runs"]]
    sources = sorted({run["extra"]["restored_from"] for run in runs if run["extra"].get("restored_from")})
    if not sources:
        return []
    restored = sum(1 for run in runs if run["extra"].get("restored_from"))
    return [f"{restored} of these {len(runs)} runs were not run again for this report: their numbers are those "
            f"recorded in {', '.join(sources)} (put back by `heuriscale.studies.restore`, which checks that "
            f"each run's configuration is unchanged)."]


def _budget_note(exp: Experiment, results) -> str:
    """One sentence on the budget per run, ours (as run) beside the paper's."""
    ran = sorted({(c.iters, c.algorithm_params.get("pop_size")) for _, c, _ in results})
    full = sorted({(r["config"]["iters"], r["config"].get("algorithm_params", {}).get("pop_size")) for r in exp.rows})

    def text(pairs):
        its = sorted({i for i, _ in pairs})
        pops = sorted({p for _, p in pairs if p})
        it = f"{its[0]:,} iterations" if len(its) == 1 else f"{its[0]:,} to {its[-1]:,} iterations (per row)"
        pop = "" if not pops else f" of a population of {pops[0]:,}" if len(pops) == 1 else \
            f" of populations of {pops[0]:,} to {pops[-1]:,}"
        return it + pop

    if not ran:
        return f"Budget per run: the paper's {text(full)}; nothing of ours ran."
    same = "the same" if ran == full else text(full)
    return f"Budget per run: ours {text(ran)}; the paper's: {same}."


TABLES = {"timing": _timing_table, "quality": _quality_table, "hybrid": _hybrid_table, "time_modes": _time_modes_table,
          "ratios": _ratios_table, "phases": _phases_table, "spring": _spring_table, "otsu": _otsu_table}


# -- files ----------------------------------------------------------------------------------------
def _write_csv(path: Path, rows: list[dict]) -> None:
    keys = list(dict.fromkeys(k for r in rows for k in r))
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)


def _hardware(devices: list[str], rows: list[dict]) -> dict:
    """Each device's name as its runs recorded it, with the engines they used (and on the CPU,
    the threads)."""
    ours = {}
    for d in devices:
        runs = [r for r in rows if r["device"] == d]
        engines = sorted({str(r["engine"]) for r in runs if r.get("engine")})
        threads = sorted({int(r["cpu_threads"]) for r in runs if r.get("cpu_threads")})
        how = [f"engine {', '.join(engines)}"] if engines else []
        how += [f"{', '.join(map(str, threads))} thread{'s' if threads != [1] else ''}"] if threads else []
        # the names the runs recorded: a report may be written on another machine than its runs'
        named = sorted({str(r["device_name"]) for r in runs if r.get("device_name")})
        ours[d] = (", ".join(named) or device_name(resolve_device(d))) + (f" ({'; '.join(how)})" if how else "")
    return ours


def _write_reports(paper: Paper, scale: str, devices: list[str], folder: Path, sections, rows: list[dict]) -> Path:
    ours = _hardware(devices, rows)
    md = [f"# {paper.title}", "", f"Scale: **{scale}**. Source: {paper.citation}.", "",
          "| | paper | ours |", "|---|---|---|"]
    for d in ("cpu", "cuda"):
        md.append(f"| {d} | {paper.hardware.get(d, '–')} | {ours.get(d, 'not run')} |")
    md += ["", paper.notes, ""]
    page = [f"<h1>{html.escape(paper.title)}</h1>", f"<p>Scale: <b>{scale}</b>. Source: {html.escape(paper.citation)}.</p>",
            "<table><tr><th></th><th>paper</th><th>ours</th></tr>"]
    for d in ("cpu", "cuda"):
        page.append(f"<tr><td>{d}</td><td>{html.escape(paper.hardware.get(d, '–'))}</td>"
                    f"<td>{html.escape(ours.get(d, 'not run'))}</td></tr>")
    page += ["</table>", f"<p>{html.escape(paper.notes)}</p>"]
    for exp, title, header, body, figs, notes in sections:
        md += [f"## {title}", ""]
        page.append(f"<h2>{html.escape(title)}</h2>")
        if header:
            md += ["| " + " | ".join(map(str, header)) + " |", "|" + "---|" * len(header)]
            md += ["| " + " | ".join(map(str, row)) + " |" for row in body]
            md.append("")
            page.append("<table><tr>" + "".join(f"<th>{html.escape(str(h))}</th>" for h in header) + "</tr>")
            page += ["<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>" for row in body]
            page.append("</table>")
        for note in notes:
            md += [note, ""]
            page.append(f"<p>{html.escape(note)}</p>")
        for fig, caption in figs:
            rel = fig.relative_to(folder)
            alt = caption.replace("[", "(").replace("]", ")")
            md += [f"![{alt}]({rel.as_posix()})", "", f"*{caption}*", ""]
            data = base64.b64encode(fig.read_bytes()).decode()
            page.append(f'<figure><img src="data:image/png;base64,{data}" alt="{html.escape(caption)}">'
                        f"<figcaption>{html.escape(caption)}</figcaption></figure>")
    (folder / "report.md").write_text("\n".join(md))
    style = ("body{font-family:sans-serif;max-width:1200px;margin:auto}table{border-collapse:collapse;margin:1em 0}"
             "td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}img{max-width:100%}")
    (folder / "report.html").write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(paper.title)}"
                                        f"</title><style>{style}</style></head><body>{''.join(page)}</body></html>")
    return folder / "report.md"


__all__ = ["PAPERS", "SCALES", "available_devices", "reproduce_paper", "configs_for", "stored_runs"]
