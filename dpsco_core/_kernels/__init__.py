"""Compiled kernels (built from ``src_cython/*.pyx`` by ``setup.py``). Not a public API."""
