# The two commands a fresh machine needs: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# Runs the example task list offline on the simulator, then prints the morning summary.
# Exit 1 (some task not fully passing) is a normal night; anything else fails the target.
demo: $(STAMP)
	@rm -rf runs/demo
	@$(BIN)/harness run tasks/example/tasks.yaml --provider sim --seed 7 --run-dir runs/demo; \
	  rc=$$?; if [ $$rc -gt 1 ]; then exit $$rc; fi
	@$(BIN)/harness summary runs/demo

test: $(STAMP)
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check harness tests bench
	$(BIN)/ruff format --check harness tests bench

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) runs .pytest_cache
