#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# An io_uring read across a raid4/5/6 chunk is split in the submitter,
# not handed to io-wq, and its parts do not sleep there.  raid5 reads a
# bio inside one chunk straight from its member (the aligned read path)
# and splits one that crosses a chunk there.  Once REQ_NOWAIT bios could
# fail in its stripes, it failed such a read whole with BLK_STS_AGAIN,
# so that no part could fail after another was read, and io_uring read
# every one again from an io-wq worker: 5% more instructions per 128 KiB
# read than Linux 6.12.  Now the parts keep REQ_NOWAIT for the members
# (a part that finds a member's tags taken ends with BLK_STS_AGAIN there
# and raid5d reads it through the stripes), and only a part that goes to
# the stripes loses it.  Reads of 32 KiB at 8 KiB + n x 32 KiB, each
# across two chunk boundaries of 16 KiB chunks, by interrupt at QD8:
#   1. md raid5 of three memory-backed null_blk: no read reaches an io-wq
#      worker (iopoll_verify -I -W), data verified;
#   2. the same through dm-linear over the array;
#   3. md raid5 of three null_blk with one tag each request holds 5 ms:
#      fio never sleeps in its submit path, and parts end with
#      BLK_STS_AGAIN at the members, counted (dmp_check_no_sleep).
. "$(dirname "$0")/lib.sh"

set -o pipefail

dmp_require_root
dmp_require_cmds mdadm dmsetup fio
dmp_require_nullb

ktap_print_header
ktap_set_plan 3

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

slow=()
for m in a b c; do
	dmp_nullb_create "r5t$m" size=64 memory_backed=1 queue_mode=2 submit_queues=1 \
		hw_queue_depth=1 irqmode=2 completion_nsec=5000000 ||
		ktap_exit_fail_msg "cannot create null_blk with one slow tag"
	slow+=("$DMP_NODE")
done
dmp_md_create 5 --assume-clean --bitmap=none --chunk=16 -- "${slow[@]}" ||
	ktap_exit_fail_msg "cannot create md raid5 over one-tag members"
filter=$(dmp_again_filter "${slow[@]}") || ktap_exit_fail_msg "cannot trace the members"
dmp_check_no_sleep "md raid5 over members with one tag: reads across chunks" "$filter" \
	"reads to the members" "no part found a member's tag taken" \
	fio --name=r5split --filename="$DMP_NODE" --ioengine=io_uring --direct=1 \
	--rw=randread --bs=32k --offset=8k --size=8M --io_size=2M --iodepth=8 \
	--output-format=terse --terse-version=3 --output=/tmp/fio.terse
ktap_finished
