#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A mirror leg that fails reads now and then (dm-flakey, error_reads:
# up 1 s, down 2 s) under a polled ring that reads and writes, with pauses
# longer than md's safe_mode_delay, as a read-mostly database does.  A
# read error sends raid1d/raid10d to freeze the array, which waits for the
# polled reads in flight, while the ring's next write waits in
# md_write_start() for the superblock update raid1d/raid10d owes: the
# array stood still until the NVMe timeout reaped the other leg's poll
# queue.  No I/O may take 5 s, and the kernel log must show no timeout.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup mdadm fio
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

# check_read_errors LEVEL: the load on an array of LEVEL over $a and the
# flakey leg.  One KTAP result.
check_read_errors()
{
	local level=$1 desc="md $1, a leg failing reads, polled randrw with pauses"
	local md out rc=0

	dmp_dm_create "flaky$1" "0 $(dmp_sectors "$b") flakey $b 0 1 2 1 error_reads" ||
		{ ktap_test_fail "$desc: cannot create dm-flakey"; return; }
	if ! dmp_md_create "$level" --assume-clean --size=65536 -- "$a" "$DMP_NODE"; then
		ktap_test_fail "$desc: cannot create the array"
		return
	fi
	md=$DMP_NODE
	# Every write after 1 ms without one marks the array dirty first,
	# through raid1d/raid10d; and the leg is never failed for its read
	# errors, so that each one is fixed with the array frozen.
	if ! echo 0.001 >"$(dmp_sysfs "$md")/md/safe_mode_delay" ||
		! echo 1000000 >"$(dmp_sysfs "$md")/md/max_read_errors"; then
		ktap_test_fail "$desc: cannot set safe_mode_delay, max_read_errors"
		return
	fi
	out=$(timeout 150 fio --name=rw --filename="$md" --direct=1 --ioengine=io_uring \
		--hipri=1 --rw=randrw --rwmixread=90 --bs=4k --iodepth=16 --size=64M \
		--time_based --runtime=15 --thinktime=300000 --thinktime_blocks=256 \
		--max_latency=5s --output-format=terse --terse-version=3 2>&1) || rc=$?
	echo "# $desc: fio exit $rc, $(grep -c 'read error\|redirecting sector' \
		<(dmp_kernel_log)) md read-error messages so far"
	if [ "$rc" != 0 ]; then
		echo "$out" | grep -v '^3;' | head -n 5 | sed 's/^/# /'
		ktap_test_fail "$desc: I/O failed, or took 5 s"
	elif ! dmp_kernel_log | grep -q 'read error\|redirecting sector'; then
		ktap_test_fail "$desc: no read error reached md"
	else
		ktap_test_pass "$desc: read errors handled, no I/O stalled"
	fi
	dmp_md_stop "$md"
}

ktap_print_header
ktap_set_plan 2
check_read_errors 1
check_read_errors 10
ktap_finished
