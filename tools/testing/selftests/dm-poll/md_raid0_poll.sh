#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# md raid0 polls end to end with chunks of 4 KiB to 512 KiB.  Neither md
# nor the block layer polls a bio it splits: a bio across a chunk
# boundary (raid0 splits it) or larger than a chunk (the block layer does)
# fails with -EAGAIN before any part is sent, and io_uring sends it again
# from a worker; its parts complete by interrupt, with its data.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds mdadm
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

ktap_print_header
ktap_set_plan 10
dmp_md_create 0 --chunk=4 -- "$a" "$b" || ktap_exit_fail_msg "cannot create md raid0"
dev=$DMP_NODE
dmp_check_io_poll "md raid0" "$dev" 1
dmp_check_polled "md raid0, 4K chunks: 4k" "$dev" -s 16M -b 4k -q 4 -S 41
dmp_check_polled_by_irq "md raid0, 4K chunks: 512B-4k, across chunks" "$dev" \
	-s 16M -b 512-4k -q 4 -S 49
dmp_cleanup

dmp_md_create 0 --chunk=64 -- "$a" "$b" || ktap_exit_fail_msg "cannot create md raid0"
dev=$DMP_NODE
dmp_check_polled "md raid0, 64K chunks: 4k qd16" "$dev" -s 16M -b 4k -q 16 -S 42
dmp_check_polled "md raid0, 64K chunks: 64k, chunk aligned" "$dev" -s 16M -b 64k -q 4 -S 43
dmp_check_polled_by_irq "md raid0, 64K chunks: 128k-1M, larger than a chunk" "$dev" \
	-s 16M -b 128k-1M -q 4 -S 47
dmp_check_irq "md raid0, 64K chunks: 4k qd8" "$dev" -s 16M -b 4k -q 8 -S 44
dmp_cleanup

dmp_md_create 0 --chunk=512 -- "$a" "$b" || ktap_exit_fail_msg "cannot create md raid0"
dev=$DMP_NODE
dmp_check_polled_by_irq "md raid0, 512K chunks: 512B-512k, some across chunks" "$dev" \
	-s 16M -b 512-512k -q 4 -S 45
dmp_cleanup

# One tag per queue: the polled clones that find no tag fail with
# BLK_STS_AGAIN, which md must retry itself; the submitter only learns of
# it when polling, too late to retry.
if ! dmp_have_nullb; then
	ktap_test_skip "md raid0 over null_blk with one tag: no null_blk"
elif dmp_nullb_create onetag size=64 memory_backed=1 queue_mode=2 poll_queues=1 \
	submit_queues=1 hw_queue_depth=1 &&
	dmp_md_create 0 --chunk=4 -- "$DMP_NODE" "$a"; then
	dmp_check_verified "md raid0 over null_blk with one tag and NVMe: 512B-4k qd8" \
		"$DMP_NODE" -s 8M -b 512-4k -q 8 -S 48
else
	ktap_test_fail "md raid0 over null_blk with one tag: cannot create"
fi
dmp_cleanup

if ! dmp_have_nullb; then
	ktap_test_skip "md raid0 over null_blk: no null_blk"
elif dmp_nullb_create n0 size=64 memory_backed=1 queue_mode=2 poll_queues=1 &&
	n0=$DMP_NODE && dmp_nullb_create n1 size=64 memory_backed=1 queue_mode=2 poll_queues=1 &&
	dmp_md_create 0 --chunk=16 -- "$n0" "$DMP_NODE"; then
	dmp_check_verified "md raid0 over null_blk: 512B-16k" "$DMP_NODE" -b 512-16k -q 8 -S 46
else
	ktap_test_fail "md raid0 over null_blk: cannot create"
fi
ktap_finished
