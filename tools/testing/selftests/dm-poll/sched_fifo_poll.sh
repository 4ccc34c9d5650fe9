#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A real-time poller: a SCHED_FIFO reader pinned to one CPU that spins on
# its completion queue and never sleeps, with RT throttling off
# (sched_rt_runtime_us=-1), as IOPOLL is deployed.  Nothing that runs as
# a normal task on its CPU runs while it spins, but for the fair server's
# 50 ms a second: work that its I/O waits for must not be queued there.
# As on such a deployment, unbound workqueues (the workqueue cpumask) and
# md's threads are kept off the poller's CPU: the scheduler would
# otherwise wake them there, next to the task that woke them.
#
# Each case has a device below with one tag, so that REQ_NOWAIT clones
# fail with BLK_STS_AGAIN and the stacking driver retries them from its
# worker: DM from kdmflush (polled clones, crypt's too, and the parts of
# split interrupt-driven bios), md from raid1d and its unbound workers.
# Asserted: the retry path ran (bios below ended with BLK_STS_AGAIN),
# none of the work for DM or md was queued bound to the poller's CPU,
# and no I/O took 100 ms or more, its data verified.  When DM queued
# its retries on the CPU that saw the BLK_STS_AGAIN, as Linux 6.12 does,
# each waited for the fair server, about a second; and so did a request
# waiting in mq-deadline for a tag, whose queue run blk-mq queued to
# kblockd on the poller's CPU.  (The same reader by interrupt:
# sched_fifo_isolated_poll.sh.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fifo_lib.sh"

dmp_require_root
dmp_require_cmds dmsetup mdadm taskset
dmp_require_nullb
KEY=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
ktap_print_header
ktap_set_plan 5
fifo_setup

onetag fifoa 0 || ktap_exit_fail_msg "cannot create null_blk with one tag"
a=$DMP_NODE
dmp_nullb_create fifob size=64 memory_backed=1 queue_mode=2 ||
	ktap_exit_fail_msg "cannot create null_blk"
b=$DMP_NODE
# 128 KiB from 32 KiB on: every read crosses two 64 KiB chunks, a part
# on the leg with one tag.
dmp_dm_create fifo-striped "0 131072 striped 2 128 $a 0 $b 0" ||
	ktap_exit_fail_msg "cannot create dm-striped"
fifo_read "dm-striped, one leg with one tag, interrupt driven, 128 KiB" \
	"$a" "$DMP_NODE" -I -o 32k -s 16M -b 128k -q 4

onetag fifoc 1 || ktap_exit_fail_msg "cannot create null_blk with one tag"
c=$DMP_NODE
dmp_dm_create fifo-linear "0 65536 linear $c 0" ||
	ktap_exit_fail_msg "cannot create dm-linear"
fifo_read "dm-linear over one tag, polled" "$c" "$DMP_NODE" -s 16M -b 4k -q 4
# With an I/O scheduler, a request that finds the tag taken waits in the
# scheduler for a queue run, which the completion that frees the tag
# queues to kblockd (blk_mq_sched_restart()).
echo mq-deadline >"$(dmp_sysfs "$c")/queue/scheduler" ||
	ktap_exit_fail_msg "cannot set mq-deadline"
fifo_read "dm-linear over one tag with mq-deadline, polled" "$c" "$DMP_NODE" \
	-s 16M -b 4k -q 4
echo none >"$(dmp_sysfs "$c")/queue/scheduler" ||
	ktap_exit_fail_msg "cannot set scheduler none"
dmp_dm_remove fifo-linear

dmp_dm_create fifo-crypt "0 65536 crypt aes-xts-plain64 $KEY 0 $c 0" ||
	ktap_exit_fail_msg "cannot create dm-crypt"
fifo_read "dm-crypt over one tag, polled" "$c" "$DMP_NODE" -s 16M -b 4k -q 4
dmp_dm_remove fifo-crypt

onetag fifod 1 || ktap_exit_fail_msg "cannot create null_blk with one tag"
d=$DMP_NODE
dmp_md_create 1 --assume-clean --bitmap=none -- "$c" "$d" ||
	ktap_exit_fail_msg "cannot create md raid1"
taskset -p -c "$others_list" "$(pidof "${DMP_NODE#/dev/}_raid1")" >/dev/null ||
	ktap_exit_fail_msg "cannot keep raid1d off CPU $cpu"
fifo_read "md raid1 over one tag, polled" "$c $d" "$DMP_NODE" -s 16M -b 4k -q 4
ktap_finished
