#!/usr/bin/env python3
"""The last step of the main job (scripts/run-main.sh): checks kiln's outputs against ONNX
Runtime's and prints the latencies side by side with ONNX Runtime's on the same model.

  main_summary.py --model M.onnx --input input.npy --reference ort.npy --threads T
                  --kiln NAME=OUTPUT.npy:LATENCY_MS ...

Exits 1 when any kiln output is not close to the reference (max |a - b| within
atol + rtol * max|b|, the tolerance of kiln's model tests)."""
import argparse
import sys
import time

import numpy as np
import onnxruntime as ort

ATOL, RTOL = 1e-3, 1e-3


def ort_latency_ms(model, x, threads, runs):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    for _ in range(3):
        session.run(None, {name: x})
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        session.run(None, {name: x})
        times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True)
    p.add_argument("--input", required=True)
    p.add_argument("--reference", required=True)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--kiln", action="append", default=[],
                   help="LABEL=OUTPUT.npy:LATENCY_MS (latency may be '-' when not timed)")
    a = p.parse_args()
    x = np.load(a.input)
    want = np.load(a.reference)
    scale = float(np.abs(want).max())
    ok = True
    rows = []
    for spec in a.kiln:
        label, rest = spec.split("=", 1)
        path, latency = rest.rsplit(":", 1)
        got = np.load(path).reshape(want.shape)
        err = float(np.abs(got - want).max())
        close = err <= ATOL + RTOL * scale
        ok &= close
        top_same = bool(np.argmax(got) == np.argmax(want))
        rows.append((label, latency, err, close, top_same))
    ort_ms = ort_latency_ms(a.model, x, a.threads, a.runs)
    print(f"\n{'run':<34} {'latency (ms)':>12} {'vs ORT':>7} {'max |err|':>10}  check")
    print(f"{'ONNX Runtime ' + ort.__version__:<34} {ort_ms:12.2f} {1.0:7.2f} {'-':>10}  reference")
    for label, latency, err, close, top_same in rows:
        lat = "-" if latency == "-" else f"{float(latency):12.2f}"
        ratio = "-" if latency == "-" else f"{float(latency) / ort_ms:7.2f}"
        verdict = "ok" if close else "MISMATCH"
        if not top_same:
            verdict += " (top-1 differs)"
        print(f"{label:<34} {lat:>12} {ratio:>7} {err:10.2e}  {verdict}")
    print(f"(batch 1, {a.threads} thread(s), median of {a.runs} runs; outputs within "
          f"{ATOL:g} + {RTOL:g} * max|ORT| = {ATOL + RTOL * scale:.2e})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
