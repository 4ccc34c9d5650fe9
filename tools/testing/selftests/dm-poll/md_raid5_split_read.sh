#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# An io_uring read across a raid4/5/6 chunk is split in the submitter,
# not handed to io-wq.  raid5 reads a bio inside one chunk straight from
# its member (the aligned read path) and splits one that crosses a
# chunk there.  It used to fail such a REQ_NOWAIT read whole with
# BLK_STS_AGAIN, so that a part sent to the stripes could not fail after
# the other was read, and io_uring read every one again from an io-wq
# worker: 5% more instructions per 128 KiB read than Linux 6.12.  Now
# the parts go without REQ_NOWAIT, and only a quiesce or suspend under
# way fails the read whole.  md raid5 of three memory-backed null_blk,
# 16 KiB chunks; reads of 32 KiB at 8 KiB + n x 32 KiB, each across two
# chunk boundaries, by interrupt at QD8 (iopoll_verify -I -W: no I/O may
# reach an io-wq worker), the data verified; then the same through
# dm-linear over the array.
. "$(dirname "$0")/lib.sh"

set -o pipefail

dmp_require_root
dmp_require_cmds mdadm dmsetup
dmp_require_nullb

ktap_print_header
ktap_set_plan 2

# split_reads DESC DEV: write the pattern across DEV's chunks, then read
# it back, no read going to io-wq.  One KTAP result.
split_reads()
{
	local desc=$1 dev=$2 args=(-I -S 5 -o 8k -s 8M -b 32k -q 8)

	if ! "$DMP_VERIFY" -m write "${args[@]}" "$dev" | sed 's/^/# /'; then
		ktap_test_fail "$desc: writing the pattern"
	elif ! "$DMP_VERIFY" -m read -W "${args[@]}" "$dev" | sed 's/^/# /'; then
		ktap_test_fail "$desc: a read went to io-wq or failed"
	else
		ktap_test_pass "$desc: split in the submitter, verified"
	fi
}

members=()
for m in a b c; do
	dmp_nullb_create "r5s$m" size=64 memory_backed=1 queue_mode=2 submit_queues=1 ||
		ktap_exit_fail_msg "cannot create null_blk"
	members+=("$DMP_NODE")
done
dmp_md_create 5 --assume-clean --bitmap=none --chunk=16 -- "${members[@]}" ||
	ktap_exit_fail_msg "cannot create md raid5"
md=$DMP_NODE
split_reads "md raid5: 32 KiB reads across two chunk boundaries" "$md"
dmp_dm_create r5lin "0 $(blockdev --getsz "$md") linear $md 0" ||
	ktap_exit_fail_msg "cannot create dm-linear over md raid5"
split_reads "dm-linear over md raid5: the same reads" "$DMP_NODE"
ktap_finished
