#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# md linear splits a polled REQ_NOWAIT bio across a member boundary in
# its submitter, and the rest goes through md's queue again, where a
# frozen queue (any queue sysfs store freezes it) fails a REQ_NOWAIT bio
# with BLK_STS_AGAIN: the bio would complete with -EAGAIN after its first
# part was done, which io_uring 6.12 posts, for a polled bio, as a
# completed read or write of full length.  So the parts lose REQ_NOWAIT
# and the rest waits for the freeze.  Polled rings across the boundaries
# while md's queue is frozen over and over: every I/O must complete with
# its data, and every part is polled: no interrupt.  The linear members
# are pieces of dmp_fault, which spins 2 ms in ->submit_bio(), so that a
# freeze often starts between the part sent and the rest: on the series
# that sent such rests with REQ_NOWAIT, reads came back without the data
# of their rest and writes were posted done without it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault_lib.sh"

dmp_require_root
dmp_require_cmds mdadm dmsetup
dmpf_require_module
dmp_get_nvme_devs 1
a=${DMP_NVME[0]}

DMP_LOAD_ARGS="-b 4k-128k"

ktap_print_header
ktap_set_plan 3
dmpf_load "$a" || ktap_exit_fail_msg "cannot load dmp_fault on $a"
dmpf_knobs submit_delay_us=2000
dmpf_md_linear_pieces 16 ||
	ktap_exit_fail_msg "cannot build md linear of 16 members of 1 MiB"
md=$DMP_NODE
re=$(dmp_irq_regex "$md")
before=$(dmp_irqs "$re")
dmp_rings_under_load "md linear: polled across members, queue freezes" \
	"$md" 4 300 dmp_freeze_queue "$md"
irqs=$(($(dmp_irqs "$re") - before))
echo "# md linear: $irqs interrupts (${re:-no device below $md to count})"
if [ -z "$re" ]; then
	ktap_test_fail "md linear: no device below has interrupts to count"
elif [ "$irqs" -eq 0 ]; then
	ktap_test_pass "md linear: split bios polled, 0 interrupts"
else
	ktap_test_fail "md linear: interrupts during polled I/O"
fi
dmp_cleanup
dmpf_check_unload "unload" "$a"
ktap_finished
