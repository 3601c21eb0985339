"""Baccarat Roads: shoe engine, exact odds, canonical coup schema, roads and statistics."""

__version__ = "0.1.0"
__all__ = ["__version__"]

from roads import cache  # (after __version__, which it reads)

# Before any kernel module imports numba: this package's compiled kernels go to one cache.
cache.configure()
