"""Compliance: verifiable export bundles and their offline verification."""
