#!/usr/bin/env python3
"""Kernels that take a size at run time against kernels compiled for that exact size.

Each case is one kernel built with `kiln inspect --run-time NAME` at a representative size
(its config chosen there, as a ranged artifact would use it) and run with `--at NAME=V` at each
size V of a sweep, beside the static kernel `kiln inspect` builds for exactly V (its fallback
config chosen at V). The two take turns at each size, `--rounds` times, and the table gives the
best of the rounds' medians for each, their ratio, and the geometric mean over the sizes: what
issue 34's goal (<= 1.10x the static compiles, no size over 1.25x) asks of the kernels alone.

  ninja -C build kiln
  python3 bench/run_time_kernel_bench.py [--threads 1] [--rounds 3] [--repeat 50] [--only dense]
"""
import argparse
import json
import math
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KILN = os.path.join(ROOT, "build", "tools", "kiln")

# (label, op args with {v} where the run-time size goes ({rows}: 12 per token), run-time
# sizes as --run-time takes them (NAME or NAME:MAX), the size the one-kernel column is
# configured at, sizes)
CASES = [
    ("dense N=K=768 (BERT projection), M = tokens",
     ["--op", "dense", "--shape", "{v},768,768", "--epilogue", "bias"], ["M"], 128,
     [1, 7, 32, 100, 128, 200, 384, 512]),
    ("batch_matmul Q K^T, 12 heads, d=64, M = N = tokens",
     ["--op", "batch_matmul", "--param", "B=12", "--param", "M={v}", "--param", "N={v}",
      "--param", "K=64", "--param", "transpose_b=1"], ["M", "N"], 128,
     [8, 32, 77, 128, 200, 384]),
    ("softmax over attention rows, 12 x tokens rows of tokens",
     ["--op", "softmax", "--param", "M={rows}", "--param", "N={v}"], ["M", "N:512"], 128,
     [8, 32, 77, 128, 200, 384]),
    ("layer_norm, 768 wide, M = tokens",
     ["--op", "layer_norm", "--param", "M={v}", "--param", "N=768"], ["M"], 128,
     [1, 7, 32, 128, 200, 512]),
    ("add + gelu, [tokens, 3072] + [3072]",
     ["--op", "add", "--param", "rank=2", "--param", "a0={v}", "--param", "a1=3072",
      "--param", "b0=1", "--param", "b1=3072", "--epilogue", "gelu"], ["a0"], 128,
     [1, 7, 32, 128, 200, 512]),
]


def fill(args, v):
    return [a.replace("{v}", str(v)).replace("{rows}", str(12 * v)) for a in args]


def time_ms(args, threads, repeat):
    cmd = [KILN, "inspect", *args, "--run", "--json", "--threads", str(threads),
           "--repeat", str(repeat)]
    out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    if not out["correct"]:
        raise SystemExit(f"wrong result: {' '.join(cmd)}")
    return out["time_ms"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--repeat", type=int, default=50)
    p.add_argument("--only", default="", help="run the cases whose label contains this")
    p.add_argument("--classes", type=int, nargs="+", default=[1, 8, 32, 128, 512])
    a = p.parse_args()
    for label, args, names, rep, sizes in CASES:
        if a.only not in label:
            continue
        print(f"\n### {label}, {a.threads} thread(s)\n")
        print("| size | static ms | run-time (at 128) ms | / static | class | run-time (at class) ms "
              "| / static |")
        print("|---|---|---|---|---|---|---|")
        one, per_class = [], []
        for v in sizes:
            at = []
            for n in (name.split(":")[0] for name in names):  # "N:512": N, at most 512
                value = 12 * v if n == "M" and "softmax" in args else v  # softmax: 12 rows a token
                at += ["--at", f"{n}={value}"]
            cls = min([c for c in a.classes if c >= v] or [max(a.classes)])
            kernels = [fill(args, v),
                       fill(args, rep) + ["--run-time", ",".join(names)] + at,
                       fill(args, cls) + ["--run-time", ",".join(names)] + at]
            times = [[], [], []]
            for _ in range(a.rounds):
                for i, k in enumerate(kernels):
                    times[i].append(time_ms(k, a.threads, a.repeat))
            s, r, c = (min(t) for t in times)
            one.append(r / s)
            per_class.append(c / s)
            print(f"| {v} | {s:.4f} | {r:.4f} | {r / s:.2f} | {cls} | {c:.4f} | {c / s:.2f} |")
        for what, ratios in (("configured at 128", one), ("configured per class", per_class)):
            geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
            print(f"\n{what}: geometric mean {geo:.2f}, worst {max(ratios):.2f}", end="")
        print()


if __name__ == "__main__":
    main()
