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
# Between the matrix and the NVMe rows, the no-regression section (guest
# job "bench noregress", a VM run of its own per kernel): interrupt-driven
# I/O only, io_uring without hipri, pvsync2 with RWF_NOWAIT, libaio and
# psync, 4 KiB and 128 KiB across a chunk or target boundary, through
# every stack (17 stack functions nr_NAME, 160 points), each point base
# against ours (ours_to_base, flagged over 1.01).  Among them
# md_raid1_jobs, md raid1 and raid10 4 KiB reads from 4 jobs, and, last,
# dm_striped_again, 128 KiB across a dm-striped chunk over null_blk of 2
# tags at QD32, where, submitted 32 at a time, halves of split bios end
# with BLK_STS_AGAIN below and are retried (on ours; the base kernel loses
# such an I/O and its fio hangs: killed, its points "failed: hung").
#
#   RUNTIME=N   guest seconds of fio per run, whole seconds (default 1)
#   REPS=N      runs of each point (default 2)
#   --noregress (or SECTION=noregress in the environment: make bench
#               SECTION=noregress) the no-regression section alone, on both
#               kernels: the rest of bench/bench.json (the last full run) is
#               kept as it is, that section replaced, and doc/results.md's
#               bench section regenerated from it
#   --noregress --built   the same on the kernels and initramfs already built
#   STACKS="NAME..."  (environment; make bench SECTION=noregress
#               STACKS="dm_striped_again md_raid1_jobs") with --noregress:
#               only those stacks of the section (the guest's nr_NAME
#               functions, scripts/guest/job-bench.sh), on both kernels;
#               their points replace those of the same stacks in
#               bench/bench.json's section, the other points are kept, the
#               run is noted in the section's meta ("merged"), and
#               doc/results.md's bench section is regenerated
#   --smoke     a few points, nothing kept: the check that make check runs
#               so that the benchmark cannot rot.  On the patched kernel one
#               CPU-cost point, and raw, dm-linear and dm-striped over the
#               10 us latency model, where the live bio objects must come
#               back after the stacks are gone; on both kernels, a 128 KiB
#               interrupt-driven read and write across a dm-striped chunk
#               with each engine (io_uring, pvsync2 with RWF_NOWAIT, libaio,
#               psync), ours against base
#   --smoke --built   the same on the kernels and initramfs already built,
#               nothing installed, applied or built (make check runs it
#               beside the debug kernel's build)
set -eu
. "$(dirname "$0")/lib.sh"

smoke='' built='' section=all
case ${1:-} in
--smoke) smoke=1 section=smoke ;;
--noregress) section=noregress ;;
'') ;;
*) die "bench.sh: unknown option $1 (--smoke, --noregress)" ;;
esac
[ "$section" != all ] && [ "${2:-}" = --built ] && built=1
case ${SECTION:-} in
'') ;;
noregress) [ "$section" != smoke ] || die "SECTION=noregress with --smoke"; section=noregress ;;
*) die "SECTION=${SECTION:-}: noregress, or unset (everything)" ;;
esac
scripts=$SP_TOP/scripts
# STACKS: the section's stack functions to run, all when empty.
read -r -a stacks <<<"${STACKS:-}"
if [ "${#stacks[@]}" -gt 0 ]; then
	[ "$section" = noregress ] ||
		die "STACKS=${STACKS:-} goes with --noregress (make bench SECTION=noregress STACKS=...)"
	for s in "${stacks[@]}"; do
		if ! [[ $s =~ ^[a-z0-9_]+$ ]] || ! grep -qx "nr_$s()" "$scripts/guest/job-bench.sh"; then
			die "STACKS: no stack $s (a function nr_$s in scripts/guest/job-bench.sh)"
		fi
	done
fi
runtime=${RUNTIME:-1}
reps=${REPS:-2}
if [ -n "$built" ]; then
	patched_kernel=$(sp_obj patched)/arch/x86/boot/bzImage
	base_kernel=$(sp_obj base)/arch/x86/boot/bzImage
	[ -s "$patched_kernel" ] || die "bench $section --built: no kernel at $patched_kernel"
	[ -s "$base_kernel" ] ||
		die "bench $section --built: no base kernel at $base_kernel (scripts/build-kernel.sh base)"
