#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "make": build and boot the kernel (BASE=1: the base), run fio --hipri=1
# and --hipri=0 on raw NVMe and through /dev/mapper and /dev/md stacks,
# and print a table: IOPS, device interrupts during the run, io_poll.
#   RUNTIME=N   seconds of fio per row (default 3, guest time)
set -eu
. "$(dirname "$0")/lib.sh"

tree=$(sp_tree)
scripts=$SP_TOP/scripts
bash "$scripts/deps.sh"
bash "$scripts/base-tree.sh"
bash "$scripts/apply-series.sh"
kernel=$(bash "$scripts/build-kernel.sh" "$tree")
bash "$scripts/initramfs.sh" >/dev/null

rc=0
bash "$scripts/vm-run.sh" --name "demo-$tree" "$kernel" demo "${RUNTIME:-3}" || rc=$?
release=$(cat "$(sp_obj "$tree")/include/config/kernel.release")
echo
echo "fio 4k randread QD16, io_uring, ${RUNTIME:-3} s per row; kernel $release (QEMU TCG)"
tr -d '\r' <"$SP_LOGS/demo-$tree.out" | awk -F'|' '
	BEGIN { fmt = "%-31s %-30s %5s %8s %10s %7s  %s\n"
		printf fmt, "stack", "device", "hipri", "IOPS", "interrupts", "io_poll", "result" }
	$1 == "ROW" { printf fmt, $3, $2, $4, $5, $6, $7, $8; rows++ }
	END { exit !rows }' || { echo "no results: see $SP_LOGS/demo-$tree.out"; exit 1; }
echo "interrupts: of the NVMe I/O queues below the device, during the run;"
echo "with --hipri=1 every completion should be polled, so 0."
exit "$rc"
