# Two commands: `make demo` (set up + run the main job) and `make test` (set up + run every test).
# Neither reads anything outside the repository: the compiled-kernel cache is .cache/roads.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
STORE ?= data/store
export ROADS_CACHE_DIR := $(CURDIR)/.cache/roads

.PHONY: demo test lint typecheck unit system-packages prepare bench clean setup

setup: $(STAMP)

$(STAMP): pyproject.toml
	@PYTHON=$(PYTHON) .ci/system-packages venv
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,spark]"
	touch $(STAMP)

# Compile every kernel once into $(ROADS_CACHE_DIR) (a few seconds when nothing changed), so
# that no command, test or demo table pauses to compile.
prepare: $(STAMP)
	$(BIN)/roads prepare

# What only the tests need from Debian: the browser, fonts and poppler for the browser and PDF
# tests, a Java runtime for the Spark tests. Installed when missing; a held apt lock is waited for.
system-packages:
	@.ci/system-packages tests

# A live dashboard of simulated tables on the local store (Ctrl-C stops it).
PORT ?= 8050
demo: $(STAMP) prepare
	$(BIN)/roads serve --store $(STORE) --demo --demo-tables 6 --pace 3 --port $(PORT)

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP) prepare
	$(BIN)/pytest -q

test: $(STAMP) system-packages lint typecheck prepare unit

bench: $(STAMP) prepare
	$(BIN)/python -m benchmarks.startup
	$(BIN)/python -m benchmarks.odds
	$(BIN)/python -m benchmarks.simulate
	$(BIN)/python -m benchmarks.roads
	$(BIN)/python -m benchmarks.journal
	$(BIN)/python -m benchmarks.ingest
	$(BIN)/python -m benchmarks.stats
	$(BIN)/python -m benchmarks.scale
	$(BIN)/python -m benchmarks.export
	$(BIN)/python -m benchmarks.screens
	$(BIN)/python -m benchmarks.security
	$(BIN)/python -m benchmarks.store
	$(BIN)/python -m benchmarks.pages
	$(BIN)/python -m benchmarks.floor
	$(BIN)/python -m benchmarks.floor --first-page 3
	$(BIN)/python -m benchmarks.replace

clean:
	rm -rf $(VENV) .cache .mypy_cache .ruff_cache .pytest_cache
