"""The package's version, in a module of its own that imports nothing (every layer may read it)."""

__version__ = "0.2.0"
