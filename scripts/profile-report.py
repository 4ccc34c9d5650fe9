#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the output of guest job "profile" into a table of guest
instructions per I/O by kernel function, raw device and stack side by side.

Reads PROFILE|device|I/Os|samples|period, FUNC|device|function|samples
and VIOPS|device|IOPS lines.  Under -icount shift=0 a sample of the
cpu-clock every PERIOD ns is PERIOD guest instructions, so a function's
instructions per I/O are its samples * PERIOD / I/Os (the interrupt-driven
workloads weigh each sample by the CPUs running beside it: samples are
decimals there).  Their TASK, MODULE, COUNT, BUSY, WAKE, SWITCH and
WINDOW lines add tables by task, by module and of events per I/O.  Exit status 2 when a
run is missing.

With --compare BASE.out OURS.out, one stack's profile on the base kernel
and on ours (make profile COMPARE=1): totals, by task, module, rough
category, events per I/O, and functions (each kernel's top N and the
largest differences); --points BASE.out OURS.out (again for more boots)
adds make bench's no-regression POINT lines of the stack (guest job bench
noregress), every run of each point, base against ours.

With --splice FILE REPORT..., puts tables made before into the profile
section of FILE (doc/results.md) instead; --splice-compare FILE REPORT
puts a comparison into its own section (the markers BEGIN_COMPARE and
END_COMPARE below).
"""
import argparse
import importlib
import math
import os
import re
import sys


def read_all(path):
    """Every line of a profile run, by device, in the order met."""
    devs = {}

    def dev(name):
        return devs.setdefault(name, {
            "profile": None, "funcs": {}, "viops": None, "tasks": {},
            "modules": {}, "counts": {}, "busy": {}, "window": None,
            "wake": {}, "switch": {}})

    release = ""
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\r\n")
            m = re.match(r"# guest: (\S+), job profile", line)
            if m:
                release = m.group(1)
            p = line.split("|")
            try:
                if p[0] == "PROFILE" and len(p) == 5:
                    dev(p[1])["profile"] = {"ios": int(p[2]), "samples": float(p[3]),
                                            "period": int(p[4])}
                elif p[0] == "VIOPS" and len(p) == 3 and p[2]:
                    dev(p[1])["viops"] = int(p[2])
                elif p[0] == "FUNC" and len(p) == 4:
                    dev(p[1])["funcs"][p[2]] = float(p[3])
                elif p[0] == "TASK" and len(p) == 5:
                    dev(p[1])["tasks"][(p[2], p[3])] = float(p[4])
                elif p[0] == "MODULE" and len(p) == 4:
                    dev(p[1])["modules"][p[2]] = float(p[3])
                elif p[0] == "COUNT" and len(p) == 5:
                    dev(p[1])["counts"][p[2]] = (float(p[3]), float(p[4]))
                elif p[0] in ("WAKE", "SWITCH") and len(p) == 5:
                    dev(p[1])[p[0].lower()][p[2]] = (float(p[3]), float(p[4]))
                elif p[0] == "BUSY" and len(p) == 4:
                    dev(p[1])["busy"][p[2]] = float(p[3])
                elif p[0] == "WINDOW" and len(p) == 4:
                    dev(p[1])["window"] = (float(p[2]), float(p[3]))
            except ValueError:
                continue
    return {n: d for n, d in devs.items() if d["profile"]}, release


def per_io(d, table):
    """A table of samples (function, task...) as instructions per I/O."""
    r = d["profile"]
    return {k: s * r["period"] / r["ios"] for k, s in table.items()}


def total(d):
    r = d["profile"]
    return r["samples"] * r["period"] / r["ios"]


def counts_per_io(d):
    return {k: c / ios for k, (c, ios) in d["counts"].items() if ios > 0}


def fmt(v, nd=0):
    return f"{v:.{nd}f}"


def sfmt(v, nd=0):
    return f"{v:+.{nd}f}"


def table(rows, head, nd=0, diff=True):
    """Markdown lines: rows of (name, [values]) with a difference of the
    last value and the first."""
    out = ["| " + " | ".join(head) + " |" + (" difference |" if diff else ""),
           "|---|" + "--:|" * (len(head) - 1) + ("--:|" if diff else "")]
    for name, vals in rows:
        cells = [fmt(v, nd) for v in vals]
        out.append(f"| {name} | " + " | ".join(cells) + " |" +
                   (f" {sfmt(vals[-1] - vals[0], nd)} |" if diff else ""))
    return out


def single(args):
    runs, _ = read_all(args.out)
    if not runs:
        sys.exit(2)
    names = list(runs)
    per = {n: per_io(runs[n], runs[n]["funcs"]) for n in names}
    last = names[-1]
    order = sorted(set().union(*per.values()),
                   key=lambda fn: -max(per[n].get(fn, 0) for n in names))
    weighted = any(runs[n]["tasks"] for n in names)
    print(f"### Profile: {args.title}" if args.title else "### Profile")
    print()
    print("Guest instructions per I/O by function (perf cpu-clock under -icount,")
    if weighted:
        print("one sample every %d ns of guest time on every CPU, weighed by the CPUs"
              % runs[last]["profile"]["period"])
        print("running beside it).")
    else:
        print("one sample every %d instructions on fio's CPU)."
              % runs[last]["profile"]["period"])
    print()
    rows, rest = [], [0.0] * len(names)
    for i, fn in enumerate(order):
        vals = [per[n].get(fn, 0.0) for n in names]
        if i >= args.top:
            rest = [a + b for a, b in zip(rest, vals)]
            continue
        rows.append((fn, vals))
    rows.append((f"(the other {max(0, len(order) - args.top)})", rest))
    rows.append(("**total**", [total(runs[n]) for n in names]))
    print("\n".join(table(rows, ["function"] + names, diff=len(names) > 1)))
    print()
    print("I/Os: " + ", ".join(f"{n} {runs[n]['profile']['ios']}" for n in names) + ".")
    if any(runs[n]["viops"] for n in names):
        print("Without perf: " + ", ".join(
            f"{n} {runs[n]['viops']} vIOPS ({1e9 / runs[n]['viops']:.0f} instructions per I/O)"
            for n in names if runs[n]["viops"]) + ".")
    if weighted:
        print()
        per_io_table("By task, instructions per I/O", "task", task_totals, runs, names)
        print()
        per_io_table("Events per I/O", "event", counts_per_io, runs, names, nd=3)
    return 0


def per_io_table(title, col, per_run, runs, names, nd=0):
    """A table of per_run(run)'s values, one row a key, one column a run."""
    vals = {n: per_run(runs[n]) for n in names}
    keys = sorted(set().union(*vals.values()))
    print(f"{title}:")
    print()
    print("\n".join(table([(k, [vals[n].get(k, 0.0) for n in names]) for k in keys],
                          [col] + names, nd=nd, diff=len(names) > 1)))


