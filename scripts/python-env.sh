#!/usr/bin/env bash
# Creates BUILD/pyenv, the Python that kiln's model tests and network benchmark use: Debian's
# /usr/bin/python3 (which has python3-torch and python3-torchvision, see install-deps.sh) in a
# venv that sees the system packages, plus onnxruntime from PyPI (not packaged by Debian) and
# what its quantization tools need (onnx, ml_dtypes: bench/int8_bench.py's quantize_static),
# pinned to numpy 1.x: Debian's torch 1.13 is built against it (ml_dtypes 0.6 would pull
# numpy 2, and torch.from_numpy then fails), and pytest for the Python runtime's tests
# (tests/python).
# Python is only for tests, benchmarks and model export, never a dependency of kiln itself.
# Idempotent: when the venv already imports everything it returns at once; a venv made before a
# package joined the list gets that package added. Several callers at once (ctest -j) take turns.
# Prints the venv's python on its last line.
#
#   scripts/python-env.sh build      # -> build/pyenv/bin/python
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
venv="$1/pyenv"
python="$venv/bin/python"
check='import torch, torchvision, onnxruntime, numpy, pytest; from onnxruntime.quantization import quantize_static; torch.from_numpy(numpy.zeros(1))'
packages=(onnxruntime onnx "ml_dtypes<0.6" "numpy<2" pytest)

ready() { [ -x "$python" ] && "$python" -c "$check" 2>/dev/null; }
if ready; then
  echo "$python"
  exit 0
fi
# One maker at a time: the model tests and the Python runtime's tests may start together.
mkdir -p "$1"
exec 9>"$1/pyenv.lock"
flock 9
if ready; then
  echo "$python"
  exit 0
fi
# A working venv that only lacks a package added to the list since it was made.
if [ -x "$python" ] && "$python" -c 'import torch, onnxruntime' 2>/dev/null &&
  "$python" -m pip install --quiet --disable-pip-version-check "${packages[@]}" >&2 && ready; then
  echo "$python"
  exit 0
fi
if ! /usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null; then
  echo "python-env: /usr/bin/python3 lacks torch/torchvision: run scripts/install-deps.sh" >&2
  exit 1
fi
# A half-made venv (an interrupted earlier run) is rebuilt from scratch.
rm -rf "$venv"
/usr/bin/python3 -m venv --system-site-packages "$venv" >&2
"$python" -m pip install --quiet --disable-pip-version-check "${packages[@]}" >&2
"$python" -c "$check"
echo "$python"
