#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A REQ_NOWAIT bio that md would split across a linear member boundary
# fails with -EAGAIN before any part is sent, and io_uring sends it again
# from a worker.  Were it split, the rest would go through md's queue
# again, and a frozen queue (any queue sysfs store freezes it) fails a
# REQ_NOWAIT bio with BLK_STS_AGAIN: the bio completes with -EAGAIN after
# its first part was done, which io_uring 6.12 posts, for a polled bio, as
# a completed read or write of full length.  Polled rings across the
# boundaries while md's queue is frozen over and over: every I/O must
# complete with its data.  The split bios complete by interrupt; the
# interrupts counted show that splits happened.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds mdadm dmsetup
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

DMP_LOAD_ARGS="-b 4k-128k"

# freeze_queue NODE: one freeze and unfreeze of NODE's queue.
freeze_queue()
{
	local f v

	f=$(dmp_sysfs "$1")/queue/iostats
	v=$(cat "$f") && echo "$v" >"$f"
}

ktap_print_header
ktap_set_plan 2
members=()
for ((i = 0; i < 8; i++)); do
	dev=$a
	[ $((i % 2)) = 1 ] && dev=$b
	dmp_dm_create "part$i" "0 8192 linear $dev $((i * 8192))" ||
		ktap_exit_fail_msg "cannot create member $i"
	members+=("$DMP_NODE")
done
dmp_md_build linear -- "${members[@]}" ||
	ktap_exit_fail_msg "cannot build md linear of 8 members of 4 MiB"
md=$DMP_NODE
re=$(dmp_irq_regex "$md")
before=$(dmp_irqs "$re")
dmp_rings_under_load "md linear: polled across members, queue freezes" \
	"$md" 4 300 freeze_queue "$md"
irqs=$(($(dmp_irqs "$re") - before))
if [ "$irqs" -gt 0 ]; then
	ktap_test_pass "md linear: split bios completed by interrupt ($irqs interrupts)"
else
	ktap_test_fail "md linear: no interrupt: no bio was split ($re)"
fi
ktap_finished
