#!/usr/bin/env python3
"""Exports the real models kiln's model tests and network benchmark use, with references.

For each model (torchvision's ResNet-18, MobileNetV2 and MobileNetV3-small, random weights from
a fixed seed) it
writes into OUT/NAME/:
  model.onnx   opset 13, input "input" [batch, 3, 224, 224], output "logits" [batch, 1000].
               The batch dimension is symbolic and named "batch", as in models from the wild:
               kiln binds it at compile time (`--input-shape batch=1`).
  input.npy    one fixed input, float32 [1, 3, 224, 224]
  ort.npy      ONNX Runtime's output for it (CPU provider), the reference kiln is judged by
  model.pt     the same network and weights traced with TorchScript (PyTorch's column of
               bench/network_bench.py: torch 1.13 cannot load ONNX)
and for ResNet-18 and MobileNetV2 their int8 forms, as ONNX Runtime's quantize_static writes
them (per-channel int8 weights, uint8 activations, min-max calibrated on input.npy and 8
normal samples of a fixed seed):
  model.int8.onnx, ort.qdq.npy, qdq.json            the QDQ form, ORT's output, the logits'
  model.qop.onnx, ort.qoperator.npy, qoperator.json  scale; the same for the QOperator form
and OUT/done last (written only when every file is there, naming what made them), so a second
call with the same versions returns at once.

Random weights alone are not a fair test: with torchvision's init, MobileNetV2 in eval mode
(running mean 0, var 1) shrinks activations layer after layer to outputs of ~1e-9, where any
answer is "close". So BatchNorm running statistics are first calibrated on a few random
batches (train mode, cumulative average) before switching to eval: every normalised
activation is then O(1) and the logits are O(0.1-1).

Runs with Debian's torch (torch 1.13) and onnxruntime from PyPI: scripts/python-env.sh.
"""
import argparse
import os
import shutil
import sys
import tempfile

import numpy as np
import torch
import torchvision

MODELS = {
    "resnet18": torchvision.models.resnet18,
    "mobilenet_v2": torchvision.models.mobilenet_v2,
    "mobilenet_v3_small": torchvision.models.mobilenet_v3_small,
}
# Exported only when named (`--models resnet50`): the benchmarks' larger networks, which the
# tests never load.
BENCH_ONLY = {
    "resnet50": torchvision.models.resnet50,
}
OPSET = 13
SEED = 20261123


def calibrate_batch_norm(model, batches=4, batch_size=8):
    """Running mean/var from random inputs, so eval-mode activations stay O(1)."""
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None  # cumulative average over the calibration batches
    model.train()
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn(batch_size, 3, 224, 224))
    model.eval()


def widen_classifier(model):
    """torchvision initialises MobileNetV3's classifier with N(0, 0.01): with random features
    its logits are ~0.05, too small to judge. Weights of variance 1/fan_in keep them O(1)."""
    for m in model.modules():
        if isinstance(m, torch.nn.Linear):
            torch.nn.init.normal_(m.weight, 0.0, m.in_features ** -0.5)


QUANTIZED = ("resnet18", "mobilenet_v2")  # their int8 forms too, for the int8 tests
INT8_FORMS = {"qdq": "model.int8.onnx", "qoperator": "model.qop.onnx"}