else
	bash "$scripts/deps.sh"
	bash "$scripts/base-tree.sh"
	bash "$scripts/apply-series.sh"
	base_kernel=$(bash "$scripts/build-kernel.sh" base)
	patched_kernel=$(bash "$scripts/build-kernel.sh" patched)
	bash "$scripts/initramfs.sh" >/dev/null
fi
need_cmds python3 gnuplot
release() { cat "$(sp_obj "$1")/include/config/kernel.release"; }
# ours_commit: what the patched kernel about to boot was built from, as
# far as its tree tells: the HEAD of build/kernel/patched/src then, with
# the dates of the bzImage and of its modules (a tree changed since the
# build would tell more than the kernel has).
ours_commit=''
note_ours() {
	local head built

	head=$(git -C "$(sp_src patched)" rev-parse --short HEAD 2>/dev/null || echo unknown)
	built="bzImage of $(date -r "$patched_kernel" '+%F %T'), modules of"
	built="$built $(date -r "$(sp_obj patched)/kernel-modules.cpio" '+%F %T')"
	ours_commit="$head, the HEAD of build/kernel/patched/src at boot; $built"
}
# The section's VM run per kernel: its 149 points run REPS times each, and
# 8 runs more (dm_striped_again's traced BLK_STS_AGAIN counts), a run
# taking 2.9 wall seconds here at RUNTIME=1 with other VMs beside it
# (804 s for 138 points, base, 2026-12-06): say 3 per guest second and 2
# more (fio's start, the set-up of the stacks), twice that, and the boot.
# STACKS runs fewer: the same bound.
noregress_timeout=$((600 + 2 * (149 * reps + 8) * (runtime * 3 + 2)))
# The smoke's no-regression bound, ours' instructions per I/O over base's
# (scripts/bench-report.py flags 1.01 in make bench): on three boots of
# each kernel, each point repeated within 0.2%, ours/base at most 1.002.
# The buffers' page layout moved the points by up to 13% (QD1 128 KiB,
# CI) while the guest chose it by cost; sp-bufmake now checks it in the
# page tables (guest job bench, nr_buffers).
nr_smoke_max=1.03

# noregress_runs MODE TIMEOUT: guest job "bench MODE" (noregress, with
# the STACKS, or noregress-smoke) under -icount on each kernel, base
# first; output in build/logs/bench-MODE-TREE.out.  A failed run of the
# base kernel is a result (its points show it); of ours, it sets
# nr_failed, after the report.
nr_failed=''
noregress_runs() {
	local mode=$1 timeout=$2 tree kernel only=()

	[ "$mode" != noregress ] || only=("${stacks[@]}")
	for tree in base patched; do
		kernel=$base_kernel
		[ "$tree" = patched ] && kernel=$patched_kernel && note_ours
		say "bench: $mode${only[*]:+ (${only[*]})} on the $tree kernel ($runtime guest s per run, $reps runs a point)"
		bash "$scripts/vm-run.sh" --icount --timeout "$timeout" --name "bench-$mode-$tree" \
			"$kernel" bench "$mode" "$runtime" "$reps" "${only[@]}" && continue
		say "bench: $mode on the $tree kernel failed (build/logs/bench-$mode-$tree.*)"
		[ "$tree" = base ] || nr_failed=1
	done
}
# noregress_args: the report's no-regression inputs, after the runs.
noregress_args() {
	nr_args=(--noregress-base "$SP_LOGS/bench-noregress-base.out"
		--noregress-ours "$SP_LOGS/bench-noregress-patched.out" --ours-commit "$ours_commit")
	[ "${#stacks[@]}" = 0 ] || nr_args+=(--noregress-stacks "${stacks[*]}")
}

if [ -n "$smoke" ]; then
	out=$SP_BUILD/bench-smoke
	rm -rf "$out"
	mkdir -p "$out"
	bash "$scripts/vm-run.sh" --icount --timeout 1800 --name bench-smoke \
		"$patched_kernel" bench smoke 1
	runtime=1 reps=1
	noregress_runs noregress-smoke 600
	# The report wants both kernels for the matrix: the smoke run stands
	# in for each.
	python3 "$scripts/bench-report.py" --base "$SP_LOGS/bench-smoke.out" \
		--ours "$SP_LOGS/bench-smoke.out" --date "$(date +%F)" \
		--noregress-base "$SP_LOGS/bench-noregress-smoke-base.out" \
		--noregress-ours "$SP_LOGS/bench-noregress-smoke-patched.out" \
		--ours-commit "$ours_commit" \
		--base-version "$(release base)" --ours-version "$(release patched)" \
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
	# The no-regression points: 8, a 128 KiB read and write across a
	# chunk with each engine family, each run on both kernels, ours at
	# most nr_smoke_max times base's instructions per I/O.
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
nr = result["noregress"]["points"]
both = [p for p in nr if p["ours_to_base"] is not None]
if len(nr) != 8 or len(both) != 8:
    sys.exit("no-regression: %d of 8 points, %d measured on both kernels" % (len(nr), len(both)))
