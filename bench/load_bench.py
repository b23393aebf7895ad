#!/usr/bin/env python3
"""Load and load + first run of compiled models, for one or more kiln builds side by side.

Each build compiles the models with its own `kiln` (so each runs the params format it writes),
then `examples/model_app DIR input.npy --threads T --repeat 3` runs in fresh processes, the
builds taking turns, for --rounds rounds. Prints the medians of the "load" and "first run"
lines in ms. Models come from scripts/export_models.py (build/models/NAME/model.onnx and
input.npy), as the other network benches use them.

    python bench/load_bench.py --builds build-before build --models resnet18 mobilenet_v2
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINE = re.compile(r"load ([0-9.]+) ms, first run ([0-9.]+) ms")


def compile_models(build, models, models_dir, out):
    kiln = os.path.join(build, "tools", "kiln")
    for m in models:
        subprocess.run([kiln, "compile", os.path.join(models_dir, m, "model.onnx"),
                        "--input-shape", "batch=1", "-o", os.path.join(out, m)],
                       check=True, stdout=subprocess.DEVNULL)


def time_once(build, artifact, input_npy, threads):
    app = os.path.join(build, "examples", "model_app")
    out = subprocess.run([app, artifact, input_npy, "--threads", str(threads), "--repeat", "3"],
                         check=True, capture_output=True, text=True).stdout
    m = LINE.search(out)
    if not m:
        raise SystemExit(f"no load line in model_app's output: {out}")
    return float(m.group(1)), float(m.group(2))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--builds", nargs="+", default=[os.path.join(ROOT, "build")])
    ap.add_argument("--models", nargs="+", default=["resnet18", "mobilenet_v2",
                                                     "mobilenet_v3_small"])
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "build", "models"))
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--rounds", type=int, default=11)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        outs = []
        for i, b in enumerate(args.builds):
            out = os.path.join(tmp, str(i))
            compile_models(b, args.models, args.models_dir, out)
            outs.append(out)
        times = {}  # (model, threads, build index) -> [(load, first)]
        for _ in range(args.rounds):
            for m in args.models:
                npy = os.path.join(args.models_dir, m, "input.npy")
                for t in args.threads:
                    for i, b in enumerate(args.builds):
                        times.setdefault((m, t, i), []).append(
                            time_once(b, os.path.join(outs[i], m), npy, t))
    print(f"medians of {args.rounds} rounds, ms; builds: " +
          ", ".join(f"[{i}] {b}" for i, b in enumerate(args.builds)))
    print("| model | threads | " + " | ".join(f"load [{i}] | load + first run [{i}]"
                                              for i in range(len(args.builds))) + " |")
    print("|---|---|" + "---|---|" * len(args.builds))
    for m in args.models:
        for t in args.threads:
            cells = []
            for i in range(len(args.builds)):
                v = times[(m, t, i)]
                cells.append(f"{statistics.median(x[0] for x in v):.2f}")
                cells.append(f"{statistics.median(x[0] + x[1] for x in v):.1f}")
            print(f"| {m} | {t} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
