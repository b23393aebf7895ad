#!/usr/bin/env bash
# Installs every build, test and benchmark dependency of kiln from Debian's packages.
# Idempotent: when every package is already installed it only checks and returns (~1 s).
set -euo pipefail

PACKAGES=(
  cmake ninja-build pkg-config ccache
  llvm-19-dev clang-19 lld-19 liblld-19-dev libzstd-dev
  qemu-user libc6-dev-arm64-cross gcc-aarch64-linux-gnu g++-aarch64-linux-gnu
  libfmt-dev nlohmann-json3-dev libgtest-dev googletest libbenchmark-dev libcli11-dev
  libdnnl-dev libopenblas-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
