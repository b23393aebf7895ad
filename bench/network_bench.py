#!/usr/bin/env python3
"""Side-by-side network benchmark: kiln (untuned, or with --records) against ONNX Runtime and
PyTorch on torchvision's ResNet-18 and MobileNetV2, batch 1.

Prints a markdown table (what bench/README.md shows): latency (median over rounds of the
median of --runs runs; the engines take turns each round so machine noise hits all alike),
kiln's compile time, artifact size (model.so + model.params), load-to-first-inference, arena
against the naive sum of activations, and once the stripped size of what the runtime adds to a
board program. ORT runs the same ONNX file; PyTorch runs the same network and weights traced
with TorchScript (torch 1.13 cannot load ONNX; export_models.py writes both).

Run with the venv of scripts/python-env.sh, after building kiln, model_app and the size probe:
  nice ninja -C build -j2 kiln model_app kiln_size_probe kiln_size_baseline
  build/pyenv/bin/python bench/network_bench.py [--threads 1 2] [--rounds 5] [--runs 20]
With --dtype f32 bf16 kiln also runs each network compiled with `--dtype bf16` (its own turn in
every round) and a second table sets the precisions side by side. bf16 needs a target with its
kernels: `--target host` on a CPU with AVX512-BF16, or its profile (cooperlake, znver4, ...);
the x86-avx512 preset has none.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def compile_kiln(args, name, model_dir, out_dir, dtype="f32"):
    cmd = [os.path.join(args.build, "tools", "kiln"), "compile",
           os.path.join(model_dir, "model.onnx"), "--target", args.target,
           "--input-shape", "batch=1", "--dtype", dtype, "-o", out_dir]
    for log in args.records:
        cmd += ["--records", log]
    t0 = time.perf_counter()
    run(cmd)
    seconds = time.perf_counter() - t0
    with open(os.path.join(out_dir, "model.json")) as f:
        info = json.load(f)
    size = sum(os.path.getsize(os.path.join(out_dir, p)) for p in ("model.so", "model.params"))
    return {"compile_s": seconds, "artifact_mb": size / 1e6,
            "arena_mb": info["workspace_bytes"] / 1e6,
            "naive_mb": info["naive_workspace_bytes"] / 1e6}


class Kiln:
    """model_app in a fresh process: load, first run, then --runs timed runs."""

    def __init__(self, args, out_dir, model_dir):
        self.app = os.path.join(args.build, "examples", "model_app")
        self.out_dir, self.input = out_dir, os.path.join(model_dir, "input.npy")
        self.runs = args.runs

    def measure(self, threads):
        text = run([self.app, self.out_dir, self.input, "--repeat", str(self.runs),
                    "--threads", str(threads)])
        m = re.search(r"load ([\d.]+) ms, first run ([\d.]+) ms, median ([\d.]+) ms", text)
        return float(m.group(3)), float(m.group(1)) + float(m.group(2))


class OnnxRuntime:
    def __init__(self, args, model_dir):
        import onnxruntime
        self.ort, self.path, self.runs = onnxruntime, os.path.join(model_dir, "model.onnx"), args.runs
        self.x = np.load(os.path.join(model_dir, "input.npy"))

    def measure(self, threads):
        t0 = time.perf_counter()
        opts = self.ort.SessionOptions()
        opts.intra_op_num_threads, opts.inter_op_num_threads = threads, 1
        opts.execution_mode = self.ort.ExecutionMode.ORT_SEQUENTIAL
        s = self.ort.InferenceSession(self.path, opts, providers=["CPUExecutionProvider"])
        s.run(None, {"input": self.x})
        first = (time.perf_counter() - t0) * 1e3
        times = []
        for _ in range(self.runs):
            t = time.perf_counter()
            s.run(None, {"input": self.x})
            times.append((time.perf_counter() - t) * 1e3)
        return statistics.median(times), first


class PyTorch:
    def __init__(self, args, model_dir):
        import torch
        self.torch, self.path, self.runs = torch, os.path.join(model_dir, "model.pt"), args.runs
        self.x = torch.from_numpy(np.load(os.path.join(model_dir, "input.npy")))

    def measure(self, threads):
        torch = self.torch
        torch.set_num_threads(threads)
        t0 = time.perf_counter()
        m = torch.jit.load(self.path).eval()
        with torch.inference_mode():
            m(self.x)
            first = (time.perf_counter() - t0) * 1e3
            for _ in range(3):  # TorchScript's profiling executor specialises on early runs
                m(self.x)
            times = []
            for _ in range(self.runs):
                t = time.perf_counter()
                m(self.x)
                times.append((time.perf_counter() - t) * 1e3)
        return statistics.median(times), first


def runtime_size(build):
    """Bytes the runtime adds to a stripped board program (tests/runtime's size probe)."""
    d = os.path.join(build, "tests", "runtime")
    probe, base = os.path.join(d, "kiln_size_probe"), os.path.join(d, "kiln_size_baseline")
    if not (os.path.exists(probe) and os.path.exists(base)):
        return None
    sizes = []
    with tempfile.TemporaryDirectory() as tmp:
        for p in (probe, base):
            copy = os.path.join(tmp, os.path.basename(p))
            shutil.copy(p, copy)
            run(["strip", copy])
            sizes.append(os.path.getsize(copy))
    return sizes[0] - sizes[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--models", nargs="+", default=["resnet18", "mobilenet_v2"])
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--rounds", type=int, default=5, help="turns of every engine (>= 1)")
    ap.add_argument("--runs", type=int, default=20, help="timed runs per turn (>= 20)")
    ap.add_argument("--target", default="x86-avx512")
    ap.add_argument("--records", nargs="*", default=[], help="tuning logs for kiln compile")
    ap.add_argument("--dtype", nargs="+", default=["f32"],
                    help="kiln compile --dtype of each kiln engine (f32 first: the main table's)")
    args = ap.parse_args()
    if args.dtype[0] != "f32":
        args.dtype.insert(0, "f32")

    cache = os.path.join(args.build, "models")
    subprocess.run([sys.executable, os.path.join(ROOT, "tests", "models", "export_models.py"),
                    "--out", cache], check=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models:
            model_dir, out_dir = os.path.join(cache, name), os.path.join(tmp, name)
            info = compile_kiln(args, name, model_dir, out_dir)
            engines = {"kiln": Kiln(args, out_dir, model_dir), "ORT": OnnxRuntime(args, model_dir),
                       "PyTorch": PyTorch(args, model_dir)}
            for dtype in args.dtype[1:]:
                half_dir = out_dir + "." + dtype
                compile_kiln(args, name, model_dir, half_dir, dtype)
                engines["kiln " + dtype] = Kiln(args, half_dir, model_dir)
            for threads in args.threads:
                lat = {e: [] for e in engines}
                first = {e: [] for e in engines}
                for _ in range(args.rounds):
                    for e, engine in engines.items():
                        median, load_first = engine.measure(threads)
                        lat[e].append(median)
                        first[e].append(load_first)
                row = {"model": name, "threads": threads, **info}
                for e in engines:
                    row[e] = statistics.median(lat[e])
                    row[e + "_spread"] = (min(lat[e]), max(lat[e]))
                    row[e + "_first"] = statistics.median(first[e])
                rows.append(row)
                print(f"{name} {threads}T: " + ", ".join(
                    f"{e} {row[e]:.2f} ms" for e in engines), file=sys.stderr)

    print(f"\nbatch 1, target {args.target}, {'tuned' if args.records else 'untuned'} kiln; "
          f"latency: median of {args.rounds} turns x {args.runs} runs (min-max of the turns)\n")
    print("| model | threads | kiln ms | ORT ms | PyTorch ms | kiln / ORT | kiln compile s | "
          "artifact MB | arena MB (naive) | load + first run ms: kiln / ORT / PyTorch |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        spread = lambda e: f"{r[e]:.2f} ({r[e + '_spread'][0]:.2f}-{r[e + '_spread'][1]:.2f})"
        print(f"| {r['model']} | {r['threads']} | {spread('kiln')} | {spread('ORT')} | "
              f"{spread('PyTorch')} | {r['kiln'] / r['ORT']:.2f} | {r['compile_s']:.1f} | "
              f"{r['artifact_mb']:.1f} | {r['arena_mb']:.1f} ({r['naive_mb']:.1f}) | "
              f"{r['kiln_first']:.1f} / {r['ORT_first']:.1f} / {r['PyTorch_first']:.1f} |")
    for dtype in args.dtype[1:]:
        e = "kiln " + dtype
        print(f"\n| model | threads | kiln f32 ms | kiln {dtype} ms | ORT f32 ms | "
              f"{dtype} / f32 | {dtype} / ORT |")
        print("|---|---|---|---|---|---|---|")
        for r in rows:
            spread = lambda e: f"{r[e]:.2f} ({r[e + '_spread'][0]:.2f}-{r[e + '_spread'][1]:.2f})"
            print(f"| {r['model']} | {r['threads']} | {spread('kiln')} | {spread(e)} | "
                  f"{spread('ORT')} | {r[e] / r['kiln']:.2f} | {r[e] / r['ORT']:.2f} |")
    size = runtime_size(args.build)
    if size is not None:
        print(f"\nstripped runtime added to a board program: {size} bytes")


if __name__ == "__main__":
    main()
