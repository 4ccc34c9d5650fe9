#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mirror takes REQ_NOWAIT bios, so io_uring issues I/O to it from the
# submitter instead of an io-wq worker (whose ring-lock traffic halved
# polled throughput); mirror does not pass polled bios, so everything
# completes by interrupt.  A leg that has no tag for a REQ_NOWAIT read
# fails it with BLK_STS_AGAIN: the read is retried, and the leg is not
# taken for failed.  Writes go to kmirrord, which sends them without
# REQ_NOWAIT; every leg gets them.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup
dmp_require_nullb
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

# check_legs DESC SEED LEG...: each leg, read directly, holds what was
# written through the mirror with SEED (the first 8 MiB).
check_legs()
{
	local desc=$1 seed=$2 leg
	shift 2

	for leg in "$@"; do
		if ! "$DMP_VERIFY" -I -m read -s 8M -b 64k -q 4 -S "$seed" "$leg" >/dev/null; then
			ktap_test_fail "$desc: $leg does not hold the data"
			return
		fi
	done
	ktap_test_pass "$desc: every leg, read directly, holds the data"
}

# check_legs_alive DESC NODE: dmsetup status shows every leg alive ('A').
check_legs_alive()
{
	local status health
	status=$(dmsetup status "$2")
	health=$(awk '{ print $(7 + $4) }' <<<"$status")

	if [ -n "$health" ] && [ -z "${health//A/}" ]; then
		ktap_test_pass "$1: every leg alive ($health)"
	else
		ktap_test_fail "$1: legs not all alive: $status"
	fi
}

ktap_print_header
ktap_set_plan 8
dmp_dm_create leg0 "0 65536 linear $a 600000" || ktap_exit_fail_msg "cannot create leg0"
leg0=$DMP_NODE
dmp_dm_create leg1 "0 65536 linear $b 600000" || ktap_exit_fail_msg "cannot create leg1"
leg1=$DMP_NODE
# 512 KiB regions; 4 KiB I/O never crosses one, which DM would split.
dmp_dm_create mirror "0 65536 mirror core 2 1024 nosync 2 $leg0 0 $leg1 0" ||
	ktap_exit_fail_msg "cannot create mirror"
mirror=$DMP_NODE
dmp_check_polled_by_irq "mirror: polled, issued inline" "$mirror" \
	-W -s 8M -b 4k -q 8 -S 221
check_legs "mirror: polled writes" 221 "$leg0" "$leg1"
dmp_check_irq "mirror: interrupt driven, issued inline" "$mirror" \
	-W -s 8M -b 4k -q 8 -S 222
# Across a region DM splits them, and fails them whole: retried from io-wq.
dmp_check_iowq "mirror: I/O across regions, retried from io-wq" "$mirror" \
	-s 8M -b 64k-256k -q 8 -S 223
check_legs "mirror: I/O across regions" 223 "$leg0" "$leg1"
dmp_cleanup

# Legs with one tag each: polled reads find it taken and are retried.
if dmp_nullb_create t0 size=64 memory_backed=1 queue_mode=2 poll_queues=1 \
	submit_queues=1 hw_queue_depth=1 && t0=$DMP_NODE &&
	dmp_nullb_create t1 size=64 memory_backed=1 queue_mode=2 poll_queues=1 \
	submit_queues=1 hw_queue_depth=1 && t1=$DMP_NODE &&
	dmp_dm_create mt "0 65536 mirror core 2 1024 nosync 2 $t0 0 $t1 0" &&
	"$DMP_VERIFY" -m write -s 8M -b 4k -q 8 -S 224 "$DMP_NODE" >/dev/null; then
	dmp_check_iowq "mirror over null_blk with one tag: polled reads qd8" \
		"$DMP_NODE" -m read -s 8M -b 4k -q 8 -S 224
	check_legs_alive "mirror over null_blk with one tag" "$DMP_NODE"
	check_legs "mirror over null_blk with one tag" 224 "$t0" "$t1"
else
	ktap_test_fail "mirror over null_blk with one tag: cannot create or write"
	ktap_test_fail "mirror over null_blk with one tag: legs not checked"
	ktap_test_fail "mirror over null_blk with one tag: data not checked"
fi
ktap_finished
