#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "make bench": CPU cost per I/O of polled and interrupt-driven I/O through
# every stack, the base kernel against ours, in one session.
#
# The matrix (scripts/guest/job-bench.sh) runs on null_blk poll queues under
# QEMU's -icount shift=0,sleep=off, where a guest second is 1e9 guest
# instructions: IOPS per guest second measure instructions per I/O,
# whatever the host's speed.  The matrix ends with the latency model:
# null_blk completing after 0 or 10 us, by timer interrupt or at the poll
# after that, where the tables show each stack's polled/IRQ gain next to
# the raw device's.  Then the emulated NVMe rows (guest job
# "demo", not deterministic) on both kernels.  scripts/bench-report.py
# writes build/bench/bench.{json,md} and the plot, keeps the JSON and the
# plot in bench/ and regenerates the bench section of doc/results.md; the run
# before is kept as build/bench/previous.json and compared with.
#
#   RUNTIME=N   guest seconds of fio per run, whole seconds (default 1)
#   REPS=N      runs of each point (default 2)
#   --smoke     a few points on the patched kernel only, nothing kept: the
#               check that make check runs so that the benchmark cannot rot;
#               one CPU-cost point, and raw, dm-linear and dm-striped over
#               the 10 us latency model; the live bio objects must come
#               back after the stacks are gone
#   --smoke --built   the same on the kernel and initramfs already built,
#               nothing installed, applied or built (make check runs it
#               beside the debug kernel's build)
set -eu
. "$(dirname "$0")/lib.sh"

smoke='' built=''
[ "${1:-}" = --smoke ] && smoke=1
[ -n "$smoke" ] && [ "${2:-}" = --built ] && built=1
scripts=$SP_TOP/scripts
runtime=${RUNTIME:-1}
reps=${REPS:-2}
if [ -n "$built" ]; then
	patched_kernel=$(sp_obj patched)/arch/x86/boot/bzImage
	[ -s "$patched_kernel" ] || die "bench smoke --built: no kernel at $patched_kernel"
else
	bash "$scripts/deps.sh"
	bash "$scripts/base-tree.sh"
	bash "$scripts/apply-series.sh"
	[ -n "$smoke" ] || base_kernel=$(bash "$scripts/build-kernel.sh" base)
	patched_kernel=$(bash "$scripts/build-kernel.sh" patched)
	bash "$scripts/initramfs.sh" >/dev/null
fi
need_cmds python3 gnuplot
release() { cat "$(sp_obj "$1")/include/config/kernel.release"; }

if [ -n "$smoke" ]; then
	out=$SP_BUILD/bench-smoke
	rm -rf "$out"
	mkdir -p "$out"
	bash "$scripts/vm-run.sh" --icount --timeout 1800 --name bench-smoke \
		"$patched_kernel" bench smoke 1
	# The report wants both kernels: the smoke run stands in for each.
	python3 "$scripts/bench-report.py" --base "$SP_LOGS/bench-smoke.out" \
		--ours "$SP_LOGS/bench-smoke.out" --date "$(date +%F)" \
		--base-version "$(release patched)" --ours-version "$(release patched)" \
		--runtime 1 --reps 1 --outdir "$out"
	gnuplot -e "dat='$out/plot.dat'; out='$out/bench.png'" "$scripts/bench-plot.gp"
	# 42 points: dm-striped-2 QD16, 4 KiB and 128 KiB (every bio across
	# a chunk), and raw, dm-linear, dm-striped-2,
	# dm-crypt, dm-thin, dm-raid1, dm-cache and dm-snapshot-origin over
	# the 10 us latency model at QD1 and QD16, and dm-crypt, dm-thin and
	# dm-snapshot-origin writes at QD16, polled and not.  At QD1 each I/O takes the device's
	# 10 us of guest time at least: more than 1e5 vIOPS means the latency
	# model did not hold the poller.  Polled I/O markedly slower than
	# interrupt-driven I/O (under 0.9 times its vIOPS) costs the user;
	# so does interrupt-driven I/O that DM splits costing markedly more
	# than polled on a device without latency, where no interrupt
	# happens: io_uring sent it through io-wq.
	python3 -c '
