"""Baccarat Roads: shoe engine, exact odds, canonical coup schema, roads and statistics."""

__version__ = "0.1.0"
