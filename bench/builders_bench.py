#!/usr/bin/env python3
"""Trials per minute with 0, 1 and 2 builders on the farm (issue 37, item 4).

Tunes one ARM task on the embedded farm (a tracker, --workers AArch64 workers under qemu, and
--builders B builder processes, all on loopback) with each number of builders, and prints the
trials per minute of each run. 0 builders: the tuning process compiles the candidates on its
own cores. Builds overlap the measurement of the previous batch in every row
(--overlap-builds on). Nothing is asserted; the figures go in bench/README.md ("builders").

  bench/builders_bench.py --kiln build/tools/kiln --builders 0 1 2
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kiln", default="build/tools/kiln")
    p.add_argument("--op", default="conv2d")
    p.add_argument("--shape", default="1,32,14,14,32,3,3")
    p.add_argument("--target", default="arm-neon")
    p.add_argument("--trials", type=int, default=48)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--builders", type=int, nargs="+", default=[0, 1, 2])
    a = p.parse_args()
    print(f"{a.op} {a.shape} on {a.target}: {a.trials} trials, {a.workers} worker(s) under qemu")
    print("| builders | wall s | trials/min |")
    print("|---|---|---|")
    for b in a.builders:
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [a.kiln, "tune", "--op", a.op, "--shape", a.shape, "--target", a.target,
                   "--trials", str(a.trials), "--tuner", "random", "--workers", str(a.workers),
                   "--overlap-builds", "on", "--remeasure-rounds", "1", "--min-repeat-ms", "0",
                   "--repeat", "1", "--quiet", "--log", os.path.join(tmp, "b.jsonl")]
            if a.op == "conv2d":
                cmd += ["--pad", "1"]
            if b:
                cmd += ["--builders", str(b)]
            t0 = time.time()
            subprocess.run(cmd, check=True, capture_output=True)
            wall = time.time() - t0
        print(f"| {b} | {wall:.1f} | {a.trials / wall * 60:.0f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
