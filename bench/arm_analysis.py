#!/usr/bin/env python3
"""ARM kernels judged without a board: `kiln analyze` (llvm-mca with each core's scheduling
model) on torchvision's ResNet-18 and MobileNetV2, per core and precision. Prints markdown
tables (what bench/README.md shows):

1. per model, core and dtype: the share of the tunable kernels whose micro-kernel reaches 80% of
   the core's peak for its multiply-accumulate instruction, the work-weighted share of peak,
   and the kernels below 80% with their bottleneck;
2. the whole-network estimates (micro-kernel rate over every multiply-add, at the profile's
   clock, on the cores the published figure used) against published board latencies:
   RK3399 (2 x Cortex-A72 at 1.8 GHz) AutoTVM ResNet-18 161 ms and MobileNetV2 66.7 ms;
   Raspberry Pi 4 (4 x Cortex-A72 at 1.5 GHz) XNNPACK MobileNetV2 46 ms.

Everything here is a prediction of one model of each core (no caches, no memory system): it
says whether the kernels are in the right range, it does not replace a board.

  nice ninja -C build -j2 kiln
  python3 bench/arm_analysis.py [--build build] [--models resnet18 mobilenet_v2]
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (core, dtype): the cores the issue names, in f32, and fp16 / bf16 where the core has them.
CASES = [("cortex-a72", "f32"), ("cortex-a76", "f32"), ("neoverse-n1", "f32"),
         ("cortex-a76", "f16"), ("neoverse-n1", "f16"), ("neoverse-v1", "bf16")]

# Published board latencies: (model, target to estimate on, threads, ms, what).
PUBLISHED = [
    ("resnet18", "rk3399", 2, 161.0, "AutoTVM, RK3399 (2 x A72 at 1.8 GHz)"),
    ("mobilenet_v2", "rk3399", 2, 66.7, "AutoTVM, RK3399 (2 x A72 at 1.8 GHz)"),
    ("mobilenet_v2", "rpi4", 4, 46.0, "XNNPACK, Raspberry Pi 4 (4 x A72 at 1.5 GHz)"),
]


def analyze(args, model, target, dtype="f32", threads=1):
    onnx = os.path.join(args.build, "models", model, "model.onnx")
    if not os.path.exists(onnx):
        sys.exit("%s is missing: export it first (tests/models/export_models.py)" % onnx)
    out = subprocess.run([os.path.join(args.build, "tools", "kiln"), "analyze", onnx,
                          "--input-shape", "batch=1", "--target", target, "--dtype", dtype,
                          "--threads", str(threads), "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def short(bottleneck):
    head = bottleneck.split(":")[0]
    return "spills, then " + bottleneck.split("then ")[1].split(":")[0] if head == "register spills" else head


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--models", nargs="+", default=["resnet18", "mobilenet_v2"])
    args = p.parse_args()

    print("| model | core (model) | dtype | micro-kernels >= 80% of peak | by work | below 80% (bottleneck) |")
    print("|---|---|---|---|---|---|")
    for model in args.models:
        for core, dtype in CASES:
            r = analyze(args, model, core, dtype)
            ks = [k for k in r["kernels"] if k["estimated"] and k["peak_macs_per_cycle"] > 0]
            good = sum(k["of_peak"] >= 0.8 for k in ks)
            low = {}
            for k in ks:
                if k["of_peak"] < 0.8:
                    key = "%s %s" % (k["template"], short(k["bottleneck"]))
                    low.setdefault(key, []).append(k["of_peak"])
            below = "; ".join("%d x %s (%.0f-%.0f%%)" % (len(v), key, 100 * min(v), 100 * max(v))
                              for key, v in sorted(low.items()))
            print("| %s | %s (%s) | %s | %d of %d | %.0f%% | %s |" % (
                model, core, r["scheduling_model"], dtype, good, len(ks),
                100 * r["of_peak_weighted"], below or "-"))

    print()
    print("| model | published | kiln estimate (untuned, same cores and clock) | estimate / published |")
    print("|---|---|---|---|")
    for model, target, threads, ms, what in PUBLISHED:
        if model not in args.models:
            continue
        r = analyze(args, model, target, "f32", threads)
        print("| %s | %s: %.1f ms | %.1f ms (%d threads x %.1f GHz; %.2f GMACs) | %.2f |" % (
            model, what, ms, r["ms"], threads, r["ghz"], r["macs"] / 1e9, r["ms"] / ms))


if __name__ == "__main__":
    main()
