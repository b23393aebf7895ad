#!/usr/bin/env python3
"""Network tuning benchmark: kiln's latency untuned and after N minutes of `kiln tune` (the
embedded farm), with and without --transfer from the other network's log, against ONNX
Runtime and PyTorch, on torchvision's ResNet-18 and MobileNetV2, batch 1.

For each model and thread count the tune runs once, in steps: the log after the first budget
is compiled and timed, then the same command resumes it up to the next budget (a tune resumes
from its log with nothing measured twice, so budgets are cumulative). The transfer runs start
a fresh log with `--transfer` of the other model's final log (records and saved cost models)
and are timed at the first budget only (the issue's goal: within 10 minutes with a log to
transfer from).
Also printed: tuning time, trials, trials per task (min / median / max over the tasks), and
one curve per log (`kiln records plot`, best GFLOPS against trials) in --work.

The latency runners (kiln's model_app in a fresh process, ORT, PyTorch TorchScript) are those
of bench/network_bench.py; the engines take turns each round.

  scripts/python-env.sh build
  nice ninja -C build -j2 kiln model_app
  build/pyenv/bin/python bench/network_tune_bench.py                 # hours: 10 and 30 min
  build/pyenv/bin/python bench/network_tune_bench.py --models mobilenet_v2 --threads 1 \\
      --budgets 3 --no-transfer                                      # a short check
"""
import argparse
import collections
import glob
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import network_bench as nb  # noqa: E402  (the runner functions, not copied)

ROOT = nb.ROOT


def kiln(args, *cmd):
    return [os.path.join(args.build, "tools", "kiln"), *cmd]


def tune(args, model_dir, log, minutes, threads, transfer=None):
    """Tunes (or resumes) `log` for `minutes` more; returns the wall seconds it took."""
    cmd = kiln(args, "tune", os.path.join(model_dir, "model.onnx"), "--target", args.target,
               "--input-shape", "batch=1", "--trials", "100000000", "--time-budget",
               f"{minutes * 60:.0f}s", "--threads", str(threads), "--log", log, "--quiet",
               "--layout-choices", str(args.layout_choices))
    if transfer:
        cmd += ["--transfer", transfer]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def trials_per_task(log):
    """Trials of each task (template and workload) in the log, re-measurements excluded."""
    per = collections.Counter()
    with open(log) as f:
        for line in f:
            r = json.loads(line)
            if r.get("result", {}).get("message") == "re-measurement of the best":
                continue
            task = r.get("task", {})
            per[(task.get("template"), json.dumps(task.get("workload"), sort_keys=True))] += 1
    return per


