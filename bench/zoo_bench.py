#!/usr/bin/env python3
"""Networks kiln's tests do not name, compiled untuned and checked against ONNX Runtime: does
`kiln compile` take them, do the outputs match, and how fast are they against ORT, batch 1.

torchvision's classification, segmentation and transformer models with random weights, each
exported at its own opset (9 to 17) with a symbolic batch dimension that `kiln compile` binds
(--input-shape batch=1). Per model: the opset, kiln's compile time, the largest error against
ORT relative to max |ORT output|, and the latency of both (median over --rounds of the median
of --runs runs, the engines taking turns each round, as bench/network_bench.py times them). A
model kiln refuses gets a row with kiln's one-line error.

  scripts/python-env.sh build
  nice ninja -C build -j2 kiln model_app
  build/pyenv/bin/python bench/zoo_bench.py [--models densenet121 ...] [--threads 2]

The exports are kept in --work (build/zoo_bench) and reused.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import network_bench as nb  # noqa: E402  (the runners, not copied)


def zoo():
    """name -> (constructor, opset). Weights are random: no download."""
    import torchvision.models as m
    seg = m.segmentation
    return {
        "squeezenet1_0": (m.squeezenet1_0, 13),
        "alexnet": (m.alexnet, 9),
        "vgg11_bn": (m.vgg11_bn, 10),
        "googlenet": (lambda: m.googlenet(aux_logits=False, init_weights=True), 13),
        "inception_v3": (lambda: m.inception_v3(aux_logits=False, init_weights=True), 12),
        "densenet121": (m.densenet121, 13),
        "resnext50_32x4d": (m.resnext50_32x4d, 11),
        "regnet_y_400mf": (m.regnet_y_400mf, 17),
        "regnet_x_800mf": (m.regnet_x_800mf, 10),
        "shufflenet_v2_x0_5": (m.shufflenet_v2_x0_5, 11),
        "mnasnet0_5": (m.mnasnet0_5, 9),
        "mobilenet_v3_large": (m.mobilenet_v3_large, 17),
        "efficientnet_b0": (m.efficientnet_b0, 13),
        "efficientnet_v2_s": (m.efficientnet_v2_s, 15),
        "convnext_tiny": (m.convnext_tiny, 17),
        "swin_t": (m.swin_t, 17),
        "lraspp_mobilenet_v3": (
            lambda: seg.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None), 13),
        "deeplabv3_mobilenet_v3": (
            lambda: seg.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None,
                                                      aux_loss=False), 11),
        "fcn_resnet50": (
            lambda: seg.fcn_resnet50(weights=None, weights_backbone=None, aux_loss=False), 13),
    }


def export(name, make, opset, model_dir):
    """model.onnx (symbolic batch) and input.npy in model_dir, unless already there."""
    import torch
    onnx = os.path.join(model_dir, "model.onnx")
    if os.path.exists(onnx):
        return onnx
    os.makedirs(model_dir, exist_ok=True)
    torch.manual_seed(0)
    x = np.random.RandomState(0).randn(1, 3, 224, 224).astype(np.float32)
    model = make().eval()
    tmp = onnx + ".tmp"
    with torch.no_grad():
        torch.onnx.export(model, torch.from_numpy(x), tmp, opset_version=opset,
                          input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    np.save(os.path.join(model_dir, "input.npy"), x)
    os.replace(tmp, onnx)  # a killed export leaves no model behind
    return onnx


def first_output(args, out_dir, model_dir):
    """kiln's first output on input.npy (`kiln run --output`)."""
    res = os.path.join(out_dir, "outputs")
    nb.run([os.path.join(args.build, "tools", "kiln"), "run", out_dir, "--input",
            "input=" + os.path.join(model_dir, "input.npy"), "--runs", "1", "--output", res])
    return np.load(os.path.join(res, sorted(os.listdir(res))[0]))


def bench(args, name, make, opset):
    model_dir = os.path.join(args.work, name)
    out_dir = os.path.join(model_dir, "kiln")
    row = {"model": name, "opset": opset}
    try:
        export(name, make, opset, model_dir)
    except Exception as e:  # an exporter limit, not kiln's
        row["error"] = "export failed: " + str(e).splitlines()[0][:120]
        return row
    try:
        row.update(nb.compile_kiln(args, name, model_dir, out_dir))
    except subprocess.CalledProcessError as e:
        lines = (e.stderr or e.stdout or "").strip().splitlines()
        row["error"] = lines[-1] if lines else f"kiln compile exited {e.returncode}"
        return row
    ort = nb.OnnxRuntime(args, model_dir)
    session = ort.ort.InferenceSession(ort.path, providers=["CPUExecutionProvider"])
    want = session.run(None, {"input": ort.x})[0]
    got = first_output(args, out_dir, model_dir).reshape(want.shape)
    row["rel_err"] = float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))
    kiln = nb.Kiln(args, out_dir, model_dir)
    times = {"kiln": [], "ort": []}
    for _ in range(args.rounds):
        times["kiln"].append(kiln.measure(args.threads)[0])
        times["ort"].append(ort.measure(args.threads)[0])
    row["kiln_ms"] = statistics.median(times["kiln"])
    row["ort_ms"] = statistics.median(times["ort"])
    return row


def zoo_args(description, work):
    """The options both zoo benches take; the exports go to build/WORK by default."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--build", default=os.path.join(nb.ROOT, "build"))
    p.add_argument("--work", default=os.path.join(nb.ROOT, "build", work))
    p.add_argument("--target", default="host")
    p.add_argument("--models", nargs="*", help="default: all of the zoo")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--runs", type=int, default=10)
    return p


def print_table(args, models, bench_one, tool):
    """One row per model of --models (default: all), as bench_one(args, name, *spec) gives it."""
    names = args.models or list(models)
    unknown = [n for n in names if n not in models]
    if unknown:
        sys.exit(f"{tool}: unknown model(s) {', '.join(unknown)} (known: {', '.join(models)})")
    print("| model | opset | kiln compile s | max rel error | kiln ms | ORT ms | kiln / ORT |")
    print("|---|---|---|---|---|---|---|")
    for name in names:
        t0 = time.perf_counter()
        r = bench_one(args, name, *models[name])
        if "error" in r:
            print(f"| {name} | {r['opset']} | {r['error']} | | | | |", flush=True)
            continue
        print(f"| {name} | {r['opset']} | {r['compile_s']:.1f} | {r['rel_err']:.1e} | "
              f"{r['kiln_ms']:.2f} | {r['ort_ms']:.2f} | {r['kiln_ms'] / r['ort_ms']:.2f}x |",
              flush=True)
        print(f"  ({name}: {time.perf_counter() - t0:.0f} s)", file=sys.stderr)


def main():
    args = zoo_args(__doc__.splitlines()[0], "zoo_bench").parse_args()
    args.records = []
    print_table(args, zoo(), bench, "zoo_bench")


if __name__ == "__main__":
    main()