def task_totals(d):
    """Instructions per I/O by task, the CPUs summed."""
    out = {}
    for (task, _), v in per_io(d, d["tasks"]).items():
        out[task] = out.get(task, 0.0) + v
    return out


# Rough categories of kernel functions, by module first, then by name:
# the first that matches.
MODULE_CATEGORIES = [
    ("dm_integrity", "dm-integrity"),
    ("dm_bufio", "dm-bufio"),
    ("dm_mod", "device mapper core"),
    ("crc32c", "crc32c"),
    ("null_blk", "null_blk"),
]
NAME_CATEGORIES = [
    ("crc32c", r"crc32c|crypto_shash|shash_"),
    ("idle loop", r"^(do_idle|cpuidle_|cpu_idle|default_idle_call|arch_cpu_idle_|"
                  r"tick_nohz_|nohz_|cpu_startup_entry|call_cpuidle)"),
    ("io-wq", r"^(io_wq|io_worker|io_wqe|create_io_|io_queue_iowq|io_acct|"
              r"io_assign_current_work|io_get_next_work|io_task_worker_match|"
              r"io_queue_async|io_queue_sqe_fallback|io_should_retry_thread)"),
    ("task work, signals", r"^(task_work_|tctx_task_work|__task_work|io_req_task_work_add|"
                           r"io_req_normal_work_add|get_signal|do_notify_resume|"
                           r"io_fallback_tw|io_handle_tw_list|tctx_task_work_run|"
                           r"io_run_task_work|__io_run_task_work)"),
    ("io_uring", r"^(io_|__io_|__x64_sys_io_uring|io_uring)"),
    ("workqueue", r"(queue_work|__queue_work|worker_thread|process_one_work|insert_work|"
                  r"kick_pool|^wq_|pwq_|^worker_|queue_delayed_work|wq_worker|"
                  r"__flush_work|process_scheduled_works|assign_work|"
                  r"pwq_dec_nr_in_flight|wake_up_worker|need_more_worker)"),
    ("scheduler", r"^(__schedule|schedule|finish_task_switch|__switch_to|switch_mm|"
                  r"switch_fpu|pick_|put_prev|set_next|enqueue_|dequeue_|update_curr|"
                  r"update_load_avg|update_cfs|__update_load|try_to_wake_up|ttwu_|"
                  r"wake_up_|__wake_up|wake_q|select_task_rq|check_preempt|resched_|"
                  r"psi_|sched_|__resched|reweight|place_entity|activate_task|"
                  r"task_tick|__enqueue_entity|__dequeue_entity|update_rq_clock|"
                  r"raw_spin_rq|prepare_task_switch|context_switch|select_idle|"
                  r"set_task_cpu|avg_vruntime|update_min_vruntime|vruntime|"
                  r"__calc_delta|yield|do_sched_yield|newidle_balance|"
                  r"sched_balance|load_balance|cpuacct_|account_|__cgroup_account|"
                  r"cgroup_rstat|update_entity|entity_|__pick|wakeup_preempt|"
                  r"complete|wait_for_completion|do_wait_for_common|"
                  r"__wait_for_common|autoremove_wake|default_wake_function|"
                  r"__switch_to_asm|ret_from_fork|kthread|hrtick|__update_idle|"
                  r"update_blocked|idle_cpu|available_idle_cpu|cpus_share|"
                  r"update_sd|find_busiest|migrate_|move_queued|attach_|detach_|"
                  r"enqueue_task|dequeue_task|__set_cpus|balance_)"),
    ("block layer", r"^(blk_|__blk_|bio_|__bio_|submit_bio|__submit_bio|bdev_|blkdev_|"
                    r"bvec_|__bvec|update_io_ticks|part_|disk_|sbitmap|__sbitmap|"
                    r"__blkdev|iov_iter|__iov_iter|bio$|mempool_)"),
    ("memory, copies", r"^(kmem_cache_|kmalloc|__kmalloc|kfree|__kmem_|slab_|___slab|"
                       r"__slab|alloc_pages|__alloc_pages|free_unref|"
                       r"get_page_from_freelist|rmqueue|__free_pages|memcpy|memset|"
                       r"memmove|copy_|__memcpy|__memset|clear_page|_copy_|"
                       r"rep_movs|__put_user|__get_user|kvfree|kvmalloc|"
                       r"__check_object|check_heap|__virt_addr|__phys_addr)"),
    ("locking", r"(spin_lock|spin_unlock|^_raw_|queued_spin|^mutex_|rwsem|^down_|"
                r"^up_read|^up_write|^up$|native_queued|__pv_queued|lock_acquire|"
                r"lock_release|^preempt_count|^__preempt)"),
    ("RCU", r"^(rcu_|__rcu_|note_gp|call_rcu)"),
    ("perf", r"^(perf_|__perf|ctx_sched|event_sched|visit_groups|merge_sched|"
             r"x86_pmu|intel_pmu|amd_pmu|__intel_pmu)"),
    ("interrupts, IPIs, timers", r"^(asm_|sysvec_|__sysvec|irq_|__irq|handle_|apic_|"
                                 r"native_apic|x2apic|lapic|hrtimer_|__hrtimer|tick_|"
                                 r"ktime_|timekeeping|clockevents|read_tsc|"
                                 r"native_sched_clock|sched_clock|irqentry_|"
                                 r"common_interrupt|__common_interrupt|"
                                 r"smp_call_function|generic_smp_call|"
                                 r"flush_smp_call|__flush_smp_call|"
                                 r"native_send_call_func|send_call_function|"
                                 r"default_send_IPI|__x2apic_send|"
                                 r"native_smp_send_reschedule|.*send_IPI|"
                                 r"__do_softirq|handle_softirqs|irq_exit|"
                                 r"__irq_exit|run_timer|__run_timer|"
                                 r"update_process_times|timer_|__mod_timer|"
                                 r"lapic_next|native_write_msr|native_read_msr|"
                                 r"__sysvec_apic|local_clock|clockevents_)"),
    ("syscall entry, exit", r"^(entry_|do_syscall_64|syscall_|__x64_sys_|"
                            r"exit_to_user|arch_exit_to_user|"
                            r"syscall_exit_to_user_mode|fpregs_|"
                            r"switch_fpu_return|restore_fpregs|__fget|fget|"
                            r"fput|__fdget|fdget)"),
]


