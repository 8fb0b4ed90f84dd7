# Set-up and checks. `make run` and `make test` create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lit pytest lint irdl bench fuzz clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,torch,milp]'
	touch $(STAMP)

## Parse, verify and print the default example (a two-layer MLP that offloads),
## then the real thing end to end: export the LLaMA-3-8B training step (32
## layers, seq 2048, bf16) from PyTorch, plan it for 32 GB of HBM on the
## Ascend 910C preset (choosing which weights stay in HBM), and simulate the
## plan beside every other memory policy, each allowed the same choice.
run: $(STAMP)
	$(BIN)/hyperoffload-opt examples/offload_mlp.mlir
	mkdir -p build
	$(BIN)/hyperoffload-gen llama3-8b --mode train --layers 32 --seq 2048 --dtype bf16 \
		-o build/llama3_8b_train.mlir
	$(BIN)/hyperoffload-opt build/llama3_8b_train.mlir \
		-p 'hyperoffload-pipeline{hardware=ascend-910c hbm-capacity=32GB place-arguments=true}' \
		-o build/llama3_8b_train.planned.mlir
	$(BIN)/hyperoffload-sim build/llama3_8b_train.planned.mlir --hardware ascend-910c \
		--hbm-capacity 32GB --policy all --resident-arguments --plot timeline.png

## All tests: lit/FileCheck, pytest, then ruff and pyright.
test: lit pytest lint

lit: $(STAMP)
	$(BIN)/lit -v test

pytest: $(STAMP)
	$(BIN)/pytest -q -n auto --dist loadfile --durations=15

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/pyright

## Regenerate dialects/hyperoffload.irdl.mlir from the xDSL definition.
irdl: $(STAMP)
	$(BIN)/hyperoffload-export-irdl

## Interpreter throughput, the calibration table (docs/calibration.md), then
## the default suite: ours against every peer and the seeds' figures
## (docs/benchmarks.md; about 12-15 minutes on 2 cores, and hours more for the
## seeds' 32-layer training step, which the default suite includes:
## `--suite seeds` alone, then bench/seed_claims.py for its table).
bench: $(STAMP)
	$(BIN)/python bench/sim_throughput.py
	$(BIN)/python bench/calibration.py
	$(BIN)/hyperoffload-bench --suite default -o docs/benchmarks

## Fuzzing (not part of `make test`; CI runs a seeded sample in
## test/python/fuzz): 10,000 mutation cases of the inputs of hyperoffload-opt
## and hyperoffload-sim (IR, schedule JSON, hardware TOML), then 1,000 random
## DAGs and transformer-like programs per planning configuration checked bit
## for bit against the unplanned program and for the residency invariants
## (250 through the MLIR ExecutionEngine, a JIT per program). Prints the counts
## by outcome; reproducers go to build/fuzz (docs/fuzzing.md, with the recorded
## run's times). FUZZ_SEED, FUZZ_JOBS, FUZZ_CASES, FUZZ_PROGRAMS override.
FUZZ_SEED ?= 1
FUZZ_JOBS ?= 2
FUZZ_CASES ?= 10000
FUZZ_PROGRAMS ?= 1000
FUZZ_LOWERING ?= 250
fuzz: $(STAMP)
	status=0; \
	$(BIN)/python -m fuzz.run --cases $(FUZZ_CASES) --seed $(FUZZ_SEED) \
		--jobs $(FUZZ_JOBS) --out build/fuzz -q || status=1; \
	$(BIN)/python -m fuzz.differential --cases $(FUZZ_PROGRAMS) \
		--lowering-cases $(FUZZ_LOWERING) --seed $(FUZZ_SEED) --jobs $(FUZZ_JOBS) \
		--out build/fuzz -q || status=1; \
	$(BIN)/python bench/upstream_corpus.py || status=1; \
	exit $$status

clean:
	rm -rf $(VENV) build *.egg-info python/*.egg-info .pytest_cache .ruff_cache
