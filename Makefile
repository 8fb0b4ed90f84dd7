# Set-up and checks. `make run` and `make test` create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lit pytest lint irdl bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,torch]'
	touch $(STAMP)

## Parse, verify and print the default example (a two-layer MLP that offloads),
## then plan the tiny LLaMA training step for 60% of its HBM peak and simulate
## the plan beside every other memory policy.
run: $(STAMP)
	$(BIN)/hyperoffload-opt examples/offload_mlp.mlir
	$(BIN)/hyperoffload-opt examples/tiny_llama_train.mlir \
		-p 'hyperoffload-pipeline{hardware=ascend-910c hbm-capacity=632KB}' -o tiny_llama_train.planned.mlir
	$(BIN)/hyperoffload-sim tiny_llama_train.planned.mlir --hardware ascend-910c \
		--hbm-capacity 632KB --policy all --execute --plot timeline.png

## All tests: lit/FileCheck, pytest, then ruff and pyright.
test: lit pytest lint

lit: $(STAMP)
	$(BIN)/lit -v test

pytest: $(STAMP)
	$(BIN)/pytest -q

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/pyright

## Regenerate dialects/hyperoffload.irdl.mlir from the xDSL definition.
irdl: $(STAMP)
	$(BIN)/hyperoffload-export-irdl

## Interpreter throughput, then ours against every peer (docs/benchmarks.md).
bench: $(STAMP)
	$(BIN)/python bench/sim_throughput.py
	$(BIN)/python bench/offload_bench.py --all

clean:
	rm -rf $(VENV) build *.egg-info python/*.egg-info .pytest_cache .ruff_cache
