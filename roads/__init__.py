"""Baccarat Roads: shoe engine, exact odds, canonical coup schema, roads and statistics."""

__version__ = "0.1.0"
__all__ = ["__version__"]

import os

from roads import cache  # (after __version__, which it reads)

# The compiled kernels' OpenMP threads sleep between parallel regions instead of spinning:
# spinning took the core an ingest's part writers and polars were working on (an ingest's
# CPU time fell by about a tenth). A value the user set is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# Before any kernel module imports numba: this package's compiled kernels go to one cache.
cache.configure()
