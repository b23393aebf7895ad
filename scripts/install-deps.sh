#!/usr/bin/env bash
# Installs every build, test and benchmark dependency of kiln from Debian's packages, plus the
# arm64 (multiarch) gRPC and protobuf libraries that the AArch64 farm worker is cross-built
# against. Idempotent: when everything is already installed it only checks and returns (~1 s).
set -euo pipefail

PACKAGES=(
  g++ cmake ninja-build pkg-config ccache  # g++: the host compiler (a bare Debian has none)
  llvm-19-dev clang-19 lld-19 liblld-19-dev libzstd-dev
  qemu-user libc6-dev-arm64-cross gcc-aarch64-linux-gnu g++-aarch64-linux-gnu
  libfmt-dev nlohmann-json3-dev libgtest-dev libgmock-dev googletest libbenchmark-dev libcli11-dev
  libdnnl-dev libopenblas-dev
  libxgboost-dev librsvg2-bin zlib1g-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libonnx-dev libonnx-testdata
  chromium-headless-shell  # kiln report's page rendered in a real browser by the tests
  libclang-rt-19-dev  # libFuzzer and sanitizer runtimes for clang-19 (the ONNX loader fuzzer)
  # Model export for tests/models and bench/network_bench.py (torch comes with torchvision);
  # onnxruntime is not packaged: scripts/python-env.sh puts it in a venv in the build folder.
  python3-torchvision python3-venv
)
# Debian multiarch: the board-side kiln-worker links these, code generation stays on the host's
# protoc and grpc_cpp_plugin (see TOOLCHAIN.md). Once libc6:arm64 is in, qemu-aarch64 must be run
# with `-L /` (aarch64_qemu_prefix() in runtime/process/kernel_exec.h picks it).
ARM64_PACKAGES=(libgrpc++-dev:arm64 libprotobuf-dev:arm64)

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

missing=()
for p in "${PACKAGES[@]}" "${ARM64_PACKAGES[@]}"; do
  installed "$p" || missing+=("$p")
done
need_arch=0
if ! dpkg --print-foreign-architectures | grep -qx arm64; then need_arch=1; fi

if [ ${#missing[@]} -eq 0 ] && [ $need_arch -eq 0 ]; then
  echo "install-deps: all $((${#PACKAGES[@]} + ${#ARM64_PACKAGES[@]})) packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
if [ $need_arch -eq 1 ]; then
  echo "install-deps: adding the arm64 architecture (dpkg multiarch)"
  $SUDO dpkg --add-architecture arm64
fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
