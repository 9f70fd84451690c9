# Two commands set everything up on a fresh machine:
#   make demo   opens the TUI on a scratch copy of sample_vault, on its Review screen
#   make test   runs the linters and the tests
# Both create the virtual environment in .venv on first use.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_VAULT := .scratch/demo-vault
BENCH_N ?= 1000

.PHONY: demo test lint format bench bench-smoke clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The TUI runs inside the demo folder, so what Preview exports lands there.
demo: $(STAMP)
	rm -rf $(DEMO_VAULT)
	mkdir -p $(dir $(DEMO_VAULT))
	cp -R sample_vault $(DEMO_VAULT)
	$(BIN)/memoryctl init $(DEMO_VAULT)
	cd $(DEMO_VAULT) && $(CURDIR)/$(BIN)/memoryctl tui . --screen review

test: $(STAMP)
	$(BIN)/ruff check memoryctl tests bench
	$(BIN)/ruff format --check memoryctl tests bench
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check memoryctl tests bench

format: $(STAMP)
	$(BIN)/ruff format memoryctl tests bench
	$(BIN)/ruff check --fix memoryctl tests bench

# Benchmarks print figures as JSON; they never fail on a figure.
bench: $(STAMP)
	$(BIN)/python -m bench.run --n $(BENCH_N)

bench-smoke: $(STAMP)
	$(BIN)/python -m bench.run --n 1000

clean:
	rm -rf $(VENV) .scratch .pytest_cache .ruff_cache .hypothesis