def quantize(model_dir, form, calibration=8):
    """The int8 model of `form` beside model.onnx, with ONNX Runtime's output for input.npy
    (ort.FORM.npy) and the scale of the logits' last DequantizeLinear (FORM.json). Cached."""
    import json

    import onnx
    import onnxruntime as ort
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)
    out = os.path.join(model_dir, INT8_FORMS[form])
    if not os.path.exists(out):
        x = np.load(os.path.join(model_dir, "input.npy"))
        rng = np.random.default_rng(7)
        batches = [x] + [rng.standard_normal(x.shape).astype(np.float32)
                         for _ in range(calibration)]

        class Reader(CalibrationDataReader):
            def __init__(self):
                self.it = iter(batches)

            def get_next(self):
                b = next(self.it, None)
                return None if b is None else {"input": b}

        tmp = out + ".tmp"
        quantize_static(os.path.join(model_dir, "model.onnx"), tmp, Reader(),
                        quant_format=QuantFormat.QDQ if form == "qdq" else QuantFormat.QOperator,
                        per_channel=True, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8)
        os.replace(tmp, out)  # a killed run leaves no half-written model
    x = np.load(os.path.join(model_dir, "input.npy"))
    (y,) = ort.InferenceSession(out, providers=["CPUExecutionProvider"]).run(None, {"input": x})
    np.save(os.path.join(model_dir, f"ort.{form}.npy"), y)
    m = onnx.load(out)
    inits = {i.name: i for i in m.graph.initializer}
    last = [n for n in m.graph.node if n.op_type == "DequantizeLinear"][-1]
    scale = float(onnx.numpy_helper.to_array(inits[last.input[1]]).reshape(-1)[0])
    with open(os.path.join(model_dir, f"{form}.json"), "w") as f:
        json.dump({"logits_scale": scale}, f)
    return out


def export(name, out_dir):
    import onnxruntime as ort

    torch.manual_seed(SEED)
    model = {**MODELS, **BENCH_ONLY}[name]()
    if name == "mobilenet_v3_small":
        widen_classifier(model)
    calibrate_batch_norm(model)
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(SEED + 1))
    # Written into a temporary folder and renamed, so a killed export leaves nothing half-done.
    os.makedirs(os.path.dirname(out_dir), exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=name + ".", dir=os.path.dirname(out_dir))
    onnx_path = os.path.join(tmp, "model.onnx")
    torch.onnx.export(model, x, onnx_path, opset_version=OPSET, input_names=["input"],
                      output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
    session = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    (ref,) = session.run(None, {"input": x.numpy()})
    with torch.no_grad():
        torch_out = model(x).numpy()
    drift = float(np.abs(ref - torch_out).max())
    if drift > 1e-3 * max(1.0, float(np.abs(ref).max())):
        sys.exit(f"export_models: {name}: ONNX Runtime and torch disagree by {drift}")
    with torch.no_grad():
        torch.jit.trace(model, x).save(os.path.join(tmp, "model.pt"))
    np.save(os.path.join(tmp, "input.npy"), x.numpy())
    np.save(os.path.join(tmp, "ort.npy"), ref)
    if name in QUANTIZED:
        for form in INT8_FORMS:
            quantize(tmp, form)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.rename(tmp, out_dir)
    print(f"export_models: {name}: logits max |x| {np.abs(ref).max():.3g}, "
          f"torch vs ORT {drift:.2g}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="cache folder (one subfolder per model)")
    parser.add_argument("--force", action="store_true", help="export again even when present")
    parser.add_argument("--models", nargs="+", choices=sorted(BENCH_ONLY),
                        help="export only these benchmark models (each once) instead of the "
                             "tests' set")
    args = parser.parse_args()
    if args.models:
        for name in args.models:
            out_dir = os.path.join(args.out, name)
            if args.force or not os.path.exists(os.path.join(out_dir, "ort.npy")):
                export(name, out_dir)
        return
    done = os.path.join(args.out, "done")
    stamp = (f"torch {torch.__version__} torchvision {torchvision.__version__} opset {OPSET} "
             f"seed {SEED} models {' '.join(MODELS)} (v3 classifier widened) files model.onnx input.npy ort.npy model.pt "
             f"int8 {' '.join(INT8_FORMS)} of {' '.join(QUANTIZED)}\n")
    if os.path.exists(done) and open(done).read() == stamp and not args.force:
        print(f"export_models: {args.out} is up to date")
        return
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    for name in MODELS:
        export(name, os.path.join(args.out, name))
    with open(done, "w") as f:
        f.write(stamp)


if __name__ == "__main__":
    main()
