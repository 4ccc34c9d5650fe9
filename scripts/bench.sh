#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "make bench": CPU cost per I/O of polled and interrupt-driven I/O through
# every stack, the base kernel against ours, in one session.
#
# The matrix (scripts/guest/job-bench.sh) runs on null_blk poll queues under
# QEMU's -icount shift=0,sleep=off, where a guest second is 1e9 guest
# instructions: IOPS per guest second measure instructions per I/O,
# whatever the host's speed.  Then the emulated NVMe rows (guest job
# "demo", not deterministic) on both kernels.  scripts/bench-report.py
# writes build/bench/bench.{json,md} and the plot, keeps the JSON and the
# plot in bench/ and regenerates the README's results section; the run
# before is kept as build/bench/previous.json and compared with.
#
#   RUNTIME=N   guest seconds of fio per run, whole seconds (default 1)
#   REPS=N      runs of each point (default 2)
#   --smoke     one point on the patched kernel only, nothing kept: the
#               check that make check runs so that the benchmark cannot rot;
#               the live bio objects must come back after the stack is gone
set -eu
. "$(dirname "$0")/lib.sh"

smoke=''
[ "${1:-}" = --smoke ] && smoke=1
scripts=$SP_TOP/scripts
runtime=${RUNTIME:-1}
reps=${REPS:-2}
bash "$scripts/deps.sh"
need_cmds python3 gnuplot
bash "$scripts/base-tree.sh"
bash "$scripts/apply-series.sh"
[ -n "$smoke" ] || base_kernel=$(bash "$scripts/build-kernel.sh" base)
patched_kernel=$(bash "$scripts/build-kernel.sh" patched)
bash "$scripts/initramfs.sh" >/dev/null
release() { cat "$(sp_obj "$1")/include/config/kernel.release"; }

if [ -n "$smoke" ]; then
	out=$SP_BUILD/bench-smoke
	rm -rf "$out"
	mkdir -p "$out"
	bash "$scripts/vm-run.sh" --icount --timeout 900 --name bench-smoke \
		"$patched_kernel" bench smoke 1
	# The report wants both kernels: the smoke run stands in for each.
	python3 "$scripts/bench-report.py" --base "$SP_LOGS/bench-smoke.out" \
		--ours "$SP_LOGS/bench-smoke.out" --date "$(date +%F)" \
		--base-version "$(release patched)" --ours-version "$(release patched)" \
		--runtime 1 --reps 1 --outdir "$out"
	gnuplot -e "dat='$out/plot.dat'; out='$out/bench.png'" "$scripts/bench-plot.gp"
	python3 -c '
import json, sys
result = json.load(open(sys.argv[1]))
ok = [p for p in result["points"] if p["ours"].get("status") == "ok"]
if len(ok) != 2 or not all(p["ours"]["instr_per_io"] > 0 for p in ok):
    sys.exit("no measured points")
slab = result["slab"]["ours"]
if None in (slab["start"]["bio_objects"], slab["end"]["bio_objects"]) or \
        slab["start"]["bio_objects"] != slab["end"]["bio_objects"]:
    sys.exit("live bio objects %s before, %s after the stack" %
             (slab["start"]["bio_objects"], slab["end"]["bio_objects"]))
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
	bash "$scripts/vm-run.sh" --icount --timeout 3600 --name "bench-$tree" \
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
	"${previous[@]}" --readme "$SP_TOP/README" --date "$(date +%F)" \
	--base-version "$(release base)" --ours-version "$(release patched)" \
	--runtime "$runtime" --reps "$reps" --outdir "$out" || rc=$?
gnuplot -e "dat='$out/plot.dat'; out='$out/bench.png'" "$scripts/bench-plot.gp"
mkdir -p "$SP_TOP/bench"
cp "$out/bench.json" "$out/bench.png" "$SP_TOP/bench/"
cat "$out/bench.md"
say "bench: results in $out, kept in bench/ and the README's results section"
exit "$rc"