def latency(args, model_dir, out_dir, threads, records):
    """Compiles with `records` (None: untuned) and times kiln against ORT and PyTorch."""
    args.records = [records] if records else []
    nb.compile_kiln(args, "", model_dir, out_dir)
    engines = {"kiln": nb.Kiln(args, out_dir, model_dir)}
    if not args.no_peers:
        engines["ORT"] = nb.OnnxRuntime(args, model_dir)
        engines["PyTorch"] = nb.PyTorch(args, model_dir)
    lat = {e: [] for e in engines}
    for _ in range(args.rounds):
        for e, engine in engines.items():
            lat[e].append(engine.measure(threads)[0])
    return {e: statistics.median(v) for e, v in lat.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--models", nargs="+", default=["resnet18", "mobilenet_v2"])
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--budgets", nargs="+", type=float, default=[10, 30],
                    help="cumulative tuning minutes at which the tuned model is timed")
    ap.add_argument("--no-transfer", action="store_true", help="skip the --transfer runs")
    ap.add_argument("--only-transfer", action="store_true",
                    help="only the --transfer runs, from plain logs an earlier run left in --work")
    ap.add_argument("--layout-choices", type=int, default=1, help="kiln tune --layout-choices")
    ap.add_argument("--rounds", type=int, default=3, help="turns of every engine")
    ap.add_argument("--runs", type=int, default=20, help="timed runs per turn")
    ap.add_argument("--target", default="host")
    ap.add_argument("--no-peers", action="store_true", help="kiln only (no ORT, PyTorch)")
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "network_tune_bench"),
                    help="logs, curves and compiled models (kept: a rerun resumes the logs)")
    args = ap.parse_args()
    budgets = sorted(args.budgets)

    cache = os.path.join(args.build, "models")
    subprocess.run([sys.executable, os.path.join(ROOT, "tests", "models", "export_models.py"),
                    "--out", cache], check=True)
    os.makedirs(args.work, exist_ok=True)
    # Each model transfers from the other network (its plain log in --work, from this run or
    # an earlier one).
    networks = ["resnet18", "mobilenet_v2"]
    others = {m: [o for o in networks if o != m] for m in args.models}
    modes = ["plain"] + ([] if args.no_transfer or len(args.models) < 2 else ["transfer"])
    if args.only_transfer:
        modes = ["transfer"]
    rows = []
    for mode in modes:  # every plain log exists before a transfer run reads one
        for threads in args.threads:
            for name in args.models:
                model_dir = os.path.join(cache, name)
                out_dir = os.path.join(args.work, f"{name}-{threads}t-{mode}")
                log = os.path.join(args.work, f"{name}-{threads}t-{mode}.jsonl")
                transfer = None
                if mode == "transfer":
                    transfer = os.path.join(args.work, f"{others[name][0]}-{threads}t-plain.jsonl")
                    if not os.path.exists(transfer):
                        sys.exit(f"{transfer}: no plain log to transfer from (run without "
                                 "--only-transfer first)")
                    # A transfer row is a fresh start, never a resume: no records, no saved
                    # cost models of an earlier transfer run.
                    for f in glob.glob(glob.escape(log) + "*"):
                        os.remove(f)
                if mode == "plain" or args.only_transfer:
                    rows.append({"model": name, "threads": threads, "run": "untuned",
                                 **latency(args, model_dir, out_dir, threads, None)})
                done, tune_s = 0.0, 0.0
                # The transfer goal is the shortest budget: what a borrowed log saves.
                for b in (budgets[:1] if transfer else budgets):
                    tune_s += tune(args, model_dir, log, b - done, threads, transfer)
                    done = b
                    per = sorted(trials_per_task(log).values())
                    row = {"model": name, "threads": threads,
                           "run": f"tuned {b:g} min" + (f", transfer from {others[name][0]}"
                                                         if transfer else ""),
                           "tune_s": tune_s, "trials": sum(per), "tasks": len(per),
                           "per_task": (per[0], statistics.median(per), per[-1]) if per else None,
                           **latency(args, model_dir, out_dir, threads, log)}
                    rows.append(row)
                    print(f"{name} {threads}T {row['run']}: kiln {row['kiln']:.2f} ms, "
                          f"{row['trials']} trials", file=sys.stderr)
                subprocess.run(kiln(args, "records", "plot", log, "-o", log[:-6] + ".svg"),
                               check=True, stdout=subprocess.DEVNULL)

    print(f"\nbatch 1, target {args.target}, kiln tune's embedded farm, "
          f"--layout-choices {args.layout_choices}; latency: median of {args.rounds} turns x "
          f"{args.runs} runs\n")
    peers = not args.no_peers
    print("| model | threads | kiln | kiln ms | " + ("ORT ms | PyTorch ms | kiln / ORT | " if peers else "")
          + "tuning s | trials | tasks | trials per task (min / median / max) |")
    print("|---|---|---|---|" + ("---|---|---|" if peers else "") + "---|---|---|---|")
    for r in rows:
        per = r.get("per_task")
        cells = [r["model"], str(r["threads"]), r["run"], f"{r['kiln']:.2f}"]
        if peers:
            cells += [f"{r['ORT']:.2f}", f"{r['PyTorch']:.2f}", f"{r['kiln'] / r['ORT']:.2f}"]
        cells += [f"{r['tune_s']:.0f}" if "tune_s" in r else "-", str(r.get("trials", "-")),
                  str(r.get("tasks", "-")), f"{per[0]} / {per[1]:g} / {per[2]}" if per else "-"]
        print("| " + " | ".join(cells) + " |")
    print(f"\ncurves (best GFLOPS against trials): {args.work}/*.svg")


if __name__ == "__main__":
    main()