families = {"io_uring", "pvsync2+nowait", "libaio", "psync"}
ran = {p["engine"] for p in both if p["workload"].split("/")[1].startswith("128k-")}
if ran != families:
    sys.exit("no-regression: 128 KiB rows on both kernels for %s, not %s" %
             (sorted(ran), sorted(families)))
for p in both:
    if p["ours_to_base"] > float(sys.argv[2]):
        sys.exit("no-regression: %s %s: ours/base %.3f over %s" %
                 (p["stack"], p["workload"], p["ours_to_base"], sys.argv[2]))
slab = result["slab"]["ours"]
if not slab["returned"]:
    sys.exit("live bio objects %s (%s cached) before, %s (%s cached) after the stacks" %
             (slab["start"]["bio_objects"], slab["start"]["cached"],
              slab["end"]["bio_objects"], slab["end"]["cached"]))
' "$out/bench.json" "$nr_smoke_max" || die "bench smoke: $out/bench.json"
	[ -s "$out/bench.png" ] || die "bench smoke: no plot"
	[ -z "$nr_failed" ] || die "bench smoke: the no-regression run on the patched kernel failed"
	say "bench smoke: ok ($out)"
	exit 0
fi

if [ "$section" = noregress ]; then
	kept=$SP_TOP/bench/bench.json
	[ -f "$kept" ] || die "bench --noregress: no $kept (the last full make bench) to add it to"
	noregress_runs noregress "$noregress_timeout"
	out=$SP_BUILD/bench
	mkdir -p "$out"
	rc=0
	noregress_args
	python3 "$scripts/bench-report.py" --matrix-json "$kept" "${nr_args[@]}" \
		--results "$SP_TOP/doc/results.md" --date "$(date +%F)" \
		--base-version "$(release base)" --ours-version "$(release patched)" \
		--runtime "$runtime" --reps "$reps" --outdir "$out" || rc=$?
	# Exit status 2: bad input, nothing written (what $out holds is older).
	[ "$rc" = 2 ] || cp "$out/bench.json" "$kept"
	sed -n '/^### No-regression/,$p' "$out/bench.md"
	say "bench: the no-regression section${STACKS:+ (stacks ${stacks[*]} replaced)} in $out, bench/bench.json and doc/results.md"
	[ -z "$nr_failed" ] || rc=1
	exit "$rc"
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
noregress_runs noregress "$noregress_timeout"
for tree in base patched; do
	kernel=$base_kernel
	[ "$tree" = patched ] && kernel=$patched_kernel
	say "bench: emulated NVMe on the $tree kernel (not deterministic)"
	bash "$scripts/vm-run.sh" --timeout 900 --name "bench-nvme-$tree" \
		"$kernel" demo 3 || true
done

rc=0
noregress_args
python3 "$scripts/bench-report.py" --base "$SP_LOGS/bench-base.out" \
	--ours "$SP_LOGS/bench-patched.out" \
	--nvme-base "$SP_LOGS/bench-nvme-base.out" --nvme-ours "$SP_LOGS/bench-nvme-patched.out" \
	"${nr_args[@]}" "${previous[@]}" --results "$SP_TOP/doc/results.md" --date "$(date +%F)" \
	--base-version "$(release base)" --ours-version "$(release patched)" \
	--runtime "$runtime" --reps "$reps" --outdir "$out" || rc=$?
gnuplot -e "dat='$out/plot.dat'; out='$out/bench.png'" "$scripts/bench-plot.gp"
mkdir -p "$SP_TOP/bench"
cp "$out/bench.json" "$out/bench.png" "$SP_TOP/bench/"
cat "$out/bench.md"
say "bench: results in $out, kept in bench/ and doc/results.md"
[ -z "$nr_failed" ] || rc=1
exit "$rc"
