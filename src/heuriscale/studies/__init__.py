"""Many runs: experiment grids, the SQLite results store and the paper reproductions.

Filled in by the reproduction work; see ARCHITECTURE.md.
"""
