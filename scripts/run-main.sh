#!/usr/bin/env bash
# The main job, the loop a kiln user runs on a real network, on this machine alone:
#   1. build kiln; export MobileNetV2 from torchvision to ONNX (random weights, fixed seed,
#      ONNX Runtime's output as the reference; scripts/python-env.sh, tests/models)
#   2. kiln tune the network on the embedded farm (a tracker and one worker per core) with a
#      short budget: the task scheduler spends it on the tasks that cost the most latency
#   3. kiln compile it untuned and tuned; kiln run both on the host
#   4. compile the tuned configs for arm-neon and run that under qemu-aarch64 (correctness)
#   5. check every output against ONNX Runtime's, and time the models and ONNX Runtime in turn
#   6. kiln report: an HTML page of the tuned model (layer times, roofline, tuning curves)
# Re-running resumes the tuning log (nothing is measured twice) and adds to its budget.
#
#   ./scripts/run-main.sh                      # about 5 minutes on 2 cores after the build
#   KILN_MAIN_BUDGET=10m KILN_MAIN_MODEL=resnet18 ./scripts/run-main.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build="${KILN_BUILD_DIR:-build}"
model_name="${KILN_MAIN_MODEL:-mobilenet_v2}"
budget="${KILN_MAIN_BUDGET:-120s}"
threads="${KILN_MAIN_THREADS:-1}"

# Only what this job runs: the kiln binary (with the kernel runner its embedded farm starts)
# and the AArch64 runtime with model_app for the qemu step. The tests build the rest.
./scripts/build.sh kiln kiln_runtime_aarch64
python="$(./scripts/python-env.sh "$build" | tail -n 1)"
"$python" tests/models/export_models.py --out "$build/models" >&2
src="$build/models/$model_name"
work="$build/main-job/$model_name"
mkdir -p "$work"
kiln="$build/tools/kiln"
shape="--input-shape batch=1"

echo "== kiln tune $model_name on the embedded farm (budget $budget)"
"$kiln" tune "$src/model.onnx" $shape --target host --threads "$threads" \
  --time-budget "$budget" --trials 100000 --log "$work/tune.jsonl"

echo "== kiln compile, untuned and tuned"
"$kiln" compile "$src/model.onnx" $shape --target host -o "$work/untuned" > "$work/untuned.txt"
tail -n 4 "$work/untuned.txt"
"$kiln" compile "$src/model.onnx" $shape --target host --records "$work/tune.jsonl" \
  -o "$work/tuned" > "$work/tuned.txt"
tail -n 5 "$work/tuned.txt"

echo "== kiln run on the host ($threads thread(s))"
for v in untuned tuned; do
  "$kiln" run "$work/$v" --input "input=$src/input.npy" --runs 20 --threads "$threads" \
    --output "$work/out-$v" | tee "$work/run-$v.txt"
done

echo "== arm-neon: the tuned configs compiled for AArch64, run under qemu (emulated: not timed)"
"$kiln" compile "$src/model.onnx" $shape --target arm-neon --records "$work/tune.jsonl" \
  -o "$work/arm" > /dev/null
qemu-aarch64 -cpu max -L / "$build/aarch64/examples/model_app" "$work/arm" "$src/input.npy" \
  --repeat 1 --threads 1 --save "$work/arm-output.bin" | tail -n 6
"$python" -c "import numpy as np, sys; np.save(sys.argv[2], np.fromfile(sys.argv[1], np.float32))" \
  "$work/arm-output.bin" "$work/arm-output.npy"

echo "== side by side"
"$python" scripts/main_summary.py --model "$src/model.onnx" --input "$src/input.npy" \
  --reference "$src/ort.npy" --threads "$threads" --kiln-bin "$kiln" \
  --kiln "kiln untuned=$work/out-untuned/logits.npy:$work/untuned" \
  --kiln "kiln tuned ($budget)=$work/out-tuned/logits.npy:$work/tuned" \
  --kiln "kiln tuned, arm-neon (qemu)=$work/arm-output.npy:-"

"$kiln" report "$work/tuned" --threads "$threads" --records "$work/tune.jsonl" \
  -o "$work/report.html"
echo "report: $work/report.html (open it in a browser)"
