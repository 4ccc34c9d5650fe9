#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# io_uring's other ways to issue polled I/O, through dm-striped and md
# raid0 with bios split across chunks: registered buffers, IOSQE_ASYNC
# (io-wq issues the I/O, without REQ_NOWAIT), and SQPOLL with IOPOLL (the
# SQ thread submits and polls) are polled end to end, 0 interrupts.
# Synchronous RWF_HIPRI I/O (fio pvsync2 --hipri, as blktests block/007
# runs it) is not polled on 6.12 (block/fops.c polls only io_uring's
# async direct I/O): it must complete, with its data, by interrupt.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup mdadm fio
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

# paths_fio DEV ENGINE-ARGS...: fio writes 16 MiB of DEV in 4k-128k and
# reads it back, crc32c verified.
paths_fio()
{
	local dev=$1
	shift

	fio --name=paths --filename="$dev" --size=16M \
		--direct=1 --rw=randwrite --bsrange=4k-128k --iodepth=8 \
		--verify=crc32c --verify_fatal=1 --randseed=11 \
		--output=/tmp/paths-fio.log "$@"
}

# check_fio DESC DEV polled|irq ENGINE-ARGS...: paths_fio, and the
# interrupts below DEV match the mode.  One KTAP result.
check_fio()
{
	local desc=$1 dev=$2 mode=$3
	shift 3

	dmp_check_mode "$desc" "$mode" "$dev" paths_fio "$dev" "$@" ||
		sed 's/^/# /' /tmp/paths-fio.log | tail -n 10
}

# check_iowq DESC OUTPUT: the iopoll_verify run whose OUTPUT is given had
# io-wq workers issue its I/O.  One KTAP result.
check_iowq()
{
	local workers

	workers=$(dmp_iowq_workers <"$2")
	echo "# $1: ${workers:-no} io-wq workers"
	if [ "${workers:-0}" -gt 0 ]; then
		ktap_test_pass "$1: io-wq workers issued the I/O"
	else
		ktap_test_fail "$1: no io-wq worker issued the I/O"
	fi
}

# paths_cases STACK DEV: the four ways on one stack; five KTAP results.
paths_cases()
{
	local stack=$1 dev=$2

	dmp_check_polled "$stack: registered buffers" "$dev" -F -s 16M -b 4k-128k -q 8 -S 61
	dmp_check_polled "$stack: IOSQE_ASYNC" "$dev" -A -s 16M -b 4k-128k -q 8 -S 62 \
		>/tmp/paths-async.out
	cat /tmp/paths-async.out
	check_iowq "$stack: IOSQE_ASYNC" /tmp/paths-async.out
	check_fio "$stack: SQPOLL and IOPOLL" "$dev" polled \
		--ioengine=io_uring --hipri=1 --sqthread_poll=1
	check_fio "$stack: pvsync2 RWF_HIPRI, by interrupt" "$dev" irq \
		--ioengine=pvsync2 --hipri=1 --iodepth=1
}

ktap_print_header
ktap_set_plan 10
# 4 KiB chunks: most bios are split.
dmp_dm_create paths-striped "0 131072 striped 2 8 $a 0 $b 0" ||
	ktap_exit_fail_msg "cannot create dm-striped"
paths_cases dm-striped "$DMP_NODE"
dmp_cleanup
dmp_md_create 0 --chunk=4 -- "$a" "$b" || ktap_exit_fail_msg "cannot create md raid0"
paths_cases "md raid0" "$DMP_NODE"
ktap_finished
