#!/usr/bin/env bash
# Builds kiln and runs its test suite: everything but the `slow` label (pass -L slow to run
# only those, or any other ctest arguments).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
args=("$@")
if [ ${#args[@]} -eq 0 ]; then args=(-LE slow); fi
ctest --test-dir "${KILN_BUILD_DIR:-build}" --output-on-failure -j"$(nproc)" "${args[@]}"
