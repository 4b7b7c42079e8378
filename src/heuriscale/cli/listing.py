"""`heuriscale list`: the algorithms and problems, read from the catalogue (no torch import)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from .. import catalog
from .common import fail, out


def list_(what: Annotated[str, typer.Argument(help="algorithms, problems or all")] = "all") -> None:
    """Show the algorithms and problems with their parameters."""
    if what not in ("all", "algorithms", "problems"):
        fail(f"unknown listing {what!r}: use algorithms, problems or all")
    listing = catalog.load()  # written from the registries (a test keeps it equal to them): no torch import
    if what in ("all", "algorithms"):
        table = Table(title="algorithms")
        for col in ("name", "paper", "parameters (defaults)", "presets", "kernels"):
            table.add_column(col)
        for entry in listing["algorithms"]:
            table.add_row(entry["name"], entry["paper"], entry["parameters"], entry["presets"],
                          ", ".join(entry["kernels"]) or "-")
        out.print(table)
    if what in ("all", "problems"):
        table = Table(title="problems")
        for col in ("name", "description", "parameters"):
            table.add_column(col)
        for entry in listing["problems"]:
            table.add_row(entry["name"], entry["summary"], entry["parameters"])
        out.print(table)
