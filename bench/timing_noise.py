#!/usr/bin/env python3
"""How far to trust one timing on this machine, and which statistic of several to rank by.

Takes the K fastest distinct configs of a tune log (the configs a tuner must tell apart),
builds each once (`kiln inspect --so`), and times them in --retests rounds, each round every
config once in a new shuffled order, each timing a new kiln-kernel-runner process of
--repeat repeats (of at least --min-repeat-ms each, as `kiln tune` times a candidate). Then,
for the minimum, the mean and the median of a config's repeats, it prints how much that
statistic disagrees with itself:
  - one process against the next (what one trial's figure is worth), and
  - the first half of the rounds pooled against the second half (what a re-measurement
    in rounds is worth),
each as the mean and the largest relative difference over the configs. The statistic that
disagrees least ranks configs best; kiln's comparison rule (tuner/measure_result.h) was
chosen this way. Nothing is asserted: the figures go in bench/README.md.

  bench/timing_noise.py --task conv-128-256-3x3-s2 --target x86-avx2 \\
      --log tune-bench/conv-128-256-3x3-s2@x86-avx2.random1000.jsonl

f32 tasks only (the inputs are random f32 values). Run it on a quiet machine.
"""
import argparse
import json
import os
import random
import re
import statistics
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tune_bench import EXTRA_TASKS, TASKS  # noqa: E402

STATISTICS = {"min": min, "mean": statistics.mean, "median": statistics.median}


def fastest_configs(log, k):
    """The k fastest distinct ok (template, config JSON) of a log, by their fastest repeat."""
    best = {}
    with open(log) as f:
        for line in f:
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue
            res = r["result"]
            if res["error"] != "ok" or not res["costs"]:
                continue
            key = (r["task"]["template"], json.dumps(r["config"], sort_keys=True))
            best[key] = min(best.get(key, float("inf")), min(res["costs"]))
    return sorted(best, key=best.get)[:k]


def build(kiln, args, config, so):
    """Writes the config's kernel to `so`; returns its function name and the byte sizes of
    its arguments."""
    template, cfg = config
    out = subprocess.run([kiln, "inspect"] + args.split() +
                         ["--template", template, "--config", cfg, "--so", so],
                         capture_output=True, text=True, check=True).stdout
    args_found = re.findall(r"arg \d+: \S+\s+(\S+), \d+ elements \((\d+) bytes\)", out)
    if any(dtype != "f32" for dtype, _ in args_found):
        sys.exit(f"timing_noise: {template} {cfg} has non-f32 arguments: f32 tasks only")
    return re.search(r"kernel '([^']+)'", out).group(1), [int(size) for _, size in args_found]


def write_inputs(folder, sizes, seed=0):
    rng = random.Random(seed)
    paths = []
    for i, size in enumerate(sizes):
        path = os.path.join(folder, f"arg{i}.bin")
        n = size // 4
        with open(path, "wb") as f:
            f.write(struct.pack(f"{n}f", *(rng.gauss(0, 1) for _ in range(n))))
        paths.append(path)
    return paths


def time_once(runner, so, fn, inputs, repeat, min_repeat_ms):
    """One process's costs (seconds per call, one per repeat)."""
    cmd = [runner, "--lib", so, "--fn", fn, "--threads", "1", "--repeat", str(repeat),
           "--min-repeat-ms", str(min_repeat_ms)]
    for path in inputs:
        cmd += ["--arg", path]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out)["costs_s"]


def relative_difference(a, b):
    return abs(a - b) / ((a + b) / 2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kiln", default="build/tools/kiln")
    ap.add_argument("--runner", default="build/runtime/kiln-kernel-runner")
    ap.add_argument("--task", required=True)
    ap.add_argument("--target", help="the task's args with this preset instead of its own")
    ap.add_argument("--log", required=True, help="a tune log of the task: its fastest configs")
    ap.add_argument("--configs", type=int, default=26)
    ap.add_argument("--retests", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=4)
    ap.add_argument("--min-repeat-ms", type=float, default=20)
    a = ap.parse_args()
    args = dict(TASKS, **EXTRA_TASKS)[a.task]
    if a.target:
        args = re.sub(r"--target \S+", "--target " + a.target, args)
    configs = fastest_configs(a.log, a.configs)
    if len(configs) < 2:
        sys.exit(f"timing_noise: {a.log} has fewer than two ok configs")
    with tempfile.TemporaryDirectory(prefix="kiln-timing-noise-") as tmp:
        sos, sizes = [], None
        for i, config in enumerate(configs):
            so = os.path.join(tmp, f"c{i}.so")
            fn, sizes = build(a.kiln, args, config, so)
            sos.append(so)
        inputs = write_inputs(tmp, sizes)
        rng = random.Random(1)
        costs = [[] for _ in sos]  # per config, per round: that process's costs
        for _ in range(a.retests):
            order = list(range(len(sos)))
            rng.shuffle(order)
            for i in order:
                costs[i].append(
                    time_once(a.runner, sos[i], fn, inputs, a.repeat, a.min_repeat_ms))
    half = a.retests // 2
    print(f"{a.task}: {len(configs)} configs, {a.retests} rounds of one process each, "
          f"{a.repeat} repeats of >= {a.min_repeat_ms:g} ms a process")
    print(f"| statistic | one process vs the next: mean / max | {half} processes pooled vs "
          f"the next {half}: mean / max |")
    print("|---|---|---|")
    for name, stat in STATISTICS.items():
        single = [relative_difference(stat(c[r]), stat(c[r + 1]))
                  for c in costs for r in range(0, a.retests - 1, 2)]
        pooled = [relative_difference(stat(sum(c[:half], [])), stat(sum(c[half:2 * half], [])))
                  for c in costs]
        print(f"| {name} | {100 * statistics.mean(single):.1f}% / {100 * max(single):.1f}% | "
              f"{100 * statistics.mean(pooled):.1f}% / {100 * max(pooled):.1f}% |")
    speeds = sorted(min(sum(c, [])) for c in costs)
    print(f"fastest repeat of each config over all rounds spans {1e6 * speeds[0]:.1f} to "
          f"{1e6 * speeds[-1]:.1f} us")


if __name__ == "__main__":
    main()
