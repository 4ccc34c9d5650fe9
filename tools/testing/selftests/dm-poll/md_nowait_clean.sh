#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A REQ_NOWAIT write to a clean md array does not sleep.  An array with a
# superblock turns clean once no write has come for safe_mode_delay, and
# its next write waits in md_write_start() until the array thread has
# written the superblock that marks it active again.  io_uring issues
# that write inline with REQ_NOWAIT, in its ring task, holding the ring:
# it must fail with BLK_STS_AGAIN instead (io_uring sends it again from
# io-wq, where it may wait), before anything of it is done.
# fio io_uring writes, one at a time with 30 ms between them and the
# array's safe_mode_delay at 10 ms, so that each finds the array clean;
# data verified; the ring task's sleeps in the submit path are counted
# (dmp_submit_sleeps) with the bios that md ended with BLK_STS_AGAIN.
#   1. raid1, interrupt driven;
#   2. raid1, polled;
#   3. raid10 near2, interrupt driven.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds mdadm fio awk
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

ktap_print_header
ktap_set_plan 3

# load DEV FIO-OPTION...: 60 verified io_uring writes of 4 KiB to DEV at
# QD1, 30 ms apart.
load()
{
	local dev=$1
	shift

	fio --name=clean --filename="$dev" --ioengine=io_uring --direct=1 \
		--rw=randwrite --bs=4k --iodepth=1 --size=240k --thinktime=30ms \
		--verify=crc32c --verify_fatal=1 --do_verify=1 "$@" \
		--output-format=terse --terse-version=3 >/tmp/fio.terse 2>&1 &&
		awk -F';' '$1 == 3 && $5 != 0 { bad = 1 } END { exit bad }' /tmp/fio.terse
}

# check_clean DESC DEV FIO-OPTION...: the writes to DEV, each to a clean
# array, slept 0 times in the submit path, md ended some with
# BLK_STS_AGAIN, and every one was done and verified.  One KTAP result.
check_clean()
{
	local desc=$1 dev=$2 filter sys
	shift 2

	sys=$(dmp_sysfs "$dev")/md
	echo 0.010 >"$sys/safe_mode_delay" || { ktap_test_fail "$desc: safe_mode_delay"; return; }
	if filter=$(dmp_again_filter "$dev"); then
		dmp_check_no_sleep "$desc" "$filter" "writes md" \
			"no write found the array clean" load "$dev" "$@"
	else
		ktap_test_fail "$desc: no device number for $dev"
	fi
	echo 0 >"$sys/safe_mode_delay"
	echo "# $desc: array $(cat "$sys/array_state")"
}

dmp_md_create 1 --assume-clean --size=65536 -- "$a" "$b" ||
	ktap_exit_fail_msg "cannot create md raid1"
check_clean "raid1: writes to a clean array, interrupt driven" "$DMP_NODE"
check_clean "raid1: writes to a clean array, polled" "$DMP_NODE" --hipri=1
dmp_cleanup
dmp_md_create 10 --assume-clean --layout=n2 --size=65536 -- "$a" "$b" ||
	ktap_exit_fail_msg "cannot create md raid10"
check_clean "raid10 near2: writes to a clean array, interrupt driven" "$DMP_NODE"
ktap_finished
