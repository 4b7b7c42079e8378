"""Names as people read them: natural order (f2 before f10), the "unknown name" message, and
text shortened between words. Torch-free, so that the command line can check a name before it imports the library."""

from __future__ import annotations

import difflib
import re
import textwrap
from collections.abc import Iterable


def natural_key(name: str) -> tuple:
    """Sort key that orders the digits in a name by value: cec2017-f2 before cec2017-f10."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part)
                 for part in re.split(r"(\d+)", str(name)) if part)


def natural_sorted(names: Iterable[str]) -> list[str]:
    return sorted(names, key=natural_key)


def unknown_name(kind: str, name: str, known: Iterable[str]) -> str:
    """'unknown problem 'sphre' (did you mean 'sphere'?); known problems: ...' in natural order."""
    known = natural_sorted(known)
    close = difflib.get_close_matches(str(name), known, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown {kind} {name!r}{hint}; known {kind}s: {', '.join(known)}"


def shorten(text: str, width: int, placeholder: str = "…") -> str:
    """`text` in at most `width` characters: whole as it is where it fits, else cut between two
    words and ended with `placeholder`, so that it never ends in half a word (only a first
    word longer than `width` is cut inside)."""
    if len(text) <= width:
        return text
    short = textwrap.shorten(text, width, placeholder=placeholder, break_on_hyphens=False)
    return text[:width - len(placeholder)] + placeholder if short == placeholder else short
