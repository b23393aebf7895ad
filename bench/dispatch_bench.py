#!/usr/bin/env python3
"""What a step costs: networks of many tiny steps, kiln against ONNX Runtime.

Models of hundreds of tiny layers (ViT-family towers, unrolled RNNs, batch-1 text models) are
bound by what each step costs beyond its arithmetic: the call, the argument setup and, with a
second thread, the hand-off of a parallel region. This builds chains of N tiny layers in ONNX
(the layer kinds below), compiles each with `kiln compile --target host`, and times kiln
(examples/model_app in a fresh process) and ONNX Runtime (sequential, the same thread count)
on the same file, taking turns. The cost per step is (t(N) - t(1)) / (N - 1): the arithmetic
of one tiny layer is in it too, the same for both engines.

Layer kinds:
  gemv     y = x @ W_i, x [1, 32], W_i [32, 32]: a kernel per layer, nothing to fuse.
  eltwise  y = sigmoid(x * a_i + b_i) on [1, 64]: what an elementwise fusion can merge.
  wide     y = relu(x @ W_i), x [8, 256], W_i [256, 256]: big enough that kiln may split it
           across threads, so at 2 threads each step is a parallel region.

Run with the venv of scripts/python-env.sh after `ninja -C build kiln model_app`:
  build/pyenv/bin/python bench/dispatch_bench.py [--steps 400] [--threads 1 2] [--rounds 5]
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RNG = np.random.default_rng(7)


def layer_nodes(kind, i, x, y, inits):
    """The nodes of layer i of `kind` from value x to value y, adding its constants to inits."""
    def const(name, shape, scale):
        inits.append(numpy_helper.from_array(
            (RNG.standard_normal(shape) * scale).astype(np.float32), name))
        return name
    if kind == "gemv":
        return [helper.make_node("MatMul", [x, const(f"w{i}", (32, 32), 0.17)], [y])]
    if kind == "eltwise":
        a, b = const(f"a{i}", (1, 64), 1.0), const(f"b{i}", (1, 64), 0.1)
        return [helper.make_node("Mul", [x, a], [f"m{i}"]),
                helper.make_node("Add", [f"m{i}", b], [f"s{i}"]),
                helper.make_node("Sigmoid", [f"s{i}"], [y])]
    w = const(f"w{i}", (256, 256), 0.06)
    return [helper.make_node("MatMul", [x, w], [f"p{i}"]), helper.make_node("Relu", [f"p{i}"], [y])]


INPUT_SHAPE = {"gemv": [1, 32], "eltwise": [1, 64], "wide": [8, 256]}


def chain_model(kind, steps):
    nodes, inits = [], []
    for i in range(steps):
        nodes += layer_nodes(kind, i, "x" if i == 0 else f"h{i}", "y" if i == steps - 1 else
                             f"h{i + 1}", inits)
    shape = INPUT_SHAPE[kind]
    graph = helper.make_graph(nodes, f"{kind}{steps}",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def kiln_ms(app, out_dir, x_path, threads, runs):
    text = subprocess.run([app, out_dir, x_path, "--repeat", str(runs), "--threads",
                           str(threads)], check=True, capture_output=True, text=True).stdout
    return float(re.search(r"median ([\d.]+) ms", text).group(1))


def ort_ms(ort, path, x, threads, runs):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads, opts.inter_op_num_threads = threads, 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    s = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    for _ in range(5):
        s.run(None, {"x": x})
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        s.run(None, {"x": x})
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--kinds", nargs="+", default=["gemv", "eltwise", "wide"])
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=200)
    args = ap.parse_args()
    import onnxruntime as ort
    kiln = os.path.join(args.build, "tools", "kiln")
    app = os.path.join(args.build, "examples", "model_app")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.kinds:
            x = RNG.standard_normal(INPUT_SHAPE[kind]).astype(np.float32)
            x_path = os.path.join(tmp, f"{kind}.npy")
            np.save(x_path, x)
            paths = {}
            for n in (1, args.steps):
                onnx_path = os.path.join(tmp, f"{kind}{n}.onnx")
                onnx.save(chain_model(kind, n), onnx_path)
                out = os.path.join(tmp, f"{kind}{n}")
                subprocess.run([kiln, "compile", onnx_path, "--target", "host", "-o", out],
                               check=True, stdout=subprocess.DEVNULL)
                paths[n] = (onnx_path, out)
            for t in args.threads:
                got = {(e, n): [] for e in ("kiln", "ORT") for n in paths}
                for _ in range(args.rounds):
                    for n, (onnx_path, out) in paths.items():
                        got[("kiln", n)].append(kiln_ms(app, out, x_path, t, args.runs))
                        got[("ORT", n)].append(ort_ms(ort, onnx_path, x, t, args.runs))
                med = {k: statistics.median(v) for k, v in got.items()}
                per_step = {e: (med[(e, args.steps)] - med[(e, 1)]) * 1e3 / (args.steps - 1)
                            for e in ("kiln", "ORT")}
                rows.append((kind, t, med, per_step))
                print(f"{kind} {t}T: kiln {per_step['kiln']:.3f} us/step, "
                      f"ORT {per_step['ORT']:.3f} us/step", flush=True)
    n = args.steps
    print(f"\n{n}-layer chains against 1-layer ones; medians of {args.rounds} rounds of "
          f"{args.runs} runs\n")
    print(f"| layers | threads | kiln ms ({n} / 1) | ORT ms ({n} / 1) | kiln us per step | "
          "ORT us per step | kiln / ORT |")
    print("|---|---|---|---|---|---|---|")
    for kind, t, med, per in rows:
        print(f"| {kind} | {t} | {med[('kiln', n)]:.3f} / {med[('kiln', 1)]:.4f} | "
              f"{med[('ORT', n)]:.3f} / {med[('ORT', 1)]:.4f} | {per['kiln']:.3f} | "
              f"{per['ORT']:.3f} | {per['kiln'] / per['ORT']:.2f} |")


if __name__ == "__main__":
    main()
