#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest stacks that more than one guest job builds the same way, sourced
# after the dm-poll kselftests' lib.sh (/jobs/stacks.sh in the guest).

# integrity_create WHO: dm-integrity (journal, crc32c tags, 64 KiB
# interleave areas) over a memory-backed null_blk, formatted, its first
# 64 MiB written (a read of a block never written fails its checksum);
# set DMP_NODE.  Complaints go out as "# WHO: ...".
integrity_create()
{
	local who=$1 dev iargs="4 J 2 internal_hash:crc32c interleave_sectors:128" sectors

	dmp_nullb_create nr-integ size=256 queue_mode=2 submit_queues=1 irqmode=0 \
		memory_backed=1 blocksize=512 hw_queue_depth=256 max_sectors=1024 ||
		{ echo "# $who: cannot create null_blk nr-integ"; return 1; }
	dev=$DMP_NODE
	dd if=/dev/zero of="$dev" bs=1M count=1 oflag=direct status=none
	dmp_dm_create nr-integ "0 1 integrity $dev 0 $iargs" || return 1
	sectors=$(dmsetup status "$DMP_PREFIX-nr-integ" | awk '{ print $5 }')
	[ "${sectors:-0}" -ge 131072 ] ||
		{ echo "# $who: dm-integrity provides ${sectors:-no} sectors"; return 1; }
	dmsetup reload "$DMP_PREFIX-nr-integ" --table "0 $sectors integrity $dev 0 $iargs" &&
		dmsetup resume "$DMP_PREFIX-nr-integ" || return 1
	dd if=/dev/zero of="$DMP_NODE" bs=1M count=64 oflag=direct status=none
}
