#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# md raid0 polls end to end with chunks of 4 KiB to 512 KiB, for bios of
# 512 B to 1 MiB: md cuts polled bios to the chunk itself and both parts
# of a bio split at a chunk boundary stay linked to the polled bio.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds mdadm
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

ktap_print_header
ktap_set_plan 7
dmp_md_create 0 --chunk=4 -- "$a" "$b" || ktap_exit_fail_msg "cannot create md raid0"
dev=$DMP_NODE
dmp_check_io_poll "md raid0" "$dev" 1
dmp_check_polled "md raid0, 4K chunks: 512B-1M" "$dev" -s 16M -b 512-1M -q 4 -S 41
dmp_cleanup

dmp_md_create 0 --chunk=64 -- "$a" "$b" || ktap_exit_fail_msg "cannot create md raid0"
dev=$DMP_NODE
dmp_check_polled "md raid0, 64K chunks: 4k qd16" "$dev" -s 16M -b 4k -q 16 -S 42
dmp_check_polled "md raid0, 64K chunks: 512B-1M" "$dev" -s 16M -b 512-1M -q 4 -S 43
dmp_check_irq "md raid0, 64K chunks: 4k qd8" "$dev" -s 16M -b 4k -q 8 -S 44
dmp_cleanup

dmp_md_create 0 --chunk=512 -- "$a" "$b" || ktap_exit_fail_msg "cannot create md raid0"
dev=$DMP_NODE
dmp_check_polled "md raid0, 512K chunks: 512B-1M" "$dev" -s 16M -b 512-1M -q 4 -S 45
dmp_cleanup

if dmp_nullb_create n0 size=64 memory_backed=1 queue_mode=2 poll_queues=1 &&
	n0=$DMP_NODE && dmp_nullb_create n1 size=64 memory_backed=1 queue_mode=2 poll_queues=1 &&
	dmp_md_create 0 --chunk=16 -- "$n0" "$DMP_NODE"; then
	dmp_check_verified "md raid0 over null_blk: 512B-256k" "$DMP_NODE" -b 512-256k -q 8 -S 46
else
	ktap_test_skip "md raid0 over null_blk: no null_blk devices with poll queues"
fi
ktap_finished
