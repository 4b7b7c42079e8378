"""The documentation site: it builds with `mkdocs build --strict` (no broken link or anchor, no
missing API reference), its API pages document the front door, and every example of its
guide pages runs (Python blocks as written on the CPU, command lines shrunk)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from doc_examples import command_lines, python_blocks, run_command, run_python

ROOT = Path(__file__).parents[1]
DOCS = ROOT / "docs"
#: The pages a newcomer reads, whose examples run here (the worked example's own page,
#: black-box.md, and adding-an-algorithm.md have tests of their own in test_docs.py).
PAGES = sorted([DOCS / "index.md", DOCS / "getting-started.md", DOCS / "cpu-threads.md", DOCS / "statistics.md",
                DOCS / "multiobjective.md",
                *(DOCS / "guide").glob("*.md")])


def test_the_site_builds_strictly_with_the_api_reference(tmp_path):
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-4000:]
    running = (site / "reference" / "engine" / "index.html").read_text()
    for name in ("minimize", "Runner", "AskTell", "Result"):
        assert f'id="heuriscale.engine.{name}"' in running, name
    assert "best-so-far" in running  # a docstring's text, not only the headings
    for page in ("problems", "functions", "algorithms", "local", "studies"):
        assert 'class="doc doc-heading"' in (site / "reference" / page / "index.html").read_text(), page


def test_every_page_is_in_the_navigation():
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in PAGES:
        assert str(page.relative_to(DOCS)) in nav, page


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_the_pages_python_examples_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples write under scratch/
    text = page.read_text()
    if not python_blocks(text):
        pytest.skip("no Python example on this page")
    run_python(text, str(page.relative_to(ROOT)))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_the_pages_command_lines_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = page.read_text()
    lines = command_lines(text, "run") + command_lines(text, "compare") + command_lines(text, "list")
    if not lines:
        pytest.skip("no heuriscale run/compare/list line on this page")
    for line in lines:
        run_command(line)


def test_no_page_links_outside_the_site():
    """A link that leaves docs/ breaks on the site: raw results outside it are named as paths."""
    for page in DOCS.rglob("*.md"):
        for target in re.findall(r"\]\((\.\./[^)]*)\)", page.read_text()):
            resolved = (page.parent / target.split("#")[0]).resolve()
            assert DOCS.resolve() in resolved.parents or resolved == DOCS.resolve(), (page, target)


def test_the_reliability_pages_reading_example_reads_a_store_being_written(tmp_path, monkeypatch):
    """docs/reliability.md's block reads a reproduction's store; here the store holds one run that
    a writer, still open, committed."""
    from heuriscale.studies import ResultStore

    monkeypatch.chdir(tmp_path)
    run = {"repeat": 0, "config": {"algorithm": "pso"}, "seed": 1, "device": "cpu", "device_name": "cpu",
           "best_f": 0.5, "best_x": [0.0], "evals": 10, "wall_time": 0.1, "setup_time": 0.0, "history": [],
           "extra": {}}
    with ResultStore("reproductions/pso/results.sqlite") as writer:
        writer.add("pso-quick", "k0", [run])
        namespace: dict = {}
        exec(compile("\n".join(python_blocks((DOCS / "reliability.md").read_text())), "reliability.md", "exec"),
             namespace)
    assert [(r["config_key"], r["repeat"], r["best_f"]) for r in namespace["runs"]] == [("k0", 0, 0.5)]
