#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Arrays that cannot poll say so and fail polled I/O at once with
# EOPNOTSUPP: raid5, whose stripe handling runs in raid5d, and a raid0
# with a member that has no poll queues.  Interrupt-driven I/O works.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds mdadm dmsetup
dmp_require_nullb
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

ktap_print_header
ktap_set_plan 6
members=()
for d in "$a" "$b" "$a"; do
	dmp_dm_create "r5m${#members[@]}" "0 262144 linear $d $((${#members[@]} * 262144))" ||
		ktap_exit_fail_msg "cannot create dm-linear member"
	members+=("$DMP_NODE")
done
dmp_md_create 5 --assume-clean --size=65536 -- "${members[@]}" ||
	ktap_exit_fail_msg "cannot create md raid5"
dev=$DMP_NODE
dmp_check_io_poll "md raid5" "$dev" 0
dmp_check_eopnotsupp "md raid5" "$dev"
dmp_check_irq "md raid5 4k qd8" "$dev" -s 8M -b 4k -q 8 -S 71
dmp_cleanup

dmp_nullb_create nopoll size=256 memory_backed=1 queue_mode=2 poll_queues=0 \
	submit_queues=1 || ktap_exit_fail_msg "cannot create null_blk"
dmp_md_create 0 --chunk=64 -- "$a" "$DMP_NODE" || ktap_exit_fail_msg "cannot create md raid0"
dev=$DMP_NODE
dmp_check_io_poll "md raid0 with a member without poll queues" "$dev" 0
dmp_check_eopnotsupp "md raid0 with a member without poll queues" "$dev"
if "$DMP_VERIFY" -I -s 8M -b 4k-64k -q 8 -S 72 "$dev"; then
	ktap_test_pass "md raid0 with a member without poll queues: interrupt-driven I/O works"
else
	ktap_test_fail "md raid0 with a member without poll queues: interrupt-driven I/O failed"
fi
ktap_finished
