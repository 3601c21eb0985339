# Two commands: `make demo` (set up + run the main job) and `make test` (set up + run every test).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
STORE ?= data/store

.PHONY: demo test lint typecheck unit browsers bench clean setup

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,spark]"
	touch $(STAMP)

# Debian's Chromium and ChromeDriver for the real-browser tests (never downloaded by a tool).
browsers:
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then \
		SUDO=$$( [ "$$(id -u)" -eq 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium chromium-driver; \
	fi

demo: $(STAMP)
	$(BIN)/roads simulate --shoes 12 --tables 4 --seed 2026 --out $(STORE)
	$(BIN)/roads summary --store $(STORE)

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest -q

test: $(STAMP) browsers lint typecheck unit

bench: $(STAMP)
	$(BIN)/python -m benchmarks.odds
	$(BIN)/python -m benchmarks.simulate
	$(BIN)/python -m benchmarks.roads
	$(BIN)/python -m benchmarks.journal
	$(BIN)/python -m benchmarks.ingest
	$(BIN)/python -m benchmarks.stats
	$(BIN)/python -m benchmarks.scale

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
