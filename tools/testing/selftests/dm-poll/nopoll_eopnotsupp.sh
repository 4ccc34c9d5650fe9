#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A device without poll queues reports queue/io_poll 0 and fails polled
# I/O at once with EOPNOTSUPP instead of leaving it unreaped; a dm device
# stacked on it inherits both.  Interrupt-driven I/O still works.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup
dmp_require_nullb

ktap_print_header
ktap_set_plan 6
dmp_nullb_create nopoll size=64 memory_backed=1 queue_mode=2 poll_queues=0 \
	submit_queues=1 irqmode=1 || ktap_exit_fail_msg "cannot create null_blk"
nullb=$DMP_NODE
dmp_dm_create nopoll "0 65536 linear $nullb 0" || ktap_exit_fail_msg "cannot create dm-linear"
dm=$DMP_NODE

for role in null_blk dm-linear; do
	dev=$nullb
	[ "$role" = null_blk ] || dev=$dm
	dmp_check_io_poll "$role" "$dev" 0
	dmp_check_eopnotsupp "$role" "$dev"
	if "$DMP_VERIFY" -I -s 1M -b 4k -q 4 -S 41 "$dev"; then
		ktap_test_pass "$role: interrupt-driven I/O works"
	else
		ktap_test_fail "$role: interrupt-driven I/O failed"
	fi
done
ktap_finished
