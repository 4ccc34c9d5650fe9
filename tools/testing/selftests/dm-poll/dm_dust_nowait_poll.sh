#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dm-dust takes REQ_NOWAIT bios.  A write to a bad block heals the block
# (removes it from the bad block list) before it is remapped: a
# REQ_NOWAIT one that then fails with BLK_STS_AGAIN below must not have
# healed it, or the block reads back its old data instead of failing
# once the caller gives up.  pwritev2(RWF_NOWAIT) of a bad block while
# the one tag of the null_blk below is held by a slow read: the write
# fails with EAGAIN and the block stays bad; a write that may wait heals
# it.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup fio dd awk
dmp_require_nullb

# bad_block_listed NAME BLOCK: dm-dust NAME lists BLOCK as bad.
bad_block_listed()
{
	dmsetup message "$1" 0 queryblock "$2" 2>&1 | grep -q "block $2 found in badblocklist"
}

# hold_the_tag DEV: a read that holds DEV's one tag for 2 s, in the
# background; wait until it is in flight (at most 10 s).  Sets holder.
hold_the_tag()
{
	local i inflight

	dd if="$1" of=/dev/null bs=512 count=1 iflag=direct status=none &
	holder=$!
	for ((i = 0; i < 100; i++)); do
		read -r inflight _ <"$(dmp_sysfs "$1")/inflight"
		[ "$inflight" -gt 0 ] && return 0
		sleep 0.1
	done
	return 1
}

# direct_write DEV BLOCK [FIO-OPTION...]: an O_DIRECT pwritev2() of
# 512-byte BLOCK; print fio's error number (0: written).
direct_write()
{
	local dev=$1 block=$2
	shift 2

	fio --name=write --filename="$dev" --ioengine=pvsync2 "$@" \
		--direct=1 --rw=write --bs=512 --offset=$((block * 512)) --size=512 \
		--number_ios=1 --output-format=terse --terse-version=3 2>/dev/null |
		awk -F';' '$1 == 3 { print $5 }'
}

ktap_print_header
ktap_set_plan 3

# 2 s a request: the read below holds the only tag that long.
dmp_nullb_create onetag size=64 memory_backed=0 queue_mode=2 submit_queues=1 \
	hw_queue_depth=1 irqmode=2 completion_nsec=2000000000 ||
	ktap_exit_fail_msg "cannot create null_blk with one slow tag"
nullb=$DMP_NODE
dmp_dm_create dust "0 131072 dust $nullb 0 512" || ktap_exit_fail_msg "cannot create dust"
dust=${DMP_NODE#/dev/mapper/}
if ! dmsetup message "$dust" 0 addbadblock 100 >/dev/null ||
	! dmsetup message "$dust" 0 enable >/dev/null; then
	ktap_exit_fail_msg "cannot add a bad block"
fi

if ! hold_the_tag "$nullb"; then
	ktap_test_fail "dust: RWF_NOWAIT write of a bad block: the tag was never held"
else
	err=$(direct_write "$DMP_NODE" 100 --nowait=1)
	echo "# dust: RWF_NOWAIT write of bad block 100 with the tag held: fio error ${err:-none}"
	if [ "$err" = 11 ]; then
		ktap_test_pass "dust: RWF_NOWAIT write of a bad block, no tag below: EAGAIN"
	else
		ktap_test_fail "dust: RWF_NOWAIT write of a bad block, no tag below: not EAGAIN"
	fi
fi
wait "$holder"
if bad_block_listed "$dust" 100; then
	ktap_test_pass "dust: the write that failed with EAGAIN left the block bad"
else
	ktap_test_fail "dust: the write that failed with EAGAIN healed the block"
fi
# Without RWF_NOWAIT the write waits for the tag and heals the block.
err=$(direct_write "$DMP_NODE" 100)
echo "# dust: write of bad block 100 that may wait: fio error ${err:-none}"
if [ "$err" = 0 ] && ! bad_block_listed "$dust" 100; then
	ktap_test_pass "dust: a write that may wait heals the block"
else
	ktap_test_fail "dust: a write that may wait did not heal the block"
fi
ktap_finished
