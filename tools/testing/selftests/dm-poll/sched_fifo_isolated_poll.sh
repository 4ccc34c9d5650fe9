#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A real-time reader by interrupt: sched_fifo_poll.sh's SCHED_FIFO
# reader, pinned to a CPU that the boot isolated (isolcpus=), spinning on
# the completion queue of a ring without IOPOLL, through dm-linear over a
# null_blk with one tag and mq-deadline, whose two requests four reads
# compete for.  What fails with BLK_STS_AGAIN (io_uring's REQ_NOWAIT)
# goes back to io_uring, which reads it again from an io-wq worker; that
# worker inherits the reader's priority and CPU affinity, and on the
# reader's CPU it would never run while the reader spins, stacked or not.
# The reader binds io-wq to the other CPUs (IORING_REGISTER_IOWQ_AFF,
# iopoll_verify -a), as a real-time application must (polled-io.rst).
# The worker's reads then free the tag on another CPU and queue a run of
# the queue to kblockd on the CPU that blk-mq's round robin picks among
# the hardware queue's CPUs: an isolated CPU is not among them
# (blk_mq_map_swqueue()); a CPU that only the workqueue cpumask keeps
# work off is, and the run waits there for the fair server, about a
# second.  Hence the isolated CPU, which the "isolated" VM machine
# boots with (scripts/vm-machines).
# Asserted: reads failed with BLK_STS_AGAIN below (io-wq read them), no
# work for DM queued bound to the reader's CPU, no I/O took 100 ms, the
# data verified.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fifo_lib.sh"

dmp_require_root
dmp_require_cmds dmsetup taskset
dmp_require_nullb
ktap_print_header
ktap_set_plan 1
fifo_setup
list_cpus /sys/devices/system/cpu/isolated | grep -qx "$cpu" ||
	dmp_skip_all "CPU $cpu is not isolated (isolcpus=$cpu: the \"isolated\" VM machine)"

onetag fifoc 1 || ktap_exit_fail_msg "cannot create null_blk with one tag"
c=$DMP_NODE
echo mq-deadline >"$(dmp_sysfs "$c")/queue/scheduler" ||
	ktap_exit_fail_msg "cannot set mq-deadline"
dmp_dm_create fifo-linear "0 65536 linear $c 0" ||
	ktap_exit_fail_msg "cannot create dm-linear"
fifo_read "dm-linear over one tag with mq-deadline, interrupt driven, io-wq on CPUs $others_list" \
	"$c" "$DMP_NODE" -I -a "$others_list" -s 16M -b 4k -q 4
ktap_finished
