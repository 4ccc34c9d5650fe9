#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the output of guest job "profile" into a table of guest
instructions per I/O by kernel function, raw device and stack side by side.

Reads PROFILE|device|I/Os|samples|period, FUNC|device|function|samples
and VIOPS|device|IOPS lines.  Under -icount shift=0 a sample of the cpu-clock every PERIOD ns is
PERIOD guest instructions, so a function's instructions per I/O are its
samples * PERIOD / I/Os.  Exit status 2 when a run is missing.
"""
import argparse
import sys


def read(path):
    runs, funcs, viops = {}, {}, {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.rstrip("\r\n").split("|")
            if parts[0] == "PROFILE" and len(parts) == 5:
                runs[parts[1]] = {"ios": int(parts[2]), "samples": int(parts[3]),
                                  "period": int(parts[4])}
            elif parts[0] == "VIOPS" and len(parts) == 3 and parts[2]:
                viops[parts[1]] = int(parts[2])
            elif parts[0] == "FUNC" and len(parts) == 4:
                funcs.setdefault(parts[1], {})[parts[2]] = int(parts[3])
    return runs, funcs, viops


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--title", default="")
    ap.add_argument("out")
    args = ap.parse_args()
    runs, funcs, viops = read(args.out)
    if not runs:
        sys.exit(2)
    names = list(runs)
    per_io = {}
    for n in names:
        r = runs[n]
        per_io[n] = {fn: s * r["period"] / r["ios"] for fn, s in funcs.get(n, {}).items()}
    last = names[-1]
    order = sorted(set().union(*per_io.values()),
                   key=lambda fn: -max(per_io[n].get(fn, 0) for n in names))
    print(f"Profile: {args.title}" if args.title else "Profile")
    print()
    print("Guest instructions per I/O by function (perf cpu-clock under -icount,")
    print("one sample every %d instructions on fio's CPU)." % runs[last]["period"])
    print()
    head = " | ".join(names)
    print(f"| function | {head} |" + (" difference |" if len(names) > 1 else ""))
    print("|---|" + "--:|" * len(names) + ("--:|" if len(names) > 1 else ""))
    rest = {n: 0.0 for n in names}
    for i, fn in enumerate(order):
        vals = [per_io[n].get(fn, 0.0) for n in names]
        if i >= args.top:
            for n, v in zip(names, vals):
                rest[n] += v
            continue
        diff = f" {vals[-1] - vals[0]:+.0f} |" if len(names) > 1 else ""
        print(f"| {fn} | " + " | ".join(f"{v:.0f}" for v in vals) + " |" + diff)
    vals = [rest[n] for n in names]
    diff = f" {vals[-1] - vals[0]:+.0f} |" if len(names) > 1 else ""
    print(f"| (the other {max(0, len(order) - args.top)}) | " +
          " | ".join(f"{v:.0f}" for v in vals) + " |" + diff)
    tot = [runs[n]["samples"] * runs[n]["period"] / runs[n]["ios"] for n in names]
    diff = f" {tot[-1] - tot[0]:+.0f} |" if len(names) > 1 else ""
    print("| **total** | " + " | ".join(f"{v:.0f}" for v in tot) + " |" + diff)
    print()
    print("I/Os: " + ", ".join(f"{n} {runs[n]['ios']}" for n in names) + ".")
    if viops:
        print("Without perf: " + ", ".join(
            f"{n} {viops[n]} vIOPS ({1e9 / viops[n]:.0f} instructions per I/O)"
            for n in names if viops.get(n)) + ".")
    return 0


if __name__ == "__main__":
    sys.exit(main())
