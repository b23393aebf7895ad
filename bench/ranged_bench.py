#!/usr/bin/env python3
"""Ranged-batch benchmark: one artifact compiled with `kiln compile --range batch=1..16`, run at
each of several batch sizes, against (a) a static compile at that exact size and (b) ONNX
Runtime on the same dynamic ONNX file at that size; plus artifact size and compile time against
one static compile.

Prints markdown tables (what bench/README.md shows): per model and thread count, the latency of
each engine at each size (median over rounds of the median of --runs runs; the engines take
turns at each size, kiln in fresh `kiln run` processes, ORT in this one), the ratios, their
geometric means over the sizes and the worst size; then compile time and artifact size.

Models: torchvision's ResNet-18 and MobileNetV2 (tests/models/export_models.py), the small
Hugging Face BERT of hf_zoo_bench (batch ranged, 32 tokens), and a 4-layer 1024-wide MLP built
here (the case batch classes are for).

  nice ninja -C build -j2 kiln
  build/pyenv/bin/python bench/ranged_bench.py [--models resnet18 bert mlp] [--threads 1 2]
"""
import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def mlp_model(path):
    """y = relu(... relu(x W0) ... W3), x [batch, 1024]: one sample is four GEMVs."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    nodes, weights, h = [], [], "x"
    for i in range(4):
        w = (rng.standard_normal((1024, 1024)) * 0.03).astype(np.float32)
        weights.append(numpy_helper.from_array(w, "w%d" % i))
        nodes += [helper.make_node("MatMul", [h, "w%d" % i], ["m%d" % i]),
                  helper.make_node("Relu", ["m%d" % i], ["r%d" % i])]
        h = "r%d" % i
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 1024])],
        [helper.make_tensor_value_info(h, TensorProto.FLOAT, ["batch", 1024])], weights)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def model_spec(args, name, tmp):
    """(onnx path, extra compile flags, inputs(batch) -> {name: array})."""
    rng = np.random.default_rng(1)
    if name in ("resnet18", "mobilenet_v2"):
        cache = os.path.join(args.build, "models")
        run([sys.executable, os.path.join(ROOT, "tests", "models", "export_models.py"),
             "--out", cache])
        return (os.path.join(cache, name, "model.onnx"), [],
                lambda b: {"input": rng.standard_normal((b, 3, 224, 224)).astype(np.float32)})
    if name == "bert":
        path = os.path.join(args.build, "hf_zoo", "bert", "model.onnx")
        if not os.path.exists(path):
            sys.exit("bert: run bench/hf_zoo_bench.py first (it exports %s)" % path)
        tokens = 32
        return (path, ["--input-shape", "seq=%d" % tokens],
                lambda b: {"input_ids": rng.integers(0, 1000, (b, tokens)).astype(np.int64),
                           "attention_mask": np.ones((b, tokens), np.int64),
                           "token_type_ids": np.zeros((b, tokens), np.int64)})
    if name == "mlp":
        path = os.path.join(tmp, "mlp.onnx")
        mlp_model(path)
        return path, [], lambda b: {"x": rng.standard_normal((b, 1024)).astype(np.float32)}
    sys.exit("unknown model %s" % name)


def compile_kiln(args, onnx, flags, out):
    t0 = time.perf_counter()
    run([os.path.join(args.build, "tools", "kiln"), "compile", onnx, "--target", args.target,
         "-o", out] + flags)
    seconds = time.perf_counter() - t0
    size = sum(os.path.getsize(os.path.join(out, f)) for f in ("model.so", "model.params"))
    return seconds, size / 1e6


def kiln_latency(args, out, files, threads):
    cmd = [os.path.join(args.build, "tools", "kiln"), "run", out, "--runs", str(args.runs),
           "--threads", str(threads)]
    for name, path in files.items():
        cmd += ["--input", "%s=%s" % (name, path)]
    return float(re.search(r"median ([\d.e+-]+) ms", run(cmd)).group(1))


def ort_latency(args, session, feeds):
    session.run(None, feeds)
    times = []
    for _ in range(args.runs):
        t = time.perf_counter()
        session.run(None, feeds)
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--models", nargs="+", default=["resnet18", "mobilenet_v2", "bert", "mlp"])
    ap.add_argument("--sizes", nargs="+", type=int, default=[1, 2, 3, 4, 6, 8, 12, 16])
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--target", default="host")
    ap.add_argument("--batch-classes", default="auto", help="passed to kiln compile --range")
    args = ap.parse_args()
    import onnxruntime as ort

    costs = []
    for name in args.models:
        with tempfile.TemporaryDirectory() as tmp:
            onnx, flags, make_inputs = model_spec(args, name, tmp)
            top = max(args.sizes)
            ranged = os.path.join(tmp, "ranged")
            ranged_s, ranged_mb = compile_kiln(
                args, onnx, flags + ["--range", "batch=%d..%d" % (min(args.sizes), top),
                                     "--batch-classes", args.batch_classes], ranged)
            static, static_cost = {}, {}
            for b in args.sizes:
                static[b] = os.path.join(tmp, "static%d" % b)
                static_cost[b] = compile_kiln(args, onnx, flags + ["--input-shape", "batch=%d" % b],
                                              static[b])
            costs.append((name, ranged_s, ranged_mb, static_cost[1 if 1 in static else top],
                          static_cost[top]))
            inputs, files = {}, {}
            for b in args.sizes:
                inputs[b] = make_inputs(b)
                files[b] = {}
                for k, v in inputs[b].items():
                    files[b][k] = os.path.join(tmp, "%s_%d.npy" % (k, b))
                    np.save(files[b][k], v)
            for threads in args.threads:
                opts = ort.SessionOptions()
                opts.intra_op_num_threads, opts.inter_op_num_threads = threads, 1
                session = ort.InferenceSession(onnx, opts, providers=["CPUExecutionProvider"])
                lat = {b: {"ranged": [], "static": [], "ort": []} for b in args.sizes}
                for _ in range(args.rounds):
                    for b in args.sizes:
                        lat[b]["ranged"].append(kiln_latency(args, ranged, files[b], threads))
                        lat[b]["static"].append(kiln_latency(args, static[b], files[b], threads))
                        lat[b]["ort"].append(ort_latency(args, session, inputs[b]))
                print("\n### %s, %d thread(s)\n" % (name, threads))
                print("| batch | ranged (ms) | static (ms) | ORT (ms) | ranged / static | "
                      "ranged / ORT |")
                print("|---|---|---|---|---|---|")
                vs_static, vs_ort = [], []
                for b in args.sizes:
                    m = {e: statistics.median(v) for e, v in lat[b].items()}
                    vs_static.append(m["ranged"] / m["static"])
                    vs_ort.append(m["ranged"] / m["ort"])
                    print("| %d | %.3f | %.3f | %.3f | %.2f | %.2f |" % (
                        b, m["ranged"], m["static"], m["ort"], vs_static[-1], vs_ort[-1]))
                print("\ngeometric mean: ranged / static %.3f, ranged / ORT %.3f; worst size "
                      "ranged / static %.2f" % (geomean(vs_static), geomean(vs_ort),
                                                max(vs_static)))
                sys.stdout.flush()
    print("\n### Compile time and artifact size\n")
    print("| model | ranged compile (s) | static batch-1 compile (s) | ratio | ranged artifact (MB) "
          "| static batch-1 (MB) | ratio | static batch-%d (MB) |" % max(args.sizes))
    print("|---|---|---|---|---|---|---|---|")
    for name, rs, rmb, (s1, mb1), (_, mbtop) in costs:
        print("| %s | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f | %.1f |" % (
            name, rs, s1, rs / s1, rmb, mb1, rmb / mb1, mbtop))


if __name__ == "__main__":
    main()