def category(fn):
    if fn.startswith("("):
        return fn
    m = re.search(r" \[(.+)\]$", fn)
    if m:
        mod = m.group(1)
        for pat, cat in MODULE_CATEGORIES:
            if pat in mod:
                return cat
        return "other modules"
    for cat, pat in NAME_CATEGORIES:
        if re.search(pat, fn):
            return cat
    return "other kernel"


def categories(funcs):
    out = {}
    for fn, v in funcs.items():
        c = category(fn)
        out[c] = out.get(c, 0.0) + v
    return out


def read_points(path, stack):
    """make bench's POINT lines of STACK: {workload: [vIOPS...]}, hipri 0."""
    pts = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            p = line.rstrip("\r\n").split("|")
            if p[0] == "POINT" and len(p) >= 6 and p[1] == stack and p[3] == "0":
                try:
                    pts.setdefault(p[2], []).append(int(p[5]))
                except ValueError:
                    pass
    return pts


def mean(xs):
    return sum(xs) / len(xs)


def sd(xs):
    if len(xs) < 2:
        return 0.0
    m = mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def points_section(args, stack, lines):
    base, ours = {}, {}
    for b_path, o_path in args.points:
        for pts, path in ((base, b_path), (ours, o_path)):
            for w, runs in read_points(path, stack).items():
                pts.setdefault(w, []).extend(runs)
    wls = [w for w in base if w in ours]
    if not wls:
        return
    n = min(min(len(base[w]), len(ours[w])) for w in wls)
    lines += [f"#### The points again: make bench's no-regression rows of {stack}", "",
              "Guest job `bench noregress 1 N` of the stack on each kernel (fio as the",
              "bench section's, one guest second a run, the journal written out before",
              "each): every run's vIOPS, their mean and relative standard deviation,",
              "and ours/base in instructions per I/O (base vIOPS / ours vIOPS; above",
              "1: ours costs more), of the means and the extremes (least: base's",
              "slowest run against ours' fastest; most: the reverse).", "",
              "| workload | base vIOPS | ours vIOPS | base mean (sd) | ours mean (sd) |"
              " ours/base | least | most |",
              "|---|---|---|--:|--:|--:|--:|--:|"]
    for w in wls:
        b, o = base[w], ours[w]
        mark = " **" if w == args.workload else ""
        lines.append(
            f"| {mark.strip()}{w}{mark.strip()} | {' '.join(map(str, b))} | "
            f"{' '.join(map(str, o))} | "
            f"{mean(b):.0f} ({100 * sd(b) / mean(b):.2f}%) | "
            f"{mean(o):.0f} ({100 * sd(o) / mean(o):.2f}%) | "
            f"{mean(b) / mean(o):.3f} | {min(b) / max(o):.3f} | {max(b) / min(o):.3f} |")
    lines += ["", f"Runs of each point: {n} or more on each kernel, in {len(args.points)} "
              f"boot(s) of each (" + "; ".join(
                  f"{os.path.basename(b)}, {os.path.basename(o)}" for b, o in args.points) + ")."]
    if args.workload in base and args.workload in ours:
        b, o = base[args.workload], ours[args.workload]
        lines += ["", f"{args.workload}: ours/base {mean(b) / mean(o):.3f} of the means, "
                  f"{min(b) / max(o):.3f} to {max(b) / min(o):.3f} over every pair of runs; "
                  f"base's runs spread {100 * (max(b) - min(b)) / mean(b):.2f}% of their mean, "
                  f"ours' {100 * (max(o) - min(o)) / mean(o):.2f}%."]
    lines.append("")