import json, sys
result = json.load(open(sys.argv[1]))
ok = [p for p in result["points"] if p["ours"].get("status") == "ok"]
if len(ok) != 42 or not all(p["ours"]["iops"] > 0 for p in ok):
    sys.exit("%d of 42 points measured" % len(ok))
irq = {(p["stack"], p["workload"]): p["ours"]["iops"] for p in ok if p["mode"] == "irq"}
polled = {(p["stack"], p["workload"]): p["ours"]["iops"] for p in ok if p["mode"] == "polled"}
split = ("dm-striped-2", "128k-randread-qd16")
if irq.get(split, 0) < 0.9 * polled.get(split, 0):
    sys.exit("%s %s: interrupt driven %s vIOPS, polled %s" %
             (split + (irq.get(split), polled.get(split))))
for p in ok:
    if p["workload"] == "4k-randread-qd1-lat10us" and p["ours"]["iops"] > 1e5:
        sys.exit("%s %s: %d vIOPS at QD1 on a 10 us device" %
                 (p["stack"], p["mode"], p["ours"]["iops"]))
    key = (p["stack"], p["workload"])
    if "-lat" in p["workload"] and p["mode"] == "polled" and \
            p["ours"]["iops"] < 0.9 * irq.get(key, 0):
        sys.exit("%s %s: polled %d vIOPS, interrupt driven %s" %
                 (p["stack"], p["workload"], p["ours"]["iops"], irq.get(key)))
slab = result["slab"]["ours"]
if not slab["returned"]:
    sys.exit("live bio objects %s (%s cached) before, %s (%s cached) after the stacks" %
             (slab["start"]["bio_objects"], slab["start"]["cached"],
              slab["end"]["bio_objects"], slab["end"]["cached"]))
' "$out/bench.json" || die "bench smoke: $out/bench.json"
	[ -s "$out/bench.png" ] || die "bench smoke: no plot"
	say "bench smoke: ok ($out)"
	exit 0
fi

out=$SP_BUILD/bench
mkdir -p "$out"
# The last complete run is the one to compare with, even after a run
# that failed before its report.
[ ! -f "$out/bench.json" ] || mv "$out/bench.json" "$out/previous.json"
previous=()
[ ! -f "$out/previous.json" ] || previous=(--previous "$out/previous.json")

for tree in base patched; do
	kernel=$base_kernel
	[ "$tree" = patched ] && kernel=$patched_kernel
	say "bench: the matrix on the $tree kernel ($runtime guest s per run, $reps runs a point)"
	bash "$scripts/vm-run.sh" --icount --timeout 5400 --name "bench-$tree" \
		"$kernel" bench matrix "$runtime" "$reps"
done
for tree in base patched; do
	kernel=$base_kernel
	[ "$tree" = patched ] && kernel=$patched_kernel
	say "bench: emulated NVMe on the $tree kernel (not deterministic)"
	bash "$scripts/vm-run.sh" --timeout 900 --name "bench-nvme-$tree" \
		"$kernel" demo 3 || true
done

rc=0
python3 "$scripts/bench-report.py" --base "$SP_LOGS/bench-base.out" \
	--ours "$SP_LOGS/bench-patched.out" \
	--nvme-base "$SP_LOGS/bench-nvme-base.out" --nvme-ours "$SP_LOGS/bench-nvme-patched.out" \
	"${previous[@]}" --results "$SP_TOP/doc/results.md" --date "$(date +%F)" \
	--base-version "$(release base)" --ours-version "$(release patched)" \
	--runtime "$runtime" --reps "$reps" --outdir "$out" || rc=$?
gnuplot -e "dat='$out/plot.dat'; out='$out/bench.png'" "$scripts/bench-plot.gp"
mkdir -p "$SP_TOP/bench"
cp "$out/bench.json" "$out/bench.png" "$SP_TOP/bench/"
cat "$out/bench.md"
say "bench: results in $out, kept in bench/ and doc/results.md"
exit "$rc"
