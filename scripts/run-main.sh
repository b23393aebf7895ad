#!/usr/bin/env bash
# The main job: build kiln, then compile, run and check a dense, a conv2d and an elementwise
# kernel for the host and for arm-neon (under qemu-aarch64), printing time and GFLOPS.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
"${KILN_BUILD_DIR:-build}"/tools/kiln demo --target host --target arm-neon "$@"