def compare(args):
    (b_runs, b_rel), (o_runs, o_rel) = read_all(args.compare[0]), read_all(args.compare[1])
    if not b_runs or not o_runs:
        sys.exit(2)
    stack = args.stack or list(o_runs)[-1]
    if stack not in b_runs or stack not in o_runs:
        sys.exit(2)
    b, o = b_runs[stack], o_runs[stack]
    lines = []
    if args.title:
        lines += [f"### {args.title}", ""]
    lines += [f"Base {b_rel or '?'} against ours {o_rel or '?'}: guest job profile "
              f"({os.path.basename(args.compare[0])}, {os.path.basename(args.compare[1])}).", ""]
    if args.points:
        points_section(args, stack, lines)

    # Totals, the raw device too (the control: the same on both kernels).
    lines += ["#### Totals", "",
              "Instructions per I/O: sampled (the weights' sum), and without perf",
              "(a run of its own: 10^9 / its vIOPS); \"sampled / span\": what the",
              "weights sum to against the samples' span of guest time (100% when",
              "the weighing accounts for every nanosecond).", ""]
    rows = []
    for name in [n for n in b_runs if n in o_runs]:
        bd, od = b_runs[name], o_runs[name]
        rows.append((f"{name}: sampled", [total(bd), total(od)]))
        if bd["viops"] and od["viops"]:
            rows.append((f"{name}: without perf", [1e9 / bd["viops"], 1e9 / od["viops"]]))
    lines += table(rows, ["", "base", "ours"])
    for name in [n for n in b_runs if n in o_runs]:
        ws = [(k, r[name]["window"]) for k, r in (("base", b_runs), ("ours", o_runs))
              if r[name]["window"]]
        if ws:
            lines.append("")
            lines.append(f"{name}, sampled / span: " + ", ".join(
                f"{k} {100 * w[1] / w[0]:.1f}% of {w[0] / 1e9:.3f} s" for k, w in ws) + ".")
    lines.append("")

    # By task, per CPU.
    bt, ot = per_io(b, b["tasks"]), per_io(o, o["tasks"])
    cpus = sorted({c for _, c in list(bt) + list(ot)}, key=int)
    tasks = sorted({t for t, _ in list(bt) + list(ot)},
                   key=lambda t: -max(sum(bt.get((t, c), 0) for c in cpus),
                                      sum(ot.get((t, c), 0) for c in cpus)))
    if tasks:
        lines += [f"#### {stack} by task", "",
                  "Instructions per I/O on each CPU, and both; \"interrupts in idle\":",
                  "the idle task's samples outside the halt; \"(idle)\": guest time",
                  "with every CPU halted.", "",
                  "| task | " + " | ".join(f"base cpu{c}" for c in cpus) + " | base | " +
                  " | ".join(f"ours cpu{c}" for c in cpus) + " | ours | difference |",
                  "|---|" + "--:|" * (2 * len(cpus) + 3)]
        for t in tasks:
            bv = [bt.get((t, c), 0.0) for c in cpus]
            ov = [ot.get((t, c), 0.0) for c in cpus]
            lines.append(f"| {t} | " + " | ".join(fmt(v) for v in bv) + f" | {fmt(sum(bv))} | " +
                         " | ".join(fmt(v) for v in ov) +
                         f" | {fmt(sum(ov))} | {sfmt(sum(ov) - sum(bv))} |")
        lines.append("")

    # Events per I/O, CPUs busy.
    bc, oc = counts_per_io(b), counts_per_io(o)
    evs = [e for e in sorted(set(bc) | set(oc)) if e != "cpu-clock"]
    if evs:
        lines += [f"#### {stack}: events per I/O", "",
                  "Context switches and IPIs (/proc) over the window of a run",
                  "without perf; tracepoints (perf stat) in a run of their own;",
                  "busy: each CPU's time out of idle in the first run.", ""]
        rows = [(e, [bc.get(e, 0.0), oc.get(e, 0.0)]) for e in evs]
        lines += table(rows, ["event", "base", "ours"], nd=3)
        for c in sorted(set(b["busy"]) | set(o["busy"])):
            lines.append(f"| {c} busy % | {b['busy'].get(c, 0):.1f} | "
                         f"{o['busy'].get(c, 0):.1f} | "
                         f"{o['busy'].get(c, 0) - b['busy'].get(c, 0):+.1f} |")
        lines.append("")

    # Who wakes whom, who runs after whom.
    for key, title, what in (("wake", "wakeups", "waker → wakee"),
                             ("switch", "context switches", "from → to")):
        bw = {k: c / i for k, (c, i) in b[key].items() if i > 0}
        ow = {k: c / i for k, (c, i) in o[key].items() if i > 0}
        edges = [e for e in sorted(set(bw) | set(ow), key=lambda e: -max(bw.get(e, 0), ow.get(e, 0)))
                 if max(bw.get(e, 0), ow.get(e, 0)) >= 0.005]
        if edges:
            lines += [f"#### {stack}: {title} per I/O, by task", "",
                      "Every sched_wakeup / sched_switch over a window of a run of its own;",
                      "kworker: any workqueue worker, idle: the idle task.", ""]
            lines += table([(e, [bw.get(e, 0.0), ow.get(e, 0.0)]) for e in edges],
                           [what, "base", "ours"], nd=3)
            lines.append("")

    bf, of = per_io(b, b["funcs"]), per_io(o, o["funcs"])
    bm, om = per_io(b, b["modules"]), per_io(o, o["modules"])
    allf = set(bf) | set(of)
    bcat, ocat = categories(bf), categories(of)
    cats = sorted(set(bcat) | set(ocat), key=lambda c: -abs(ocat.get(c, 0) - bcat.get(c, 0)))
    if args.brief:
        short(lines, stack, b, o, bf, of, allf, bcat, ocat, cats, bc, oc, evs, args)
        print("\n".join(lines))
        return 0
    if bm or om:
        lines += [f"#### {stack} by module", "", "Instructions per I/O.", ""]
        mods = sorted(set(bm) | set(om), key=lambda m: -max(bm.get(m, 0), om.get(m, 0)))
        lines += table([(m, [bm.get(m, 0.0), om.get(m, 0.0)]) for m in mods],
                       ["module", "base", "ours"])
        lines.append("")
    lines += [f"#### {stack} by rough category", "",
              "Instructions per I/O of the functions whose module or name matches",
              "(patterns in scripts/profile-report.py), largest difference first.", ""]
    lines += table([(c, [bcat.get(c, 0.0), ocat.get(c, 0.0)]) for c in cats],
                   ["category", "base", "ours"])
    lines.append("")

    def ftable(title, order):
        out = [f"#### {stack}: {title}", "",
               "Instructions per I/O; a module's functions carry its name.", ""]
        out += table([(fn, [bf.get(fn, 0.0), of.get(fn, 0.0)]) for fn in order[:args.top]],
                     ["function", "base", "ours"])
        out.append("")
        return out

    lines += ftable(f"base's top {args.top} functions", sorted(allf, key=lambda f: -bf.get(f, 0)))
    lines += ftable(f"ours' top {args.top} functions", sorted(allf, key=lambda f: -of.get(f, 0)))
    lines += ftable(f"the {args.top} largest differences",
                    sorted(allf, key=lambda f: -abs(of.get(f, 0) - bf.get(f, 0))))

    short(lines, stack, b, o, bf, of, allf, bcat, ocat, cats, bc, oc, evs, args)
    print("\n".join(lines))
    return 0


