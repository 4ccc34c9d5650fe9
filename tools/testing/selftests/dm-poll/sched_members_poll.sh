#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Each I/O scheduler on the NVMe members of dm-striped and md raid0: none,
# mq-deadline, kyber and bfq.  A polled request is allocated on the poll
# hardware queue whatever the elevator; with one, blk-mq inserts it there
# and dispatches it later, from kblockd, to that queue, which io_uring
# polls through the stack: polled end to end, data verified, 0 interrupts,
# as long as the clones in flight stay within the scheduler's depth for
# writes (mq-deadline's and kyber's async_depth, bfq's word depths, 3/4 of
# nr_requests or less).  Past it, a REQ_NOWAIT clone that finds no
# scheduler tag fails with BLK_STS_AGAIN, and dm and md send it again from
# a worker, unpolled, to complete by interrupt: the deep runs must
# complete, every I/O, with its data, whatever the interrupts.  The same
# I/O interrupt driven under bfq raises some (the control).  The members'
# schedulers are restored at the end.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup mdadm
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}
scheds="none mq-deadline kyber bfq"
# The deep runs queue hundreds of requests through an elevator on an
# emulated, shared machine: allow 5 s an I/O, as the load rings do; a
# polled bio that nobody polls waits for the NVMe timeout, 30 s.
deep_lat_ms=${DMP_LOAD_MAX_LAT_MS:-5000}

# sched_of DEV: the scheduler DEV uses.
sched_of()
{
	sed -n 's/.*\[\(.*\)\].*/\1/p' "$(dmp_sysfs "$1")/queue/scheduler"
}
saved_a=$(sched_of "$a") saved_b=$(sched_of "$b")
# The scheduler modules this test loads, unloaded at the end.
loaded=''
for m in kyber_iosched bfq; do
	[ -d "/sys/module/$m" ] || loaded="$loaded $m"
done

restore_sched()
{
	local m

	echo "$saved_a" >"$(dmp_sysfs "$a")/queue/scheduler"
	echo "$saved_b" >"$(dmp_sysfs "$b")/queue/scheduler"
	for m in $loaded; do
		[ ! -d "/sys/module/$m/holders" ] || modprobe -r "$m" ||
			echo "# cleanup: cannot unload $m"
	done
}
dmp_on_exit restore_sched

# set_sched NAME: both members on scheduler NAME (a module, loaded by its
# alias as the elevator code would).
set_sched()
{
	local m

	[ "$1" = none ] || modprobe -q "$1-iosched" || true
	for m in "$a" "$b"; do
		echo "$1" >"$(dmp_sysfs "$m")/queue/scheduler" 2>/dev/null || return 1
		[ "$(sched_of "$m")" = "$1" ] || return 1
	done
}

# sched_cases STACK DEV: for each scheduler, polled I/O on DEV with its
# bios split across the members' chunks, at two depths.  Two KTAP results
# a scheduler.
sched_cases()
{
	local stack=$1 dev=$2 s seed=70 desc

	for s in $scheds; do
		if ! set_sched "$s"; then
			ktap_test_fail "$stack, members on $s: cannot set the scheduler"
			ktap_test_fail "$stack, members on $s, deep: cannot set the scheduler"
			continue
		fi
		# At most 64 clones in flight, 32 a member: within every
		# scheduler's depth for writes.
		dmp_check_polled "$stack, members on $s" "$dev" -s 8M -b 4k-64k -q 4 -S $((seed++))
		# Up to 1024 clones: past it.
		desc="$stack, members on $s, deep"
		if DMP_MAX_LAT_MS=$deep_lat_ms dmp_verify_counted "$dev" \
			-s 8M -b 4k-128k -q 32 -S $((seed++)); then
			echo "# $desc: $DMP_IRQS interrupts, no I/O over $deep_lat_ms ms"
			ktap_test_pass "$desc: data verified, no I/O over the latency limit"
		else
			ktap_test_fail "$desc: I/O failed or was slow"
		fi
	done
}

ktap_print_header
ktap_set_plan 18
dmp_dm_create sched-striped "0 131072 striped 2 8 $a 0 $b 0" ||
	ktap_exit_fail_msg "cannot create dm-striped"
sched_cases dm-striped "$DMP_NODE"
dmp_check_irq "dm-striped, members on bfq" "$DMP_NODE" -s 8M -b 4k-64k -q 4 -S 79
dmp_cleanup

dmp_md_create 0 --chunk=4 -- "$a" "$b" || ktap_exit_fail_msg "cannot create md raid0"
sched_cases "md raid0" "$DMP_NODE"
dmp_check_irq "md raid0, members on bfq" "$DMP_NODE" -s 8M -b 4k-64k -q 4 -S 89
ktap_finished
