#!/usr/bin/env python3
"""Do the knobs added to the templates since their first logs help? Old space against new.

For each task it tunes twice with `kiln tune` and the same budget and search: once in the
template's current space, once with --old-space (every knob that has a legacy default pinned
to it: the space the first logs were tuned in). Timings taken while tuning on a busy machine
rank configs poorly, so the --top best configs of each log are measured again side by side
(`kiln inspect --run`, alternating A B C ... for --rounds rounds, each round's figure a
median of --repeat calls) and the fastest of each space is its best; then so is the new
best with each of its added knobs put back to its old value alone: the knobs whose reset
costs the most carry the gain. The figures are the best round (on a shared machine, the
one least disturbed by other processes) and, in brackets, the median round.
Nothing is asserted: the numbers go in bench/README.md.

  bench/space_gain.py [--kiln build/tools/kiln] [--trials 200] [--tuner xgb] [--rounds 7]
                      [--task NAME]... [--target T] [--out DIR] [--measure-only]

--target runs the tasks for another preset than x86-avx512 (x86-avx2 on a machine without
AVX-512: the knobs were added for other microarchitectures than the one the fallbacks were
chosen on).

--measure-only re-measures the bests of the logs an earlier run left in DIR.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

TASKS = {
    "dense-512": "--op dense --shape 512,512,512 --target x86-avx512",
    "dense-1024": "--op dense --shape 1024,1024,1024 --target x86-avx512",
    "conv-64-3x3-56": "--op conv2d --shape 1,64,56,56,64,3,3 --pad 1 --target x86-avx512",
    "conv-256-1x1-14": "--op conv2d --shape 1,256,14,14,256,1,1 --target x86-avx512",
    "dw-96-3x3-112": "--op conv2d --shape 1,96,112,112,96,3,3 --pad 1 --groups 96 --target x86-avx512",
}


def pinned_knobs(log):
    """The knobs that kept one value over a whole --old-space run: the pinned ones (and any
    knob with a single choice, which a reset leaves unchanged)."""
    values = {}
    with open(log) as f:
        for line in f:
            for k, v in json.loads(line)["config"].items():
                values.setdefault(k, set()).add(v)
    return {k: next(iter(v)) for k, v in values.items() if len(v) == 1}


def top_configs(log, k):
    """The configs of the log's k best correct records (lowest mean cost), and the template."""
    best = {}
    template = None
    with open(log) as f:
        for line in f:
            r = json.loads(line)
            res = r["result"]
            if res["error"] != "ok" or not res["costs"]:
                continue
            cost = sum(res["costs"]) / len(res["costs"])
            key = json.dumps(r["config"], sort_keys=True)
            best[key] = min(cost, best.get(key, cost))
            template = r["task"]["template"]
    ranked = sorted(best, key=best.get)[:k]
    return [json.loads(c) for c in ranked], template


def tune(kiln, args, tuner, trials, log, old_space):
    if os.path.exists(log):
        os.remove(log)
    cmd = [kiln, "tune"] + args.split() + ["--tuner", tuner, "--trials", str(trials), "--log",
                                           log, "--quiet"] + (["--old-space"] if old_space else [])
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def run_ms(kiln, args, template, config, repeat):
    out = subprocess.run([kiln, "inspect"] + args.split() +
                         ["--template", template, "--config", json.dumps(config), "--run",
                          "--json", "--repeat", str(repeat)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["time_ms"]


def side_by_side(kiln, args, template, configs, rounds, repeat):
    """Each config's ms per round, measured in turn, round after round."""
    times = [[] for _ in configs]
    for _ in range(rounds):
        for i, c in enumerate(configs):
            times[i].append(run_ms(kiln, args, template, c, repeat))
    return times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", default="build/tools/kiln")
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--tuner", default="xgb")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--measure-only", action="store_true")
    ap.add_argument("--top", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--task", action="append")
    ap.add_argument("--target", default="x86-avx512")
    ap.add_argument("--out", default="space-gain")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for name in a.task or list(TASKS):
        args = TASKS[name].replace("--target x86-avx512", f"--target {a.target}")
        new_log = os.path.join(a.out, f"{name}.new.jsonl")
        old_log = os.path.join(a.out, f"{name}.old.jsonl")
        if not a.measure_only:
            tune(a.kiln, args, a.tuner, a.trials, new_log, False)
            tune(a.kiln, args, a.tuner, a.trials, old_log, True)
        news, template = top_configs(new_log, a.top)
        olds, old_template = top_configs(old_log, a.top)
        assert template == old_template, (template, old_template)
        samples = side_by_side(a.kiln, args, template, news + olds, a.rounds, a.repeat)
        i_new = min(range(len(news)), key=lambda i: min(samples[i]))
        i_old = len(news) + min(range(len(olds)), key=lambda i: min(samples[len(news) + i]))
        new, old = news[i_new], olds[i_old - len(news)]
        # The new best with one added knob at a time put back to its old value.
        legacy = pinned_knobs(old_log)
        resets = {k: dict(new, **{k: v}) for k, v in legacy.items() if k in new and new[k] != v}
        # The resets side by side with the new best again.
        ablation = side_by_side(a.kiln, args, template, [new] + list(resets.values()),
                                a.rounds, a.repeat)
        best = [min(samples[i_new]), min(samples[i_old])]
        med = [statistics.median(samples[i_new]), statistics.median(samples[i_old])]
        print(f"\n== {name} ({template}), {a.tuner} {a.trials} trials per space, top {a.top} "
              f"of each, {a.rounds} rounds side by side: best round (median round) in ms")
        print(f"new best {json.dumps(new)}: {best[0]:.4f} ({med[0]:.4f})")
        print(f"old best {json.dumps(old)}: {best[1]:.4f} ({med[1]:.4f})")
        print(f"old/new: {best[1] / best[0]:.3f}x ({med[1] / med[0]:.3f}x)")
        base_b, base_m = min(ablation[0]), statistics.median(ablation[0])
        print(f"  new best again: {base_b:.4f} ({base_m:.4f})")
        for knob, t in zip(resets, ablation[1:]):
            b, m = min(t), statistics.median(t)
            print(f"  new best with {knob}={legacy[knob]}: {b:.4f} ({m:.4f}), "
                  f"{b / base_b:.3f}x ({m / base_m:.3f}x) the new best")

if __name__ == "__main__":
    sys.exit(main())
