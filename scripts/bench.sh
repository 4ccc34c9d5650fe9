#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "make bench": fio 4k random reads QD16 on null_blk poll queues, raw,
# dm-linear, dm-striped and md linear, raid0, raid1 and raid10, polled and
# interrupt driven (the base cannot poll md: EOPNOTSUPP), on the base and
# the patched kernel in the same session, with QEMU's -icount shift=0,
# sleep=off: a guest second is 1e9 guest instructions, so IOPS are a
# repeatable measure of CPU cost per I/O, whatever the host's speed.
#   RUNTIME=N   fio seconds of guest time per row (default 2)
set -eu
. "$(dirname "$0")/lib.sh"

scripts=$SP_TOP/scripts
runtime=${RUNTIME:-2}
bash "$scripts/deps.sh"
bash "$scripts/base-tree.sh"
bash "$scripts/apply-series.sh"
base_kernel=$(bash "$scripts/build-kernel.sh" base)
patched_kernel=$(bash "$scripts/build-kernel.sh" patched)
bash "$scripts/initramfs.sh" >/dev/null

for tree in base patched; do
	kernel=$base_kernel
	[ "$tree" = patched ] && kernel=$patched_kernel
	bash "$scripts/vm-run.sh" --icount --timeout 3000 --name "bench-$tree" \
		"$kernel" bench "$runtime"
done

echo
echo "fio io_uring 4k randread QD16, $runtime s of guest time per row; QEMU TCG -icount shift=0"
echo "(IOPS per guest second: higher means fewer instructions per I/O)"
join -t'|' <(tr -d '\r' <"$SP_LOGS/bench-base.out" | awk -F'|' '$1 == "ROW" { print $2 " hipri=" $3 "|" $4 }' | sort) \
	<(tr -d '\r' <"$SP_LOGS/bench-patched.out" | awk -F'|' '$1 == "ROW" { print $2 " hipri=" $3 "|" $4 }' | sort) |
	awk -F'|' '
	BEGIN { fmt = "%-48s %10s %10s %8s\n"; printf fmt, "stack", "base", "patched", "change" }
	{
		change = ($2 > 0 && $3 ~ /^[0-9]+$/) ? sprintf("%+.1f%%", ($3 - $2) * 100 / $2) : "-"
		printf fmt, $1, $2, $3, change
	}'
