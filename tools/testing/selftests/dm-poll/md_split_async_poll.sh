#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# md splits a bio across a linear member boundary or a raid1 barrier unit
# (64 MiB) and sends the parts while the array may be suspended: a part
# that waited for the suspend while parts sent before it are linked would
# never end it, since the suspend waits for those parts and nobody polls
# them (io_uring sets up the poll only after submit_bio() returns).  md
# linear serves every part of a polled bio from its submission, under one
# reference that the suspend waits for; raid1 polls no bio it splits.
# Rings with IOSQE_ASYNC, and for linear rings that issue inline, with
# REQ_NOWAIT, across the boundaries while the array is suspended over and
# over (100 times with DMP_FULL=1, 25 by default): every I/O must
# complete within 5 s, with its data, and for linear every part must
# have reached the members polled.  The linear members
# are pieces of dmp_fault, which spins 2 ms in ->submit_bio(), so that a
# suspend often starts between the parts: on the series that polled md's
# splits and resubmitted the rest, one did within a few cycles and the
# I/O stalled until the suspend was killed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault_lib.sh"

dmp_require_root
dmp_require_cmds mdadm dmsetup timeout
dmpf_require_module
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

# A stalled suspend is killed after 20 s, so that the test fails instead of
# hanging; the stalled I/O then fails the rings' latency check.
DMP_LOAD_PASS_S=60
DMP_LOAD_ARGS="-A -b 4k-128k"

# md_suspend NODE: one mddev_suspend() and mddev_resume() through
# suspend_lo, or, where the personality has none (linear), through
# setting the level it has, which writes no superblock.
md_suspend()
{
	local md

	md=$(dmp_sysfs "$1")/md
	dmp_note_inflight "$1"
	if [ -w "$md/suspend_lo" ]; then
		timeout 20 sh -c "echo 0 >'$md/suspend_lo'"
	else
		timeout 20 sh -c "cat '$md/level' >'$md/level'"
	fi || { echo "# suspend of $1 did not finish in 20 s"; return 1; }
}

# check_rests HOW: the submissions were held, and every part, rests
# included, reached the members polled.
check_rests()
{
	echo "# $1:$(dmpf_counters)"
	if dmpf_conds "submit_delayed>0 inflight=0 linked=clones"; then
		ktap_test_pass "$1: dmp_fault held the submissions, every part came polled"
	else
		echo "# $1: not true:$DMPF_BAD"
		ktap_test_fail "$1: dmp_fault: not all held or not all polled"
	fi
}

ktap_print_header
ktap_set_plan 7
dmpf_load "$a" || ktap_exit_fail_msg "cannot load dmp_fault on $a"
dmpf_knobs submit_delay_us=2000
dmpf_md_linear_pieces 16 ||
	ktap_exit_fail_msg "cannot build md linear of 16 members of 1 MiB"
# After the superblocks are written: from here on only rests come unpolled.
dmpf_snapshot
echo "# md linear of 16 members of 1 MiB on dmp_fault: 15 boundaries"
dmp_rings_under_load "md linear: IOSQE_ASYNC across members, suspends" \
	"$DMP_NODE" 4 "$(dmp_scaled 100)" md_suspend "$DMP_NODE"
check_rests "IOSQE_ASYNC"
# Issued inline, with REQ_NOWAIT: md splits those too, and their parts
# lose REQ_NOWAIT, so that none fails once another was sent.
DMP_LOAD_ARGS="-b 4k-128k"
dmpf_snapshot
dmp_rings_under_load "md linear: polled across members, suspends" \
	"$DMP_NODE" 4 "$(dmp_scaled 100)" md_suspend "$DMP_NODE"
check_rests "REQ_NOWAIT"
DMP_LOAD_ARGS="-A -b 4k-128k"
dmp_cleanup
dmpf_unload || ktap_exit_fail_msg "cannot unload dmp_fault"

dmp_md_create 1 --assume-clean -- "$a" "$b" ||
	ktap_exit_fail_msg "cannot create md raid1"
DMP_LOAD_BASE=$((48 << 20))
echo "# md raid1: the rings' slices from 48 MiB cross the 64 and 128 MiB barrier units"
dmp_rings_under_load "md raid1: IOSQE_ASYNC across barrier units, suspends" \
	"$DMP_NODE" 3 "$(dmp_scaled 50)" md_suspend "$DMP_NODE"
dmp_cleanup

# raid10 splits a bio across a chunk and sends the rest again, and each
# part waits for the barrier that a running check raises.
dmp_md_create 10 --assume-clean --chunk=64 -- "$a" "$b" ||
	ktap_exit_fail_msg "cannot create md raid10"
raid10=$DMP_NODE
md=$(dmp_sysfs "$raid10")/md
# raid10_cycle: a suspend, and a check running (started again once done);
# counts the cycles that found it running.
checking=0
raid10_cycle()
{
	md_suspend "$raid10" || return 1
	if [ "$(cat "$md/sync_action")" = idle ]; then
		echo check >"$md/sync_action"
	else
		checking=$((checking + 1))
	fi
}
DMP_LOAD_BASE=0
echo "# md raid10, 64 KiB chunks: 4k-128k bios across chunks, a check running"
dmp_rings_under_load "md raid10: IOSQE_ASYNC across chunks, check and suspends" \
	"$raid10" 3 "$(dmp_scaled 50)" raid10_cycle
echo idle >"$md/sync_action"
echo "# md raid10: a check was running at $checking cycles"
if [ "$checking" -gt 0 ]; then
	ktap_test_pass "md raid10: a check ran under the load"
else
	ktap_test_fail "md raid10: a check ran under the load"
fi
ktap_finished