def short(lines, stack, b, o, bf, of, allf, bcat, ocat, cats, bc, oc, evs, args):
    """The differences in a few sentences."""
    tb, to = task_totals(b), task_totals(o)
    d_tasks = sorted(set(tb) | set(to), key=lambda t: -abs(to.get(t, 0) - tb.get(t, 0)))
    up = sorted(allf, key=lambda f: -(of.get(f, 0) - bf.get(f, 0)))[:6]
    down = sorted(allf, key=lambda f: of.get(f, 0) - bf.get(f, 0))[:6]
    lines += ["#### In short", ""]
    s = (f"- {stack}, ours − base: {sfmt(total(o) - total(b))} instructions per I/O sampled "
         f"({100 * (total(o) / total(b) - 1):+.1f}%)")
    if b["viops"] and o["viops"]:
        s += (f", {sfmt(1e9 / o['viops'] - 1e9 / b['viops'])} without perf "
              f"(ours/base {b['viops'] / o['viops']:.3f})")
    lines.append(s + ".")
    if b["viops"] and o["viops"]:
        lines.append("- What perf adds (sampled / without perf): "
                     f"base {100 * (total(b) * b['viops'] / 1e9 - 1):+.1f}%, "
                     f"ours {100 * (total(o) * o['viops'] / 1e9 - 1):+.1f}%.")
    for fn in args.check:
        if fn in bf and fn in of:
            lines.append(f"- {fn}, the same work per I/O on both kernels (a check of the "
                         f"attribution): base {bf[fn]:.0f}, ours {of[fn]:.0f} "
                         f"({100 * (of[fn] / bf[fn] - 1):+.1f}%).")
    lines.append("- By task: " + ", ".join(
        f"{t} {sfmt(to.get(t, 0) - tb.get(t, 0))}" for t in d_tasks) + ".")
    lines.append("- By category: " + ", ".join(
        f"{c} {sfmt(ocat.get(c, 0) - bcat.get(c, 0))}" for c in cats[:8]) + ".")
    lines.append("- Most up in ours: " + ", ".join(
        f"{f} {sfmt(of.get(f, 0) - bf.get(f, 0))}" for f in up) + ".")
    lines.append("- Most down in ours: " + ", ".join(
        f"{f} {sfmt(of.get(f, 0) - bf.get(f, 0))}" for f in down) + ".")
    if evs:
        lines.append("- Per I/O, base → ours: " + ", ".join(
            f"{e} {bc.get(e, 0):.2f} → {oc.get(e, 0):.2f}" for e in evs
            if max(bc.get(e, 0), oc.get(e, 0)) >= 0.01) + ".")
    lines.append("")


