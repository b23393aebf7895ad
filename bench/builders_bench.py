#!/usr/bin/env python3
"""Trials per minute with 0, 1 and 2 builders on the farm (issue 37, item 4).

Tunes one ARM task with each number of builders, on loopback, and prints the trials per minute
of each run. 0 builders: the tuning process compiles the candidates itself. Builds overlap the
measurement of the previous batch in every row (--overlap-builds on). Nothing is asserted; the
figures go in bench/README.md ("builders").

Two layouts:
- default: the embedded farm (a tracker, --workers AArch64 workers under qemu and --builders B
  builder processes, started by `kiln tune` itself), all on every core of this machine;
- --pin: machines stood in for by cores. The tuning host, the tracker and the boards (AArch64
  workers under qemu) share CPU 0; builder i runs alone on CPU 1 + i (modulo this machine's
  CPUs: with 2 CPUs every builder shares CPU 1). A farm of `kiln tracker` and `kiln worker`
  processes, as on separate machines, started with taskset.

  bench/builders_bench.py --kiln build/tools/kiln --builders 0 1 2 [--pin]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time


def tune_command(a, log):
    cmd = [a.kiln, "tune", "--op", a.op, "--shape", a.shape, "--target", a.target,
           "--trials", str(a.trials), "--tuner", "random", "--overlap-builds", "on",
           "--remeasure-rounds", "1", "--min-repeat-ms", "0", "--repeat", "1", "--quiet",
           "--log", log]
    if a.op == "conv2d":
        cmd += ["--pad", "1"]
    return cmd


def wait_for(kiln, farm, key, count, timeout_s=60):
    """Until `kiln farm status` shows `count` workers of `key`."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        out = subprocess.run([kiln, "farm", "status"] + farm, capture_output=True, text=True).stdout
        for line in out.splitlines():
            words = line.split()
            if len(words) >= 4 and words[0] == key and words[3] == str(count):
                return
        time.sleep(0.3)
    raise SystemExit(f"{count} worker(s) of key {key} did not join within {timeout_s} s")


def pinned_run(a, builders, tmp):
    """One tune on a farm of separate processes, each pinned as the module doc says."""
    cpus = os.cpu_count() or 1
    token = os.path.join(tmp, "farm.token")
    with open(token, "w") as f:
        f.write(os.urandom(16).hex())
    port = 20000 + os.getpid() % 20000
    farm = ["--farm", f"127.0.0.1:{port}", "--token-file", token]
    qemu = "qemu-aarch64 -cpu max -L /"
    worker = os.path.join(os.path.dirname(a.kiln), "..", "aarch64", "rpc", "farm", "kiln-worker")
    procs = []
    try:
        procs.append(subprocess.Popen(["taskset", "-c", "0", a.kiln, "tracker", "--port",
                                       str(port), "--token-file", token],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        time.sleep(0.5)
        for _ in range(a.workers):
            procs.append(subprocess.Popen(
                ["taskset", "-c", "0"] + qemu.split() + [worker, "--tracker", f"127.0.0.1:{port}",
                 "--key", "arm", "--token-file", token, "--sandbox-prefix", qemu],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for i in range(builders):
            cpu = (1 + i) % cpus
            procs.append(subprocess.Popen(
                ["taskset", "-c", str(cpu), a.kiln, "worker", "--role", "builder", "--tracker",
                 f"127.0.0.1:{port}", "--key", "build", "--token-file", token],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_for(a.kiln, farm, "arm", a.workers)
        if builders:
            wait_for(a.kiln, farm, "build", builders)
        cmd = ["taskset", "-c", "0"] + tune_command(a, os.path.join(tmp, "b.jsonl")) + farm + [
            "--key", "arm"]
        if builders:
            cmd += ["--build-key", "build"]
        t0 = time.time()
        subprocess.run(cmd, check=True, capture_output=True)
        return time.time() - t0
    finally:
        for p in procs:
            p.kill()
            p.wait()


def embedded_run(a, builders, tmp):
    cmd = tune_command(a, os.path.join(tmp, "b.jsonl")) + ["--workers", str(a.workers)]
    if builders:
        cmd += ["--builders", str(builders)]
    t0 = time.time()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.time() - t0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kiln", default="build/tools/kiln")
    p.add_argument("--op", default="conv2d")
    p.add_argument("--shape", default="1,32,14,14,32,3,3")
    p.add_argument("--target", default="arm-neon")
    p.add_argument("--trials", type=int, default=48)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--builders", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--pin", action="store_true", help="cores stand in for machines (see above)")
    p.add_argument("--rounds", type=int, default=1, help="runs of each row, in turn")
    a = p.parse_args()
    layout = "pinned: host, tracker and boards on CPU 0, builders on CPUs of their own" \
        if a.pin else "embedded farm, every process on every core"
    print(f"{a.op} {a.shape} on {a.target}: {a.trials} trials, {a.workers} worker(s) under qemu; "
          f"{layout}")
    print("| builders | wall s | trials/min |")
    print("|---|---|---|")
    walls = {b: [] for b in a.builders}
    for _ in range(a.rounds):
        for b in a.builders:
            with tempfile.TemporaryDirectory() as tmp:
                walls[b].append((pinned_run if a.pin else embedded_run)(a, b, tmp))
    for b in a.builders:
        w = sorted(walls[b])[len(walls[b]) // 2]
        runs = ", ".join(f"{x:.1f}" for x in walls[b])
        print(f"| {b} | {w:.1f} (runs: {runs}) | {a.trials / w * 60:.0f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
