#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# md splits a bio across a linear member boundary or a raid1 barrier unit
# (64 MiB): it sends the part split off and resubmits the rest, which
# waits while the array is suspended.  io_uring's workers issue polled
# bios without REQ_NOWAIT (IOSQE_ASYNC here, or after an -EAGAIN), so the
# rest waits in the worker's submit_bio() while the suspend waits for the
# part sent; were that part polled, nobody would poll it, since io_uring
# sets up the poll only after submit_bio() returns.  md polls no bio it
# splits: the part completes by interrupt and the suspend goes on.  Rings
# with IOSQE_ASYNC across the boundaries while the array is suspended over
# and over: every I/O must complete within 5 s, with its data.  The linear
# members are pieces of dmp_fault, which spins 2 ms in ->submit_bio(), so
# that a suspend often starts between the part sent and the rest: on the
# series that polled md's splits, one did within a few cycles and the I/O
# stalled until the suspend was killed.
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
# suspend_lo, or, where the personality has none (linear), two through a
# member's write-mostly flag.
md_suspend()
{
	local md state

	md=$(dmp_sysfs "$1")/md
	state=$(find "$md" -maxdepth 2 -path '*/dev-*/state' | head -n 1)
	if [ -w "$md/suspend_lo" ]; then
		timeout 20 sh -c "echo 0 >'$md/suspend_lo'"
	else
		timeout 20 sh -c "echo writemostly >'$state' && echo -writemostly >'$state'"
	fi || { echo "# suspend of $1 did not finish in 20 s"; return 1; }
}

ktap_print_header
ktap_set_plan 3
dmpf_load "$a" || ktap_exit_fail_msg "cannot load dmp_fault on $a"
dmpf_knobs submit_delay_us=2000
dmpf_snapshot
dmpf_md_linear_pieces 16 ||
	ktap_exit_fail_msg "cannot build md linear of 16 members of 1 MiB"
echo "# md linear of 16 members of 1 MiB on dmp_fault: 15 boundaries"
dmp_rings_under_load "md linear: IOSQE_ASYNC across members, suspends" \
	"$DMP_NODE" 4 100 md_suspend "$DMP_NODE"
if dmpf_conds "submit_delayed>0 inflight=0"; then
	ktap_test_pass "dmp_fault held the submissions:$(dmpf_counters)"
else
	ktap_test_fail "dmp_fault: not true:$DMPF_BAD"
fi
dmp_cleanup
dmpf_unload || ktap_exit_fail_msg "cannot unload dmp_fault"

dmp_md_create 1 --assume-clean -- "$a" "$b" ||
	ktap_exit_fail_msg "cannot create md raid1"
DMP_LOAD_BASE=$((48 << 20))
echo "# md raid1: the rings' slices from 48 MiB cross the 64 and 128 MiB barrier units"
dmp_rings_under_load "md raid1: IOSQE_ASYNC across barrier units, suspends" \
	"$DMP_NODE" 3 50 md_suspend "$DMP_NODE"
ktap_finished
