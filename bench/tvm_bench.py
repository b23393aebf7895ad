#!/usr/bin/env python3
"""TVM as a peer (issue 35): Apache TVM untuned and after MetaSchedule tuning, against kiln
untuned and after `kiln tune`, with ONNX Runtime as a reference, on ONNX models at batch 1.

For every model the script prints, side by side: latency (ms, median), tuning wall time,
trials measured and trials per minute of TVM's MetaSchedule and of kiln's tuner, and the
ratios the issue sets goals for (kiln untuned / TVM tuned, kiln tuned / TVM tuned, kiln
trials per minute / TVM trials per minute).

TVM is a benchmark peer only, never a dependency of kiln; this script installs nothing.
Make a separate environment for it, apache-tvm-ffi pinned to the release this script was
run with (issue 35 asks for the pin):

  python3 -m venv build/tvmenv
  build/tvmenv/bin/pip install "apache-tvm==0.27.0.post1" apache-tvm-ffi==0.1.14.post1 \\
      onnx numpy onnxruntime cloudpickle xgboost psutil

(cloudpickle, xgboost and psutil are MetaSchedule's undeclared needs: its builder and runner
pools, its default cost model.)

and run it with that interpreter (onnxruntime is optional: without it the ORT column is "-"):

  build/tvmenv/bin/python bench/tvm_bench.py                 # issue budgets: many hours
  build/tvmenv/bin/python bench/tvm_bench.py --quick         # a smoke test, ~12 minutes
  taskset -c 1 build/tvmenv/bin/python bench/tvm_bench.py --models resnet18 \\
      --tvm-budget-min 5 --kiln-budget-min 3                 # one core only

Models: MODELS_DIR/NAME/model.onnx with NAME/input.npy (as tests/models/export_models.py
writes them); symbolic input dimensions (the exported models' "batch") are bound to 1.

How the budgets work
  MetaSchedule has no wall-clock budget, only trial counts. The script therefore runs one
  tuning session per model in a child process (this script's hidden `_tvm-tune` command)
  with a trial budget far beyond reach, copies its JSON database whenever a budget in
  --tvm-budget-min has elapsed, and kills the child's process group at the largest budget.
  Each copy is then compiled (meta_schedule.relax_integration.compile_relax) and timed, so
  one 2-hour session yields the 30-minute and the 2-hour rows. A record cut off by the kill
  (the database is JSON lines) is dropped. Trials = records in the database copy (each a
  measured candidate), over the wall time from the child's start (task extraction
  included) to the copy.
  The task scheduler is round-robin by default: it commits a task's measured batch to the
  database when it next picks a task. TVM's default, gradient, commits nothing until every
  task has had its first batch (with 19 tasks and 64 candidates each: over an hour on one
  core), so a snapshot taken earlier is empty (--tvm-scheduler gradient to use it anyway).
  MetaSchedule's builder starts fresh worker processes for every batch, and each imports
  tvm.s_tir.tensor_intrin (about a minute on a slow core) before its first build; with
  TVM's 30 s build timeout every candidate then fails, hence --tvm-build-timeout 120.
  `kiln tune` takes --time-budget; the budgets in --kiln-budget-min are cumulative: the log
  is resumed up to each next budget (nothing is measured twice). Trials = the log's records
  less the end-of-tune re-measurements, over the tuning wall time.

Threads: --threads (default 1) sets TVM_NUM_THREADS, the TVM target's num-cores, kiln's
--threads and ORT's intra-op threads. MetaSchedule's builder gets as many workers as the
process may use CPUs (os.sched_getaffinity; so `taskset -c 1` gives one).
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

import numpy as np
import onnx

RE_MEASURE = "re-measurement of the best"


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ---------------------------------------------------------------- models


def input_spec(model_path, symbol_value=1):
    """The graph inputs that are not initializers: [(name, shape)], symbols bound."""
    m = onnx.load(model_path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    spec = []
    for i in m.graph.input:
        if i.name in inits:
            continue
        dims = [d.dim_value if d.HasField("dim_value") else symbol_value
                for d in i.type.tensor_type.shape.dim]
        spec.append((i.name, dims))
    if len(spec) != 1:
        sys.exit(f"{model_path}: expected one input, found {[n for n, _ in spec]}")
    return spec[0]


# ---------------------------------------------------------------- TVM


def tvm_target(threads):
    import tvm
    cpu = tvm.target.codegen.llvm_get_system_cpu()  # e.g. znver3; what -mcpu=native picks
    # TVM 0.27 refuses "llvm -mcpu=..." strings: targets are dicts now.
    return tvm.target.Target({"kind": "llvm", "mcpu": cpu, "num-cores": threads})


def tvm_import(model_path):
    from tvm.relax.frontend.onnx import from_onnx
    name, shape = input_spec(model_path)
    # Weights stay in the module as constants (keep_params_in_input=False).
    return from_onnx(onnx.load(model_path), shape_dict={name: shape})


def tvm_fuse_for_tuning(mod, target):
    """The passes compile_relax runs before it applies the database, so that the tuned
    workloads are the ones it looks up."""
    import tvm
    from tvm import relax
    from tvm.relax import pipeline as pl
    try:
        dispatch = list(pl.library_dispatch_passes(target))
    except (ValueError, AttributeError):
        dispatch = []
    seq = tvm.transform.Sequential(dispatch + [
        relax.transform.LegalizeOps(),
        relax.transform.AnnotateTIROpPattern(),
        relax.transform.FoldConstant(),
        relax.transform.FuseOps(),
        relax.transform.FuseTIR(),
    ])
    with target, tvm.transform.PassContext(opt_level=3):
        return seq(mod)


def tvm_time(executable, x, runs):
    import tvm
    from tvm import relax
    dev = tvm.cpu()
    vm = relax.VirtualMachine(executable, dev)
    arg = tvm.runtime.tensor(x, dev)
    out = vm["main"](arg)  # first run, untimed
    out = out[0] if isinstance(out, (list, tuple)) or type(out).__name__ == "Array" else out
    res = vm.time_evaluator("main", dev, number=1, repeat=runs)(arg)
    return res.median * 1e3, out.numpy()


def tvm_untuned(model_path, x, args):
    import tvm
    target = tvm_target(args.threads)
    mod = tvm_import(model_path)
    t0 = time.perf_counter()
    ex = tvm.compile(mod, target)  # the default CPU pipeline: legalized TE, no schedules
    build_s = time.perf_counter() - t0
    ms, out = tvm_time(ex, x, args.tvm_untuned_runs)
    return ms, build_s, out


def tvm_tuned(model_path, x, db_dir, args):
    from tvm.s_tir import meta_schedule as ms
    target = tvm_target(args.threads)
    mod = tvm_import(model_path)
    db = ms.database.JSONDatabase(
        path_workload=os.path.join(db_dir, "database_workload.json"),
        path_tuning_record=os.path.join(db_dir, "database_tuning_record.json"),
        allow_missing=True)
    t0 = time.perf_counter()
    ex = ms.relax_integration.compile_relax(db, mod, target, params=None)
    build_s = time.perf_counter() - t0
    ms_, out = tvm_time(ex, x, args.runs)
    return ms_, build_s, out


def tvm_tune_child(args):
    """The hidden `_tvm-tune` command: tunes until killed (or the trial budget is met)."""
    from tvm.s_tir import meta_schedule as ms
    target = tvm_target(args.threads)
    mod = tvm_fuse_for_tuning(tvm_import(args.model), target)
    workers = len(os.sched_getaffinity(0))
    log(f"MetaSchedule: {target}, {workers} builder worker(s), "
        f"{args.trials_per_iter} trials per iteration")
    ms.relax_integration.tune_relax(
        mod, params={}, target=target, work_dir=args.work, max_trials_global=args.max_trials,
        num_trials_per_iter=args.trials_per_iter,
        builder=ms.builder.LocalBuilder(max_workers=workers, timeout_sec=args.build_timeout),
        runner=ms.runner.LocalRunner(), database="json", cost_model="xgb",
        strategy="evolutionary", task_scheduler=args.scheduler, seed=args.seed)
    log("MetaSchedule: trial budget reached")


def copy_database(src, dst):
    """Copies the JSON-lines database, without a last line the kill may have cut off.
    Returns the number of tuning records."""
    os.makedirs(dst, exist_ok=True)
    n = 0
    for f in ("database_workload.json", "database_tuning_record.json"):
        lines = []
        if os.path.exists(os.path.join(src, f)):
            with open(os.path.join(src, f)) as fh:
                for line in fh:
                    try:
                        json.loads(line)
                    except ValueError:
                        continue
                    lines.append(line if line.endswith("\n") else line + "\n")
        with open(os.path.join(dst, f), "w") as fh:
            fh.writelines(lines)
        if f == "database_tuning_record.json":
            n = len(lines)
    return n


def tvm_tune(model_path, work, budgets_min, args):
    """Runs the child for max(budgets); returns [(budget, db copy, trials, wall s)]."""
    tune_dir = os.path.join(work, "ms")
    shutil.rmtree(tune_dir, ignore_errors=True)
    os.makedirs(tune_dir)
    cmd = [sys.executable, os.path.abspath(__file__), "_tvm-tune", "--model", model_path,
           "--work", tune_dir, "--threads", str(args.threads),
           "--trials-per-iter", str(args.tvm_trials_per_iter),
           "--max-trials", str(args.tvm_max_trials), "--seed", str(args.seed),
           "--build-timeout", str(args.tvm_build_timeout), "--scheduler", args.tvm_scheduler]
    out = open(os.path.join(work, "ms_tune.log"), "w")
    t0 = time.perf_counter()
    child = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    snaps = []
    try:
        for b in sorted(budgets_min):
            deadline = t0 + b * 60
            while child.poll() is None and time.perf_counter() < deadline:
                time.sleep(min(5.0, max(0.0, deadline - time.perf_counter())))
            wall = time.perf_counter() - t0
            dst = os.path.join(work, f"db_{b:g}min")
            n = copy_database(tune_dir, dst)
            snaps.append((b, dst, n, wall))
            log(f"TVM tune {b:g} min: {n} trials in {wall:.0f} s"
                + ("" if child.poll() is None else f" (child exited, rc {child.returncode})"))
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGTERM)  # the builder/runner pools die with it
            try:
                child.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()
        out.close()
    return snaps


# ---------------------------------------------------------------- kiln and ORT


def kiln_compile(args, model_path, out_dir, records=None):
    cmd = [args.kiln, "compile", model_path, "--target", args.target, "--input-shape",
           "batch=1", "-o", out_dir] + (["--records", records] if records else [])
    subprocess.run(cmd, check=True, capture_output=True, text=True)


def kiln_time(args, out_dir, in_name, in_npy):
    text = subprocess.run([args.kiln, "run", out_dir, "--input", f"{in_name}={in_npy}",
                           "--runs", str(args.runs), "--threads", str(args.threads)],
                          check=True, capture_output=True, text=True).stdout
    m = re.search(r"median ([\d.]+) ms", text)
    if not m:
        sys.exit(f"kiln run: no latency in its output:\n{text}")
    return float(m.group(1))


def kiln_trials(log_path):
    n = 0
    with open(log_path) as f:
        for line in f:
            if RE_MEASURE not in line:
                n += 1
    return n


def kiln_tune(args, model_path, work, budgets_min):
    """Cumulative budgets on one log; returns [(budget, log, trials, wall s)]."""
    log_path = os.path.join(work, "kiln_tune.jsonl")
    if os.path.exists(log_path):
        os.remove(log_path)
    steps, done, wall = [], 0.0, 0.0
    for b in sorted(budgets_min):
        cmd = [args.kiln, "tune", model_path, "--target", args.target, "--input-shape",
               "batch=1", "--trials", "100000000", "--time-budget", f"{(b - done) * 60:.0f}s",
               "--threads", str(args.threads), "--log", log_path]
        t0 = time.perf_counter()
        with open(os.path.join(work, "kiln_tune.out"), "a") as out:
            subprocess.run(cmd, check=True, stdout=out, stderr=subprocess.STDOUT)
        wall += time.perf_counter() - t0
        done = b
        snap = os.path.join(work, f"kiln_tune_{b:g}min.jsonl")
        shutil.copyfile(log_path, snap)
        steps.append((b, snap, kiln_trials(snap), wall))
        log(f"kiln tune {b:g} min: {steps[-1][2]} trials in {wall:.0f} s")
    return steps


def ort_time(model_path, in_name, x, args):
    try:
        import onnxruntime as ort
    except ImportError:
        return None, None
    opts = ort.SessionOptions()
    opts.intra_op_num_threads, opts.inter_op_num_threads = args.threads, 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    s = ort.InferenceSession(model_path, opts, providers=["CPUExecutionProvider"])
    out = s.run(None, {in_name: x})[0]
    times = []
    for _ in range(args.runs):
        t = time.perf_counter()
        s.run(None, {in_name: x})
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times), out


# ---------------------------------------------------------------- main


def fmt(v, spec=".1f"):
    return "-" if v is None else format(v, spec)


def bench_model(args, name):
    model_dir = os.path.join(args.models_dir, name)
    model_path = os.path.join(model_dir, "model.onnx")
    in_npy = os.path.join(model_dir, "input.npy")
    in_name, shape = input_spec(model_path)
    x = np.load(in_npy).astype(np.float32)
    if list(x.shape) != shape:
        sys.exit(f"{in_npy}: shape {list(x.shape)}, the model wants {shape}")
    work = os.path.join(args.work, name)
    os.makedirs(work, exist_ok=True)
    r = {"model": name}

    r["ort_ms"], ref = ort_time(model_path, in_name, x, args)
    log(f"{name}: ORT {fmt(r['ort_ms'], '.2f')} ms")

    def check(tag, out):
        if ref is not None:
            err = float(np.max(np.abs(out.reshape(ref.shape) - ref)))
            r[f"{tag}_maxerr"] = err
            log(f"{name}: {tag} max |diff| to ORT {err:.2e}")

    if not args.no_tvm:
        r["tvm_untuned_ms"], r["tvm_untuned_build_s"], out = tvm_untuned(model_path, x, args)
        log(f"{name}: TVM untuned {r['tvm_untuned_ms']:.1f} ms "
            f"(build {r['tvm_untuned_build_s']:.1f} s)")
        check("tvm_untuned", out)
        r["tvm"] = []
        for b, db, n, wall in tvm_tune(model_path, work, args.tvm_budget_min, args):
            t_ms, build_s, out = tvm_tuned(model_path, x, db, args) if n else (None, None, None)
            r["tvm"].append({"budget_min": b, "ms": t_ms, "trials": n, "tune_s": wall,
                             "trials_per_min": n / (wall / 60), "build_s": build_s})
            log(f"{name}: TVM tuned {b:g} min {fmt(t_ms)} ms, {n} trials")
            if out is not None:
                check(f"tvm_{b:g}min", out)

    kdir = os.path.join(work, "kiln_untuned")
    kiln_compile(args, model_path, kdir)
    r["kiln_untuned_ms"] = kiln_time(args, kdir, in_name, in_npy)
    log(f"{name}: kiln untuned {r['kiln_untuned_ms']:.2f} ms")
    r["kiln"] = []
    if not args.no_kiln_tune:
        for b, lg, n, wall in kiln_tune(args, model_path, work, args.kiln_budget_min):
            kdir = os.path.join(work, f"kiln_{b:g}min")
            kiln_compile(args, model_path, kdir, lg)
            k_ms = kiln_time(args, kdir, in_name, in_npy)
            r["kiln"].append({"budget_min": b, "ms": k_ms, "trials": n, "tune_s": wall,
                              "trials_per_min": n / (wall / 60)})
            log(f"{name}: kiln tuned {b:g} min {k_ms:.2f} ms, {n} trials")
    return r


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def print_table(rows, args):
    print(f"\nbatch 1, {args.threads} thread(s), latency = median of {args.runs} runs "
          f"(TVM untuned: {args.tvm_untuned_runs}); budgets are tuning wall time")
    head = ["model", "ORT ms", "TVM untuned ms", "TVM tuned (budget) ms", "TVM trials",
            "TVM trials/min", "kiln untuned ms", "kiln tuned (budget) ms", "kiln trials",
            "kiln trials/min", "kiln untuned / TVM tuned", "kiln tuned / TVM tuned",
            "kiln ÷ TVM trials/min"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        tvm = r.get("tvm") or [{}]
        kil = r["kiln"] or [{}]
        for i in range(max(len(tvm), len(kil))):
            t = tvm[min(i, len(tvm) - 1)]
            k = kil[min(i, len(kil) - 1)]
            tb = f" ({t['budget_min']:g} min)" if t else ""
            kb = f" ({k['budget_min']:g} min)" if k else ""
            cells = [r["model"], fmt(r["ort_ms"]), fmt(r.get("tvm_untuned_ms")),
                     fmt(t.get("ms")) + tb, fmt(t.get("trials"), "d"),
                     fmt(t.get("trials_per_min")), fmt(r["kiln_untuned_ms"]),
                     fmt(k.get("ms")) + kb, fmt(k.get("trials"), "d"),
                     fmt(k.get("trials_per_min")),
                     fmt(ratio(r["kiln_untuned_ms"], t.get("ms")), ".2f"),
                     fmt(ratio(k.get("ms"), t.get("ms")), ".2f"),
                     fmt(ratio(k.get("trials_per_min"), t.get("trials_per_min")), ".1f")]
            print("| " + " | ".join(cells) + " |")
    print("\nissue 35 goals: kiln untuned <= 0.8x TVM tuned 2 h; kiln tuned 30 min <= 0.5x "
          "TVM tuned 2 h; kiln trials/min >= 10x TVM's")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "_tvm-tune":
        ap = argparse.ArgumentParser(prog="tvm_bench.py _tvm-tune")
        ap.add_argument("_cmd")
        ap.add_argument("--model", required=True)
        ap.add_argument("--work", required=True)
        ap.add_argument("--threads", type=int, default=1)
        ap.add_argument("--trials-per-iter", type=int, default=64)
        ap.add_argument("--max-trials", type=int, default=1000000)
        ap.add_argument("--seed", type=int, default=0)
        ap.add_argument("--build-timeout", type=float, default=120)
        ap.add_argument("--scheduler", default="round-robin")
        args = ap.parse_args()
        os.environ["TVM_NUM_THREADS"] = str(args.threads)
        tvm_tune_child(args)
        return

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", nargs="+", default=["resnet18", "mobilenet_v2"])
    ap.add_argument("--models-dir", default="build/models",
                    help="NAME/model.onnx and NAME/input.npy under it")
    ap.add_argument("--tvm-budget-min", type=float, nargs="+", default=[30, 120],
                    help="MetaSchedule wall-clock budgets (one session, snapshots)")
    ap.add_argument("--kiln-budget-min", type=float, nargs="+", default=[10, 30],
                    help="kiln tune budgets (cumulative, one resumed log)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--kiln", default="build/tools/kiln")
    ap.add_argument("--target", default="host", help="kiln's target preset")
    ap.add_argument("--work", default="build/tvm_bench",
                    help="databases, logs and compiled models (overwritten)")
    ap.add_argument("--runs", type=int, default=20, help="timed runs per latency")
    ap.add_argument("--tvm-untuned-runs", type=int, default=5,
                    help="timed runs of untuned TVM (seconds each)")
    ap.add_argument("--tvm-trials-per-iter", type=int, default=64,
                    help="MetaSchedule num_trials_per_iter (its default)")
    ap.add_argument("--tvm-max-trials", type=int, default=1000000,
                    help="max_trials_global; the wall-clock budget normally ends the session")
    ap.add_argument("--tvm-build-timeout", type=float, default=120,
                    help="seconds a MetaSchedule candidate may take to build (TVM's default, 30, "
                    "is too short where its build worker's `import tvm.s_tir.tensor_intrin` "
                    "alone takes longer: every candidate then times out)")
    ap.add_argument("--tvm-scheduler", default="round-robin", choices=["round-robin", "gradient"],
                    help="MetaSchedule task scheduler (see the docstring: gradient, TVM's "
                    "default, commits nothing to the database before every task had a batch)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-tvm", action="store_true", help="only ORT and kiln")
    ap.add_argument("--no-kiln-tune", action="store_true")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: ResNet-18 only unless --models is given, TVM 5 min, "
                    "kiln 3 min, fewer runs")
    args = ap.parse_args()
    if args.quick:
        given = set(sys.argv)
        if "--models" not in given:
            args.models = ["resnet18"]
        if "--tvm-budget-min" not in given:
            args.tvm_budget_min = [5]
        if "--kiln-budget-min" not in given:
            args.kiln_budget_min = [3]
        if "--runs" not in given:
            args.runs = 10
        if "--tvm-untuned-runs" not in given:
            args.tvm_untuned_runs = 2
        if "--tvm-trials-per-iter" not in given:
            args.tvm_trials_per_iter = 16
    # Before TVM's runtime starts its thread pool (it reads this once).
    os.environ["TVM_NUM_THREADS"] = str(args.threads)
    os.environ["KILN_NUM_THREADS"] = str(args.threads)
    if not os.path.exists(args.kiln):
        sys.exit(f"{args.kiln}: no kiln binary (build it, or pass --kiln)")
    os.makedirs(args.work, exist_ok=True)
    if not args.no_tvm:
        import tvm
        import tvm_ffi
        log(f"TVM {tvm.__version__}, apache-tvm-ffi {tvm_ffi.__version__}, "
            f"target {tvm_target(args.threads)}")
    rows = [bench_model(args, name) for name in args.models]
    print_table(rows, args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
