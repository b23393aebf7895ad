#!/usr/bin/env python3
"""Do the re-measurement's statistics tell the truth? (issue 37, item 3)

Runs `kiln tune` on one operator --rounds times into one log, each run adding --step trials
and ending, as every tune does, with the best few and the untuned config timed again side by
side in interleaved rounds. Then, for every config re-measured in two consecutive runs, it
compares what the first re-measurement claimed with what the next one found:
  - spread: (max - min) / median of the first re-measurement's times (what `kiln records
    summary` and `kiln compile` print), against the shift of the median to the next one;
  - verdicts: each run's "best against the untuned config" line (p-value of the rank test),
    and whether a claimed gain held in the next run (the same config still faster than the
    untuned one by its median).
Nothing is asserted; the figures go in bench/README.md ("verdict_noise").

  bench/verdict_noise.py --kiln build/tools/kiln --op conv2d --shape 1,64,28,28,64,3,3 --pad 1
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile


def remeasurements(log):
    """Per run (in order), config JSON -> re-measured times, and each run's untuned config."""
    runs, current, first = [], {}, None
    with open(log) as f:
        for line in f:
            r = json.loads(line)
            config = json.dumps(r["config"], sort_keys=True)
            if first is None:
                first = config
            if r["result"]["message"] == "re-measurement of the best" and r["result"]["error"] == "ok":
                if config in current:  # a new run's re-measurement began
                    runs.append(current)
                    current = {}
                current[config] = r["result"]["costs"]
            elif current:
                runs.append(current)
                current = {}
    if current:
        runs.append(current)
    return runs, first


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kiln", default="build/tools/kiln")
    p.add_argument("--op", default="conv2d")
    p.add_argument("--shape", default="1,64,28,28,64,3,3")
    p.add_argument("--pad", default="1")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--step", type=int, default=16)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--remeasure-rounds", type=int, default=5)
    a = p.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "noise.jsonl")
        verdicts = []
        for i in range(a.rounds):
            cmd = [a.kiln, "tune", "--op", a.op, "--shape", a.shape, "--trials", str(a.step * (i + 1)),
                   "--threads", str(a.threads), "--remeasure-rounds", str(a.remeasure_rounds),
                   "--log", log, "--quiet"]
            if a.op == "conv2d":
                cmd += ["--pad", a.pad]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            m = re.search(r"best against the untuned config: (.*)", out)
            verdicts.append(m.group(1) if m else "the untuned config was the best")
            print(f"run {i + 1}: {verdicts[-1]}", flush=True)
        runs, untuned = remeasurements(log)

    within, shifts, spreads, pairs = 0, [], [], 0
    for before, after in zip(runs, runs[1:]):
        for config, costs in before.items():
            if config not in after:
                continue
            m0, m1 = statistics.median(costs), statistics.median(after[config])
            spread = (max(costs) - min(costs)) / m0
            shift = abs(m1 - m0) / m0
            pairs += 1
            within += shift <= spread
            shifts.append(shift)
            spreads.append(spread)
    held, claimed = 0, 0
    for i, (run, nxt) in enumerate(zip(runs, runs[1:])):
        if "faster than" not in verdicts[i] or untuned not in run or untuned not in nxt:
            continue
        best = min((c for c in run if c != untuned), key=lambda c: min(run[c]))
        if best not in nxt:
            continue
        claimed += 1
        held += statistics.median(nxt[best]) < statistics.median(nxt[untuned])
    print(f"\n{len(runs)} re-measurements, {pairs} configs re-measured in two consecutive runs")
    if pairs:
        print(f"median shift to the next run: {100 * statistics.median(shifts):.1f}% "
              f"(largest {100 * max(shifts):.1f}%); claimed spread: median {100 * statistics.median(spreads):.1f}% "
              f"(largest {100 * max(spreads):.1f}%); shift within the claimed spread: {within} of {pairs}")
    print(f"gains claimed at 95% that held in the next run (by median): {held} of {claimed}")


if __name__ == "__main__":
    sys.exit(main())
