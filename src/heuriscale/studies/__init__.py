"""Many runs: experiment grids, the SQLite results store and the paper reproductions."""

from .papers import PAPERS, Experiment, Paper
from .reproduce import SCALES, available_devices, reproduce_paper
from .store import ResultStore
from .study import RunConfig, aggregate, run_configs
from .suites import SUITES, Suite, get_suite
from .compare import compare

__all__ = ["PAPERS", "Paper", "Experiment", "ResultStore", "RunConfig", "run_configs", "aggregate",
           "reproduce_paper", "available_devices", "SCALES", "compare", "Suite", "SUITES", "get_suite"]
