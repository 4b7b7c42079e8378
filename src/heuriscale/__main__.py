"""`python -m heuriscale ...` is the `heuriscale` command."""

from .cli import app

app(prog_name="heuriscale")
