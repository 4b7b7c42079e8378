"""Put a reproduction's finished runs back into its store from the `results.csv` it wrote.

A paper-scale reproduction can take hours (paper 003's CPU half: over an hour on 16 cores)
and its store is not committed, only `results.csv` and the report. When the report's
presentation changes, `restore_runs` refills a store from that CSV, so that
`heuriscale reproduce` reruns only what the CSV cannot give back and writes the report anew.

What a CSV row gives back: best f, wall and set-up times, evaluations, seed, device name,
engine and threads, which is everything the papers' timing and quality tables read. Not its
best x, history, snapshots, per-phase times or a refined run's pairs: configurations with
snapshots, profiling or refinement are left out (rerun) by themselves, and an experiment
whose table or figure reads best x or the history (paper 003's Tables 3 and 4) is left out
by naming only the others in `experiments=`. A row is restored only where its
seed equals the one its configuration gives the repeat today (`RunConfig.seed`, a hash of the
whole configuration; runs advanced together carry their batch's first seed): a configuration
changed since the CSV was written is rerun, never paired with old numbers. Runs that were advanced together share one wall time (the batch's);
`batched_runs` is restored as the number of the configuration's runs with that wall time.
Each restored run says so in `extra["restored_from"]`.
"""

from __future__ import annotations

import csv
import dataclasses
from collections import Counter
from pathlib import Path

from .papers import Paper
from .reproduce import configs_for, study_name
from .store import ResultStore


def restore_runs(paper: Paper, scale: str, devices: list[str], csv_path: str | Path, store: ResultStore,
                 experiments: list[str] | None = None, label: str | None = None) -> dict[str, int]:
    """Add to `store` the runs of `csv_path` that still match a configuration of `paper` at
    `scale` on `devices` (only `experiments`, if given) and are not stored yet.

    Returns counts: restored, stored already, changed (seed differs: the configuration
    changed since), unmatched (no configuration of today's paper has the row's labels, or
    its configuration needs more than the CSV holds)."""
    csv_path = Path(csv_path)
    with csv_path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    if experiments is not None:
        unknown = set(experiments) - {exp.name for exp in paper.experiments}
        if unknown:
            raise ValueError(f"paper {paper.key} has no experiment {', '.join(sorted(unknown))}; "
                             f"its experiments: {', '.join(exp.name for exp in paper.experiments)}")
    study = study_name(paper, scale)
    counts, used = Counter(restored=0, stored=0, changed=0, unmatched=0), set()
    for exp in paper.experiments:
        if experiments is not None and exp.name not in experiments:
            continue
        for _, config in configs_for(exp, scale, devices):
            if config.snapshots or config.profile or config.refine:
                continue  # its rows are counted unmatched below: rerun
            mine = [(i, r) for i, r in enumerate(rows) if _labels_match(r, exp.name, config)]
            used.update(i for i, _ in mine)
            done = store.finished(study, config.key())
            walls = Counter(r["wall_time_s"] for _, r in mine)
            fresh = []
            for _, r in mine:
                repeat = int(r["repeat"])
                if repeat >= config.runs:
                    counts["unmatched"] += 1
                elif not _seed_fits(int(r["seed"]), config, repeat):
                    counts["changed"] += 1
                elif repeat in done:
                    counts["stored"] += 1
                else:
                    fresh.append(_run(r, config, walls[r["wall_time_s"]], label or str(csv_path)))
            if fresh:
                store.add(study, config.key(), fresh)
                counts["restored"] += len(fresh)
    counts["unmatched"] += sum(1 for i, r in enumerate(rows) if i not in used
                               and (experiments is None or r["experiment"] in experiments))
    return dict(counts)


def _seed_fits(seed: int, config, repeat: int) -> bool:
    """The seed of `repeat` run alone (config.seed(repeat)) or in a batch that began at an
    earlier repeat (its first repeat's seed): either way the configuration's key is today's."""
    steps, rest = divmod(seed - config.seed(0), 1000)
    return rest == 0 and 0 <= steps <= repeat


def _labels_match(row: dict, experiment: str, config) -> bool:
    return (row.get("experiment") == experiment and row.get("device") == config.device
            and all(row.get(k) == str(v) for k, v in config.tags.items()))


def _run(row: dict, config, batched: int, source: str) -> dict:
    extra = {"engine": row.get("engine") or None, "batched_runs": batched, "restored_from": source}
    if row.get("cpu_threads"):
        extra["cpu_threads"] = int(float(row["cpu_threads"]))
    return {"repeat": int(row["repeat"]), "config": dataclasses.asdict(config), "seed": int(row["seed"]),
            "device": config.device, "device_name": row["device_name"], "best_f": float(row["best_f"]),
            "best_x": [], "evals": int(row["evals"]), "wall_time": float(row["wall_time_s"]),
            "setup_time": float(row["setup_time_s"]), "history": {}, "extra": extra}
