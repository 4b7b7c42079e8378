"""Plots and pictures from results (matplotlib, an optional extra)."""
