#!/usr/bin/env python3
"""The last step of the main job (scripts/run-main.sh): checks kiln's outputs against ONNX
Runtime's and times kiln's compiled models side by side with ONNX Runtime on the same model.

  main_summary.py --model M.onnx --input input.npy --reference ort.npy --threads T
                  --kiln-bin build/tools/kiln --kiln NAME=OUTPUT.npy:MODEL_DIR ...

MODEL_DIR is what `kiln compile` wrote (timed with `kiln run`), or '-' for an output that is
checked but not timed. The timings run in rounds, ONNX Runtime and every model once a round:
this machine's speed drifts by tens of percent over seconds, and a model timed a minute after
another can look faster or slower for that alone. Each latency is the median of its rounds'
medians.

Exits 1 when any kiln output is not close to the reference (max |a - b| within
atol + rtol * max|b|, the tolerance of kiln's model tests)."""
import argparse
import re
import subprocess
import sys
import time

import numpy as np
import onnxruntime as ort

ATOL, RTOL = 1e-3, 1e-3


def ort_session(model, threads):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def ort_timer(session, x):
    """A function that times `runs` ONNX Runtime calls and returns their median in ms."""
    name = session.get_inputs()[0].name
    for _ in range(3):
        session.run(None, {name: x})

    def median_ms(runs):
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            session.run(None, {name: x})
            times.append((time.perf_counter() - t0) * 1e3)
        return float(np.median(times))
    return median_ms


def kiln_timer(kiln, model_dir, input_arg, threads):
    """A function that times `runs` calls of a compiled model with `kiln run`: their median."""
    def median_ms(runs):
        out = subprocess.run([kiln, "run", model_dir, "--input", input_arg,
                              "--runs", str(runs), "--threads", str(threads)],
                             check=True, capture_output=True, text=True).stdout
        return float(re.search(r"median ([0-9.e+-]+) ms", out).group(1))
    return median_ms


def side_by_side_ms(timers, rounds, runs):
    """Each timer's median over `rounds` rounds, every timer once a round."""
    medians = [[] for _ in timers]
    for _ in range(rounds):
        for i, timer in enumerate(timers):
            medians[i].append(timer(runs))
    return [float(np.median(m)) for m in medians]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True)
    p.add_argument("--input", required=True)
    p.add_argument("--reference", required=True)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--runs", type=int, default=10, help="calls timed per round")
    p.add_argument("--kiln-bin", default="kiln")
    p.add_argument("--kiln", action="append", default=[],
                   help="LABEL=OUTPUT.npy:MODEL_DIR (MODEL_DIR may be '-': not timed)")
    a = p.parse_args()
    x = np.load(a.input)
    want = np.load(a.reference)
    scale = float(np.abs(want).max())
    ok = True
    rows = []
    for spec in a.kiln:
        label, rest = spec.split("=", 1)
        path, model_dir = rest.rsplit(":", 1)
        got = np.load(path).reshape(want.shape)
        err = float(np.abs(got - want).max())
        close = err <= ATOL + RTOL * scale
        ok &= close
        top_same = bool(np.argmax(got) == np.argmax(want))
        rows.append((label, model_dir, err, close, top_same))
    timed = [model_dir for _, model_dir, *_ in rows if model_dir != "-"]
    session = ort_session(a.model, a.threads)
    input_arg = f"{session.get_inputs()[0].name}={a.input}"
    timers = [ort_timer(session, x)]
    timers += [kiln_timer(a.kiln_bin, d, input_arg, a.threads) for d in timed]
    ort_ms, *kiln_ms = side_by_side_ms(timers, a.rounds, a.runs)
    latency_of = dict(zip(timed, kiln_ms))
    print(f"\n{'run':<34} {'latency (ms)':>12} {'vs ORT':>7} {'max |err|':>10}  check")
    print(f"{'ONNX Runtime ' + ort.__version__:<34} {ort_ms:12.2f} {1.0:7.2f} {'-':>10}  reference")
    for label, model_dir, err, close, top_same in rows:
        latency = latency_of.get(model_dir)
        lat = "-" if latency is None else f"{latency:12.2f}"
        ratio = "-" if latency is None else f"{latency / ort_ms:7.2f}"
        verdict = "ok" if close else "MISMATCH"
        if not top_same:
            verdict += " (top-1 differs)"
        print(f"{label:<34} {lat:>12} {ratio:>7} {err:10.2e}  {verdict}")
    print(f"(batch 1, {a.threads} thread(s), median of {a.rounds} rounds' medians of {a.runs} "
          f"runs, taken in turn; outputs within "
          f"{ATOL:g} + {RTOL:g} * max|ORT| = {ATOL + RTOL * scale:.2e})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
