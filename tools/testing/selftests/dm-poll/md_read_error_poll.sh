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
# Then the leg fails writes too (error_writes): md records bad blocks,
# which the superblock update carries, or fails the leg once its list is
# full, while the ring keeps reading polled from the other.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup mdadm fio
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

# check_read_errors LEVEL [error_writes]: the load on an array of LEVEL
# over $a and the flakey leg, which fails reads (and writes).  One KTAP
# result.
check_read_errors()
{
	local level=$1 writes=${2:-} desc="md $1, a leg failing reads"
	local md out rc=0 features="1 error_reads" name table

	if [ -n "$writes" ]; then
		desc="$desc and writes"
		features="2 error_reads error_writes"
	fi
	desc="$desc, polled randrw with pauses"
	name=flaky$1$writes
	table="0 $(dmp_sectors "$b") flakey $b 0"
	# Never down while mdadm writes the superblocks; then up 1 s, down 2 s.
	dmp_dm_create "$name" "$table 1 0" ||
		{ ktap_test_fail "$desc: cannot create dm-flakey"; return; }
	if ! dmp_md_create "$level" --assume-clean --size=65536 -- "$a" "$DMP_NODE"; then
		ktap_test_fail "$desc: cannot create the array"
		return
	fi
	md=$DMP_NODE
	if ! dmsetup reload "$DMP_PREFIX-$name" --table "$table 1 2 $features" ||
		! dmsetup resume --noudevsync "$DMP_PREFIX-$name"; then
		ktap_test_fail "$desc: cannot make dm-flakey fail"
		return
	fi
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
	elif [ -n "$writes" ] && ! md_write_error_seen "$md"; then
		ktap_test_fail "$desc: no write error reached md"
	else
		ktap_test_pass "$desc: read errors handled, no I/O stalled"
	fi
	dmp_md_stop "$md"
}

# md_write_error_seen MD: MD recorded a bad block on a member, or failed
# one.
md_write_error_seen()
{
	local sys

	sys=$(dmp_sysfs "$1")/md
	grep -qs . "$sys"/dev-*/bad_blocks ||
		grep -qs faulty "$sys"/dev-*/state
}

ktap_print_header
ktap_set_plan 4
check_read_errors 1
check_read_errors 10
check_read_errors 1 error_writes
check_read_errors 10 error_writes
ktap_finished
