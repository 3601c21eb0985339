"""The same per-shoe work on one machine or on Apache Spark (``pip install ".[spark]"``)."""
