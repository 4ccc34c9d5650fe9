#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "make profile": the kernel functions a polled I/O runs through, in guest
# instructions per I/O, raw null_blk and a stack side by side.
#
# Boots the bench kernel (BASE=1: the base) under QEMU's -icount
# shift=0,sleep=off, where a nanosecond of guest time is one guest
# instruction, and samples fio with perf's cpu-clock on the CPU it runs on
# (scripts/guest/job-profile.sh); scripts/profile-report.py turns the
# samples into instructions per I/O.
#
#   STACK=S      null_blk, dm-linear (default), dm-striped-2,
#                dm-linear/dm-striped-2, md-linear-2, md-raid0-2,
#                md-raid1-2, md-raid10-2
#   WORKLOAD=W   4k-randread-qd16 (default) or 4k-randread-qd1, polled
#   RUNTIME=N    guest seconds of fio per run (default 2)
#   TOP=N        functions shown (default 40)
#   RESULTS=1    put the tables into the profile section of doc/results.md
#                (README=1, the old name, does the same)
# STACK may name several stacks, each run in a boot of its own.  Each
# table goes to stdout and build/profile/STACK-WORKLOAD.md.
set -eu
. "$(dirname "$0")/lib.sh"

stacks=${STACK:-dm-linear}
workload=${WORKLOAD:-4k-randread-qd16}
runtime=${RUNTIME:-2}
top=${TOP:-40}
scripts=$SP_TOP/scripts
for stack in $stacks; do
	case $stack in
	null_blk | dm-linear | dm-striped-2 | dm-linear/dm-striped-2 | md-linear-2 | \
		md-raid0-2 | md-raid1-2 | md-raid10-2) ;;
	*) die "profile: unknown STACK=$stack (see scripts/profile.sh)" ;;
	esac
done
case $workload in
4k-randread-qd1 | 4k-randread-qd16) ;;
*) die "profile: unknown WORKLOAD=$workload (4k-randread-qd1 or 4k-randread-qd16)" ;;
esac

bash "$scripts/deps.sh"
need_cmds python3 perf
bash "$scripts/base-tree.sh"
bash "$scripts/apply-series.sh"
tree=$(sp_tree)
kernel=$(bash "$scripts/build-kernel.sh" "$tree")
bash "$scripts/initramfs.sh" >/dev/null

name=profile-$tree
out=$SP_BUILD/profile
mkdir -p "$out"
reports=()
for stack in $stacks; do
	bash "$scripts/vm-run.sh" --icount --timeout 1800 --name "$name" \
		"$kernel" profile "$stack" "$workload" "$runtime" ||
		die "profile: the guest run failed (build/logs/$name.out, $name.console)"
	report=$out/$(echo "$stack" | tr / _)-$workload.md
	python3 "$scripts/profile-report.py" --top "$top" \
		--title "$stack, $workload polled, $(cat "$(sp_obj "$tree")/include/config/kernel.release")" \
		"$SP_LOGS/$name.out" >"$report" || die "profile: no profile in build/logs/$name.out"
	cat "$report"
	say "profile: $report"
	reports+=("$report")
done
if [ "${RESULTS:-}" = 1 ] || [ "${README:-}" = 1 ]; then
	python3 "$scripts/profile-report.py" --splice "$SP_TOP/doc/results.md" "${reports[@]}" ||
		die "profile: cannot update doc/results.md"
	say "profile: the profile section of doc/results.md is updated"
fi
