#!/usr/bin/env bash
# Tuning a network for a Raspberry Pi 4 on a farm of one board, as docs/deploy.md walks
# through it ("Tuning for a Raspberry Pi 4"). Run as it is, qemu stands in for the Pi
# (`qemu-aarch64 -cpu cortex-a72`, the Pi 4's core); with a real Pi, BOARD_RUN runs the board's
# commands there (BOARD_RUN="ssh pi@raspberrypi.local", BOARD_DIR=a folder on the Pi,
# TRACKER_HOST=this machine's address as the Pi reaches it).
#
#   examples/tune_rpi4.sh MODEL.onnx INPUT.npy [TRIALS]
#
# BUILD (default build/) holds this build of kiln and its AArch64 cross build; WORK (default
# a new temporary folder) receives the token, the logs, the tuning log and the artifact.
set -euo pipefail
model=${1:?usage: tune_rpi4.sh MODEL.onnx INPUT.npy [TRIALS]}
input=${2:?usage: tune_rpi4.sh MODEL.onnx INPUT.npy [TRIALS]}
trials=${3:-64}
build=${BUILD:-build}
work=${WORK:-$(mktemp -d)}
port=${PORT:-9190}
tracker_host=${TRACKER_HOST:-127.0.0.1}
board_run=${BOARD_RUN:-qemu-aarch64 -cpu cortex-a72}
board_dir=${BOARD_DIR:-$work/board}
kiln="$build/tools/kiln"
mkdir -p "$work"

# 1. This machine: a farm token and the tracker (loopback unless --bind says otherwise).
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/farm.token"
"$kiln" tracker --port "$port" --token-file "$work/farm.token" > "$work/tracker.log" 2>&1 &
pids=$!
trap 'kill $pids 2>/dev/null || true' EXIT

# 2. The board: two binaries and the token in one folder (on a Pi: scp them there). The
#    worker runs each job in kiln-kernel-runner beside it; under qemu, that child needs qemu
#    too (--sandbox-prefix); on the Pi it runs natively.
mkdir -p "$board_dir"
cp "$build/aarch64/rpc/farm/kiln-worker" "$build/aarch64/runtime/kiln-kernel-runner" \
   "$work/farm.token" "$board_dir/"
prefix=()
[[ $board_run == qemu-* ]] && prefix=(--sandbox-prefix "$board_run")
$board_run "$board_dir/kiln-worker" --print-board   # names the core and the --target: rpi4's
$board_run "$board_dir/kiln-worker" --tracker "$tracker_host:$port" --key rpi4 \
    --token-file "$board_dir/farm.token" "${prefix[@]}" > "$work/worker.log" 2>&1 &
pids="$pids $!"
farm=(--farm "127.0.0.1:$port" --token-file "$work/farm.token")
for _ in $(seq 100); do   # until the board has joined
  "$kiln" farm status "${farm[@]}" 2>/dev/null | grep -q rpi4 && break
  sleep 0.3
done

# 3. Tune for the Pi's profile on the board, compile with the records, run on the board.
"$kiln" tune "$model" --target rpi4 --input-shape batch=1 "${farm[@]}" --key rpi4 \
    --trials "$trials" --log "$work/rpi4.jsonl"
"$kiln" compile "$model" --target rpi4 --input-shape batch=1 --records "$work/rpi4.jsonl" \
    -o "$work/out"
"$kiln" run "$work/out" --input "input=$input" "${farm[@]}" --key rpi4 --runs 3
echo "tuned artifact: $work/out (model.so, model.params); tuning log: $work/rpi4.jsonl"
