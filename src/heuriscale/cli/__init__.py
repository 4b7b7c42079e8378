"""The `heuriscale` command: parses options, calls the library, prints rich tables.

One module per command (`run`, `reproduce`, `compare`, `warmup`, `listing`), and `common`
for what they share: the consoles, the one-line error, option checks, a study's frame.
torch and the library are imported inside the commands that run something: help, `list`,
`--version` and argument errors answer without waiting for torch (about a second).
"""

from __future__ import annotations

from typing import Annotated

import typer

from . import compare, listing, reproduce, run, warmup
from .common import show_library_notices

__all__ = ["app"]

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Population-based metaheuristics on CPUs and NVIDIA GPUs (PSO, PRS, Firefly+BFGS, APO, FEP).",
)


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        from ..version import __version__

        try:
            torch_version = version("torch")  # without importing it
        except PackageNotFoundError:
            torch_version = "not installed"
        typer.echo(f"heuriscale {__version__} (torch {torch_version})")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                          help="print the version and exit")] = False,
) -> None:
    show_library_notices()


# in the order `heuriscale --help` lists them
app.command()(run.run)
app.command()(reproduce.reproduce)
app.command()(compare.compare)
app.command()(warmup.warmup)
app.command("list")(listing.list_)
