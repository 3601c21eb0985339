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

# Debian's Chromium and ChromeDriver for the real-browser tests (never downloaded by a tool),
# the Noto CJK fonts the Chinese screens need, DejaVu for the PDF report and poppler
# (pdftoppm, pdftotext) for the tests that read the PDF back.
BROWSER_PACKAGES := chromium chromium-driver fonts-noto-cjk fonts-noto-core fonts-dejavu-core \
	poppler-utils
browsers:
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null \
			|| ! fc-list | grep -q "Noto Sans CJK" || ! command -v pdftoppm >/dev/null; then \
		SUDO=$$( [ "$$(id -u)" -eq 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(BROWSER_PACKAGES); \
	fi

# A live dashboard of simulated tables on the local store (Ctrl-C stops it).
PORT ?= 8050
demo: $(STAMP)
	$(BIN)/roads serve --store $(STORE) --demo --demo-tables 6 --pace 3 --port $(PORT)

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
	$(BIN)/python -m benchmarks.export
	$(BIN)/python -m benchmarks.screens
	$(BIN)/python -m benchmarks.security

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
