#!/usr/bin/env python3
"""Measured precision per layer: what `kiln tune --dtype auto` then `kiln compile --records`
gains over running every layer in the lower precision, beside kiln f32 and ONNX Runtime.

For each model, two forms:
  - int8: the model quantized by ONNX Runtime's quantize_static (QDQ). "kiln rule" compiles it
    as it comes (int8_choice.h's rule), "kiln measured" with the log of
    `kiln tune --dtype auto` (each quantized conv's int8 kernel against its float path); ORT
    runs the same int8 file.
  - bf16 (or f16 where the target has no bf16): the float model. "kiln rule" is
    `--dtype bf16` (every conv/dense layer with a bf16 kernel in bf16), "kiln measured" the
    same with the log of `kiln tune --dtype auto` (each layer in bf16 and in f32); ORT runs f32.
The tune measures with --trials (default 1: each layer's untuned kernels in both forms, so the
only difference between "rule" and "measured" is the precision chosen per layer). Engines take
turns; each figure is the median over --rounds of the median of --runs runs.

  nice ninja -C build -j2 kiln model_app
  build/pyenv/bin/python bench/precision_bench.py [--models resnet18 mobilenet_v2]
      [--forms int8 bf16] [--threads 1 2] [--target host] [--trials 1]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import network_bench as nb  # noqa: E402  (the engines)

ROOT = nb.ROOT


class OrtOn(nb.OnnxRuntime):
    """ONNX Runtime on a given file (the int8 one)."""

    def __init__(self, args, model_dir, path):
        super().__init__(args, model_dir)
        self.path = path


def kiln(args, *cmd):
    return nb.run([os.path.join(args.build, "tools", "kiln"), *cmd])


def compile_to(args, onnx_path, out_dir, dtype="f32", log=None):
    cmd = ["compile", onnx_path, "--target", args.target, "--input-shape", "batch=1",
           "--dtype", dtype, "-o", out_dir]
    if log:
        cmd += ["--records", log]
    text = kiln(args, *cmd)
    return next((line for line in text.splitlines() if "by the records" in line), "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--models", nargs="+", default=["resnet18", "mobilenet_v2"])
    ap.add_argument("--forms", nargs="+", choices=["int8", "bf16", "f16"], default=["int8", "bf16"])
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--target", default="host")
    ap.add_argument("--trials", type=int, default=1)
    args = ap.parse_args()

    cache = os.path.join(args.build, "models")
    subprocess.run([sys.executable, os.path.join(ROOT, "tests", "models", "export_models.py"),
                    "--out", cache], check=True)
    rows, choices = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models:
            model_dir = os.path.join(cache, name)
            f32_path = os.path.join(model_dir, "model.onnx")
            f32_dir = os.path.join(tmp, name + ".f32")
            compile_to(args, f32_path, f32_dir)
            for form in args.forms:
                low_path = os.path.join(model_dir, "model.int8.onnx") if form == "int8" else f32_path
                dtype = "f32" if form == "int8" else form
                log = os.path.join(tmp, f"{name}.{form}.jsonl")
                kiln(args, "tune", low_path, "--target", args.target, "--input-shape", "batch=1",
                     "--precisions", "f32," + form, "--trials", str(args.trials), "--log", log,
                     "--quiet")
                rule_dir, measured_dir = (os.path.join(tmp, f"{name}.{form}.{k}")
                                          for k in ("rule", "measured"))
                compile_to(args, low_path, rule_dir, dtype)
                choices.append((name, form, compile_to(args, low_path, measured_dir, dtype, log)))
                engines = {"kiln f32": nb.Kiln(args, f32_dir, model_dir),
                           "kiln rule": nb.Kiln(args, rule_dir, model_dir),
                           "kiln measured": nb.Kiln(args, measured_dir, model_dir),
                           "ORT": OrtOn(args, model_dir, low_path)}
                for threads in args.threads:
                    lat = {e: [] for e in engines}
                    for _ in range(args.rounds):
                        for e, engine in engines.items():
                            lat[e].append(engine.measure(threads)[0])
                    rows.append({"model": name, "form": form, "threads": threads,
                                 **{e: statistics.median(v) for e, v in lat.items()}})
                    print(f"{name} {form} {threads}T: " + ", ".join(
                        f"{e} {rows[-1][e]:.2f} ms" for e in engines), file=sys.stderr)

    print(f"\nbatch 1, target {args.target}, tune --trials {args.trials}; median of "
          f"{args.rounds} turns x {args.runs} runs; ORT runs the int8 file for the int8 rows, "
          f"the f32 file for the others\n")
    print("| model | form | threads | kiln f32 ms | kiln rule ms | kiln measured ms | ORT ms | "
          "measured / rule | measured / f32 | measured / ORT |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        m = r["kiln measured"]
        print(f"| {r['model']} | {r['form']} | {r['threads']} | {r['kiln f32']:.2f} | "
              f"{r['kiln rule']:.2f} | {m:.2f} | {r['ORT']:.2f} | {m / r['kiln rule']:.2f} | "
              f"{m / r['kiln f32']:.2f} | {m / r['ORT']:.2f} |")
    print()
    for name, form, line in choices:
        print(f"- {name} {form}: {line}")


if __name__ == "__main__":
    main()
