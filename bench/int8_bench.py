#!/usr/bin/env python3
"""int8 network benchmark: the same QDQ model (torchvision's networks quantized by ONNX
Runtime's quantize_static: per-channel int8 weights, uint8 activations) run by kiln and by
ONNX Runtime, beside both on the float model, batch 1.

Prints a markdown table (what bench/README.md shows): latency of kiln int8, ORT int8, kiln
f32 and ORT f32 (median over rounds of the median of --runs runs, engines taking turns), the
ratios the issue asks about (kiln int8 / ORT int8, kiln int8 / kiln f32), and the accuracy of
each int8 output: the largest difference from ORT int8's output (optimized, and executing the
QDQ graph literally) in quanta of the output's scale, the share of elements within one
quantum, and whether the top-1 class agrees with the f32 model's.

  nice ninja -C build -j2 kiln model_app
  build/pyenv/bin/python bench/int8_bench.py [--models resnet18 mobilenet_v2 resnet50]
      [--threads 1 2] [--form qdq|qoperator]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import network_bench as nb  # noqa: E402  (the engines and kiln's compile step)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "models"))
from export_models import quantize  # noqa: E402  (the int8 models, as the tests use them)

ROOT = nb.ROOT


class Ort(nb.OnnxRuntime):
    def __init__(self, args, model_dir, path):
        super().__init__(args, model_dir)
        self.path = path

    def output(self, optimized=True):
        """Optimized: ORT's own int8 fusions (QLinearAdd, ...); not: the QDQ graph executed node
        by node as ONNX defines it (the semantics kiln's integer path reproduces)."""
        o = self.ort.SessionOptions()
        if not optimized:
            o.graph_optimization_level = self.ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        s = self.ort.InferenceSession(self.path, o, providers=["CPUExecutionProvider"])
        return s.run(None, {"input": self.x})[0].reshape(-1)


def kiln_output(args, out_dir, model_dir):
    with tempfile.TemporaryDirectory() as tmp:
        saved = os.path.join(tmp, "y.bin")
        nb.run([os.path.join(args.build, "examples", "model_app"), out_dir,
                os.path.join(model_dir, "input.npy"), "--repeat", "1", "--save", saved])
        return np.fromfile(saved, dtype=np.float32)


def output_scale(path):
    """The scale of the last DequantizeLinear (the logits' quantum)."""
    import onnx
    m = onnx.load(path)
    inits = {i.name: i for i in m.graph.initializer}
    last = [n for n in m.graph.node if n.op_type == "DequantizeLinear"][-1]
    return float(onnx.numpy_helper.to_array(inits[last.input[1]]).reshape(-1)[0])


def compile_to(args, onnx_path, out_dir):
    cmd = [os.path.join(args.build, "tools", "kiln"), "compile", onnx_path, "--target",
           args.target, "--input-shape", "batch=1", "-o", out_dir]
    for log in args.records:
        cmd += ["--records", log]
    nb.run(cmd)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--models", nargs="+", default=["resnet18", "mobilenet_v2"])
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--target", default="host")
    ap.add_argument("--records", nargs="*", default=[])
    ap.add_argument("--form", choices=["qdq", "qoperator"], default="qdq",
                    help="the quantized model's form, as quantize_static writes it")
    args = ap.parse_args()

    cache = os.path.join(args.build, "models")
    export = [sys.executable, os.path.join(ROOT, "tests", "models", "export_models.py"),
              "--out", cache]
    subprocess.run(export, check=True)
    extra = [m for m in args.models if m in ("resnet50",)]  # the benchmarks' own (BENCH_ONLY)
    if extra:
        subprocess.run(export + ["--models"] + extra, check=True)
    rows, accuracy = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models:
            model_dir = os.path.join(cache, name)
            int8 = quantize(model_dir, "qdq" if args.form == "qdq" else "qoperator")
            f32_dir, int8_dir = os.path.join(tmp, name), os.path.join(tmp, name + ".int8")
            compile_to(args, os.path.join(model_dir, "model.onnx"), f32_dir)
            compile_to(args, int8, int8_dir)
            ort_int8 = Ort(args, model_dir, int8)
            engines = {"kiln int8": nb.Kiln(args, int8_dir, model_dir), "ORT int8": ort_int8,
                       "kiln f32": nb.Kiln(args, f32_dir, model_dir),
                       "ORT f32": Ort(args, model_dir, os.path.join(model_dir, "model.onnx"))}
            got = kiln_output(args, int8_dir, model_dir)
            f32 = np.load(os.path.join(model_dir, "ort.npy")).reshape(-1)
            scale = output_scale(int8)
            row = [name]
            for want in (ort_int8.output(), ort_int8.output(optimized=False)):
                quanta = np.abs(got - want) / scale
                row += [float(quanta.max()), float(np.mean(quanta <= 1.0001))]
            row += [int(np.argmax(got)) == int(np.argmax(f32)),
                    int(np.argmax(ort_int8.output())) == int(np.argmax(f32))]
            accuracy.append(row)
            for threads in args.threads:
                lat = {e: [] for e in engines}
                for _ in range(args.rounds):
                    for e, engine in engines.items():
                        lat[e].append(engine.measure(threads)[0])
                rows.append({"model": name, "threads": threads,
                             **{e: statistics.median(v) for e, v in lat.items()}})
                print(f"{name} {threads}T: " + ", ".join(f"{e} {rows[-1][e]:.2f} ms"
                                                         for e in engines), file=sys.stderr)

    print(f"\n{args.form} models, batch 1, target {args.target}, "
          f"{'tuned' if args.records else 'untuned'} kiln; "
          f"median of {args.rounds} turns x {args.runs} runs\n")
    print("| model | threads | kiln int8 ms | ORT int8 ms | kiln f32 ms | ORT f32 ms | "
          "kiln int8 / ORT int8 | kiln int8 / kiln f32 |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['threads']} | {r['kiln int8']:.2f} | {r['ORT int8']:.2f} | "
              f"{r['kiln f32']:.2f} | {r['ORT f32']:.2f} | {r['kiln int8'] / r['ORT int8']:.2f} | "
              f"{r['kiln int8'] / r['kiln f32']:.2f} |")
    print("\nkiln int8's logits against ORT int8 (optimized: its QLinearAdd and other fusions) and "
          "against ORT running the QDQ graph node by node (ONNX's semantics), in quanta of the "
          "logits' scale\n")
    print("| model | max vs ORT optimized | within one quantum | max vs ORT literal | "
          "within one quantum | top-1 as f32: kiln int8 / ORT int8 |")
    print("|---|---|---|---|---|---|")
    for name, w_opt, s_opt, w_lit, s_lit, kiln_top1, ort_top1 in accuracy:
        print(f"| {name} | {w_opt:.1f} | {100 * s_opt:.1f}% | {w_lit:.1f} | {100 * s_lit:.1f}% | "
              f"{kiln_top1} / {ort_top1} |")


if __name__ == "__main__":
    main()
