"""Compiled helpers (Cython) for hot steps that no Arrow or DataFusion kernel does.

setup.py compiles every ``*.pyx`` here at install. A module stays only if it was measured
against the best pure-Arrow version and paid for itself; BENCHMARKS.md gives the figures.
"""
