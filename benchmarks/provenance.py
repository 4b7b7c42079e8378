"""Where a benchmark's numbers came from: date, commit (and whether the tree had changes),
machine and torch, plus what the script adds. Written beside every result file."""

from __future__ import annotations

import datetime
import platform
import subprocess

import torch


def provenance(**extra) -> dict:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], capture_output=True, text=True).stdout.strip()

    commit = git("rev-parse", "--short", "HEAD")
    dirty = bool(git("status", "--porcelain"))
    return {"date": datetime.date.today().isoformat(), "commit": commit + (" (uncommitted changes)" if dirty else ""),
            "machine": f"{platform.processor() or platform.machine()}, {platform.system()}",
            "torch": torch.__version__, **extra}