BEGIN = "<!-- profile-results: generated by make profile RESULTS=1, do not edit -->"
END = "<!-- profile-results end -->"
BEGIN_COMPARE = ("<!-- profile-compare: generated by make profile COMPARE=1 RESULTS=1,"
                 " do not edit -->")
END_COMPARE = "<!-- profile-compare end -->"


def splice(path, reports, begin=BEGIN, end=END):
    """Put the REPORTS (tables made before) between the markers of PATH."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    bench_report = importlib.import_module("bench-report")
    body = "\n".join(open(r, encoding="utf-8").read() for r in reports)
    bench_report.splice_results(path, body, begin, end)


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--splice":
        splice(sys.argv[2], sys.argv[3:])
        return 0
    if len(sys.argv) > 2 and sys.argv[1] == "--splice-compare":
        splice(sys.argv[2], sys.argv[3:], BEGIN_COMPARE, END_COMPARE)
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--title", default="")
    ap.add_argument("--compare", nargs=2, metavar=("BASE", "OURS"))
    ap.add_argument("--stack", default="")
    ap.add_argument("--points", nargs=2, action="append", metavar=("BASE", "OURS"))
    ap.add_argument("--workload", default="io_uring/4k-randread-qd16")
    ap.add_argument("--brief", action="store_true",
                    help="--compare: totals, by task, events and the summary only")
    ap.add_argument("--check", action="append", default=None, metavar="FUNCTION",
                    help="--compare: a function doing the same work per I/O on both "
                         "kernels, whose figures show the attribution's error "
                         "(default crc32_body)")
    ap.add_argument("out", nargs="?")
    args = ap.parse_args()
    if args.check is None:
        args.check = ["crc32_body"]
    if args.compare:
        return compare(args)
    if not args.out:
        ap.error("an output of guest job profile, or --compare")
    return single(args)


if __name__ == "__main__":
    sys.exit(main())
