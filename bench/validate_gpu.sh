#!/usr/bin/env bash
# The simulator against a real GPU (an NVIDIA H200 is the target), in one go:
# install the project, calibrate the device into presets/h200-measured.toml,
# then compare hyperoffload-sim with hyperoffload-run (hyperoffload-validate)
# on three programs, unplanned and planned at 80% and 60% of their modelled
# peak:
#
#   1. the tiny LLaMA training step (examples/tiny_llama_train.mlir);
#   2. a 2-layer LLaMA-3-8B training step, seq 2048, bf16;
#   3. a 2-layer LLaMA-65B-shape decode step, 4096 cached positions, bf16.
#
# Everything is written under $OUT (steps.log, one .out/.err per step, the
# preset, the exported programs, one .md and one .json table per program, and
# validation.md with all of them); every step has a timeout and the whole
# run stays within $BUDGET seconds (default 570: under 10 minutes).
#
#   OUT=/tmp/out bash bench/validate_gpu.sh
#   DEVICE=cpu SMALL=1 OUT=/tmp/out bash bench/validate_gpu.sh   # the CPU analogue, tiny sizes
#
# Exit status: 0 when every step succeeded, 1 otherwise (the other steps still run).
set -uo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-$PWD/validation-out}
DEVICE=${DEVICE:-cuda}
SMALL=${SMALL:-0}
BUDGET=${BUDGET:-570}
PRESET=${PRESET:-presets/h200-measured.toml}
[ "$DEVICE" = cuda ] || PRESET=$OUT/$DEVICE-measured.toml
mkdir -p "$OUT/programs" "$(dirname "$PRESET")"
: >"$OUT/steps.log"
failed=0

# step NAME LIMIT COMMAND...: run COMMAND with a timeout (LIMIT seconds, or
# what is left of the budget), stdout to $OUT/NAME.out, stderr to $OUT/NAME.err.
step() {
  local name=$1 limit=$2
  shift 2
  local left=$((BUDGET - SECONDS))
  if [ "$left" -lt 20 ]; then
    echo "== $name: skipped, ${left} s of the budget left" | tee -a "$OUT/steps.log"
    failed=1
    return 1
  fi
  [ "$limit" -le "$left" ] || limit=$left
  echo "== $name (limit ${limit} s): $*" | tee -a "$OUT/steps.log"
  timeout --kill-after=10 "$limit" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
  local rc=$?
  echo "   $name: exit $rc at $SECONDS s" | tee -a "$OUT/steps.log"
  if [ "$rc" -ne 0 ]; then
    tail -n 5 "$OUT/$name.err" | sed 's/^/   | /' | tee -a "$OUT/steps.log"
    failed=1
  fi
  return "$rc"
}

{
  date -u +"%Y-%m-%dT%H:%M:%SZ"
  uname -a
  nvidia-smi --query-gpu=name,memory.total,driver_version,pcie.link.gen.current,pcie.link.width.current \
    --format=csv 2>/dev/null || echo "nvidia-smi: not available"
  python3 --version
} >"$OUT/env.txt" 2>&1

# 1. install (an existing .venv with the tools is only refreshed: no network needed)
if [ -x .venv/bin/hyperoffload-validate ] && .venv/bin/python -c "import torch" 2>/dev/null; then
  step install 120 .venv/bin/python -m pip install --quiet --no-deps --no-build-isolation -e .
else
  step install 300 bash -c "python3 -m venv .venv && .venv/bin/pip install --quiet -e '.[dev,torch,milp]'"
fi
BIN=$PWD/.venv/bin
step torch-info 60 "$BIN/python" -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available(), torch.cuda.get_device_name() if torch.cuda.is_available() else '-')"
cat "$OUT/torch-info.out" >>"$OUT/env.txt" 2>/dev/null

# 2. calibrate the device
QUICK=()
[ "$SMALL" = 1 ] && QUICK=(--quick)
if step calibrate 150 "$BIN/hyperoffload-calibrate" --device "$DEVICE" ${QUICK[@]+"${QUICK[@]}"} -o "$PRESET"; then
  [ "$(dirname "$PRESET")" -ef "$OUT" ] || cp "$PRESET" "$OUT/"
fi

# 3. the programs (small: tiny-llama shapes in bf16, the same modes)
TINY=examples/tiny_llama_train.mlir
if [ "$SMALL" = 1 ]; then
  TRAIN=(tiny-llama --mode train --dtype bf16)
  DECODE=(tiny-llama --mode decode --kv-len 64 --dtype bf16)
else
  TRAIN=(llama3-8b --mode train --layers 2 --seq 2048 --dtype bf16 --tier host)
  DECODE=(llama-65b --mode decode --layers 2 --kv-len 4096 --dtype bf16 --tier host)
fi
step export-train 120 "$BIN/hyperoffload-gen" "${TRAIN[@]}" -o "$OUT/programs/train.mlir"
step export-decode 120 "$BIN/hyperoffload-gen" "${DECODE[@]}" -o "$OUT/programs/decode.mlir"

# 4. modelled against measured: the cheapest first, so that a slow one costs least
validate() {  # validate NAME PROGRAM LIMIT [extra options]
  local name=$1 program=$2 limit=$3
  shift 3
  [ -f "$program" ] || { echo "== validate-$name: no $program" | tee -a "$OUT/steps.log"; failed=1; return; }
  [ -f "$PRESET" ] || { echo "== validate-$name: no preset" | tee -a "$OUT/steps.log"; failed=1; return; }
  step "validate-$name" "$limit" "$BIN/hyperoffload-validate" "$program" --device "$DEVICE" \
    --hardware "$PRESET" --capacities 0.8,0.6 --json-out "$OUT/validate-$name.json" "$@"
}
validate tiny-train "$TINY" 120
validate decode "$OUT/programs/decode.mlir" 180 --fast-inputs
validate train "$OUT/programs/train.mlir" 240 --fast-inputs

# 5. one document with every table
{
  echo "# Modelled against measured on $DEVICE"
  echo
  echo '```'
  cat "$OUT/env.txt"
  echo '```'
  for name in tiny-train decode train; do
    echo
    if [ -s "$OUT/validate-$name.out" ]; then
      cat "$OUT/validate-$name.out"
    else
      echo "validate-$name: no table (see validate-$name.err)"
    fi
  done
  echo
  echo "Steps:"
  echo '```'
  cat "$OUT/steps.log"
  echo '```'
} >"$OUT/validation.md"
echo "wrote $OUT/validation.md in $SECONDS s (failed: $failed)"
exit "$failed"
