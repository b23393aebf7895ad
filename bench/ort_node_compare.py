"""Where a compiled model loses to ONNX Runtime, conv by conv: kiln's `run --profile` step times
beside ONNX Runtime's own per-node profiler, matched by conv shape (ORT renames and fuses the
nodes it runs, so names do not match; a conv's output channels, input channels per group, kernel
and output size do). Prints the convs where kiln spends the most time over ORT, then the rest of
each side's time by operator.

    build/pyenv/bin/python bench/ort_node_compare.py --model M.onnx --input x.npy \
        --artifact DIR [--threads 1] [--runs 30]

ORT pads some channel counts in its NCHWc convs and then reports another weight shape: those
convs are listed apart, with both sides' unmatched totals. Both profiles add per-step overhead,
so compare rows, not the sums with the latencies of the zoo benches.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import tempfile

import numpy as np
import onnxruntime as ort


def median(v):
    return float(np.median(v)) if isinstance(v, list) else float(v)


def ort_times(model, x, threads, runs):
    """ORT's median kernel time per conv shape, and per other operator, in ms."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(tempfile.mkdtemp(), "ort")
    s = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    name = s.get_inputs()[0].name
    for _ in range(runs):
        s.run(None, {name: x})
    events = json.load(open(s.end_profiling()))
    durations, args = collections.defaultdict(list), {}
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            idx = e["args"].get("node_index")
            durations[idx].append(e["dur"] / 1000.0)
            args[idx] = e["args"]
    convs, other = collections.defaultdict(float), collections.defaultdict(float)
    for idx, d in durations.items():
        a = args[idx]
        if a["op_name"] in ("Conv", "FusedConv") and len(a["input_type_shape"]) >= 2:
            w = list(a["input_type_shape"][1].values())[0]
            o = list(a["output_type_shape"][0].values())[0]
            convs[(w[0], w[1], w[2], w[3], o[2], o[3])] += median(d)
        else:
            other[a["op_name"]] += median(d)
    return name, convs, other


def kiln_times(kiln, artifact, input_name, input_path, threads, runs):
    """kiln's median step time per conv shape (with its template), and per other template."""
    profile = os.path.join(tempfile.mkdtemp(), "profile.json")
    subprocess.run([kiln, "run", artifact, "--input", f"{input_name}={input_path}", "--threads",
                    str(threads), "--runs", str(runs), "--profile", profile],
                   check=True, capture_output=True)
    steps = json.load(open(profile))["step_ms"]
    layers = json.load(open(os.path.join(artifact, "model.json")))["layers"]
    convs, labels, other = collections.defaultdict(float), {}, collections.defaultdict(float)
    for layer, t in zip(layers, steps):
        wl = layer["workload"]
        if not wl.startswith("conv2d "):
            other[layer["template"]] += median(t)
            continue
        g = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", wl)}
        oh = (g["H"] + 2 * g.get("PH", 0) - g.get("DH", 1) * (g["KH"] - 1) - 1) // g.get("SH", 1) + 1
        ow = (g["W"] + 2 * g.get("PW", 0) - g.get("DW", 1) * (g["KW"] - 1) - 1) // g.get("SW", 1) + 1
        key = (g["O"], g["C"] // g.get("groups", 1), g["KH"], g["KW"], oh, ow)
        convs[key] += median(t)
        labels[key] = f"{layer['template']} stride {g.get('SH', 1)}"
    return convs, labels, other


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--input", required=True, help=".npy of the model's first input")
    ap.add_argument("--artifact", required=True, help="the model compiled by kiln compile")
    ap.add_argument("--build", default="build")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--top", type=int, default=20)
    args = ap.parse_args()
    name, ort_convs, ort_other = ort_times(args.model, np.load(args.input), args.threads, args.runs)
    k_convs, labels, k_other = kiln_times(os.path.join(args.build, "tools", "kiln"), args.artifact,
                                          name, args.input, args.threads, args.runs)
    print(f"convs: kiln {sum(k_convs.values()):.3f} ms, ORT {sum(ort_convs.values()):.3f} ms; "
          f"other: kiln {sum(k_other.values()):.3f} ms, ORT {sum(ort_other.values()):.3f} ms")
    matched = sorted((k for k in k_convs if k in ort_convs),
                     key=lambda k: k_convs[k] - ort_convs[k], reverse=True)
    print("| kiln - ORT ms | kiln ms | ORT ms | O, C/groups, KH, KW, out H, out W | kiln template |")
    print("|---|---|---|---|---|")
    for k in matched[:args.top]:
        o = ort_convs[k]
        print(f"| {k_convs[k] - o:+.3f} | {k_convs[k]:.3f} | {o:.3f} | {k} | {labels[k]} |")
    unmatched = sorted((k for k in k_convs if k not in ort_convs), key=lambda k: -k_convs[k])
    print(f"kiln convs with no ORT conv of their shape ({sum(k_convs[k] for k in unmatched):.3f} "
          f"ms; ORT's unmatched {sum(v for k, v in ort_convs.items() if k not in k_convs):.3f} ms):",
          ", ".join(f"{k} {k_convs[k]:.3f}" for k in unmatched[:args.top]))
    top = lambda d: ", ".join(f"{k} {v:.3f}" for k, v in sorted(d.items(), key=lambda kv: -kv[1])[:8])
    print("kiln other:", top(k_other))
    print("ORT other:", top(ort_other))


if __name__ == "__main__":
    main()
