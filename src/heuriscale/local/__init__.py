"""Gradient-based refiners (batched BFGS / L-BFGS) and the hybrid wrapper.

Filled in by the Firefly + BFGS work (paper 002); see ARCHITECTURE.md.
"""
