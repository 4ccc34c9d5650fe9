#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# md raid0 polls end to end with chunks of 4 KiB to 512 KiB, bios across
# a chunk boundary (raid0 splits them) or larger than a chunk (the block
# layer splits them for md) too: io_uring's REQ_NOWAIT bio is split in its
# submitter (-W: no I/O goes to an io-wq worker), and md polls every part
# through the bio io_uring polls.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds mdadm
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

ktap_print_header
ktap_set_plan 12
dmp_md_create 0 --chunk=4 -- "$a" "$b" || ktap_exit_fail_msg "cannot create md raid0"
dev=$DMP_NODE
dmp_check_io_poll "md raid0" "$dev" 1
dmp_check_polled "md raid0, 4K chunks: 4k" "$dev" -s 16M -b 4k -q 4 -S 41
dmp_check_polled "md raid0, 4K chunks: 512B-4k, across chunks" "$dev" \
	-s 16M -b 512-4k -q 4 -S 49 -W
dmp_cleanup

dmp_md_create 0 --chunk=64 -- "$a" "$b" || ktap_exit_fail_msg "cannot create md raid0"
dev=$DMP_NODE
dmp_check_polled "md raid0, 64K chunks: 4k qd16" "$dev" -s 16M -b 4k -q 16 -S 42
dmp_check_polled "md raid0, 64K chunks: 64k, chunk aligned" "$dev" -s 16M -b 64k -q 4 -S 43
dmp_check_polled "md raid0, 64K chunks: 128k-1M, larger than a chunk" "$dev" \
	-s 16M -b 128k-1M -q 4 -S 47 -W
# One write and one read each: 8k across a chunk boundary, two parts;
# 128k from 4k, cut to 64k by the block layer and each half by raid0,
# four parts.
dmp_check_polled_parts "md raid0, 64K chunks: 8k across a chunk" "$dev" 4 \
	-o 60k -s 8k -b 8k -q 1 -S 50 -W
dmp_check_polled_parts "md raid0, 64K chunks: 128k across three chunks" "$dev" 8 \
	-o 4k -s 128k -b 128k -q 1 -S 51 -W
dmp_check_irq "md raid0, 64K chunks: 4k qd8" "$dev" -s 16M -b 4k -q 8 -S 44
dmp_cleanup

dmp_md_create 0 --chunk=512 -- "$a" "$b" || ktap_exit_fail_msg "cannot create md raid0"
dev=$DMP_NODE
dmp_check_polled "md raid0, 512K chunks: 512B-512k, some across chunks" "$dev" \
	-s 16M -b 512-512k -q 4 -S 45 -W
dmp_cleanup

# One tag per queue: the polled clones that find no tag fail with
# BLK_STS_AGAIN, which md must retry itself; the submitter only learns of
# it when polling, too late to retry.  iopoll_verify's I/Os are
# sequential, so the clones of a round are contiguous on the member and
# would merge into the request that holds the tag: no merges there.
if ! dmp_have_nullb; then
	ktap_test_skip "md raid0 over null_blk with one tag: no null_blk"
elif dmp_nullb_create onetag size=64 memory_backed=1 queue_mode=2 poll_queues=1 \
	submit_queues=1 hw_queue_depth=1 && onetag=$DMP_NODE &&
	echo 2 >"$(dmp_sysfs "$onetag")/queue/nomerges" &&
	dmp_md_create 0 --chunk=4 -- "$onetag" "$a"; then
	dmp_check_again "md raid0 over null_blk with one tag and NVMe: 512B-4k qd8" \
		"$onetag" "$DMP_NODE" -s 8M -b 512-4k -q 8 -S 48
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
