#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dm-raid (LVM's raid1 and raid10 LVs) polls reads end to end through md's
# read path, and completes writes by interrupt, as md arrays do (raid0
# polls both): healthy, during a resync, with a leg failed under polled
# load, and across suspends.  What was written is read back from each leg
# directly.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup cmp
dmp_require_nullb
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

# leg NAME DEV OFFSET: a 64 MiB dm-linear leg, zeroed where tests write;
# LEG gets its node.
leg()
{
	dmp_dm_create "$1" "0 131072 linear $2 $3" &&
		dd if=/dev/zero of="$DMP_NODE" bs=1M count=16 oflag=direct status=none &&
		LEG=$DMP_NODE
}

# meta NAME OFFSET: a 1 MiB dm-linear metadata device, as LVM gives each
# leg; META gets its node.  On null_blk, whose completions raise no
# interrupt: md writes its superblock and bitmap there at any time.
meta()
{
	dmp_dm_create "$1" "0 2048 linear $mdev $2" && META=$DMP_NODE
}

# wipe_meta: new arrays on the legs, not the last one's superblocks.
wipe_meta()
{
	local m

	for m in "$m0" "$m1" "$m2" "$m3"; do
		dd if=/dev/zero of="$m" bs=1M count=1 oflag=direct status=none || return 1
	done
}

# raid_status NAME FIELD: a field of dm-raid's status line (6 health, 7
# sync ratio, 8 sync action).
raid_status()
{
	dmsetup status "$DMP_PREFIX-$1" | awk -v f="$2" '{ print $f }'
}

# check_legs_equal DESC BYTES LEG...: the first BYTES of every leg, read
# from the legs themselves, are the same, and not the zeros leg() wrote.
check_legs_equal()
{
	local desc=$1 bytes=$2 first=$3 l
	shift 3

	if cmp -s -n "$bytes" "$first" /dev/zero; then
		echo "# $desc: nothing was written to $first"
		ktap_test_fail "$desc: nothing was written to the first leg"
		return
	fi
	for l in "$@"; do
		if ! cmp -s -n "$bytes" "$first" "$l"; then
			echo "# $desc: $first and $l differ"
			ktap_test_fail "$desc: the legs differ"
			return
		fi
	done
	ktap_test_pass "$desc: the legs read back alike"
}

# resync_running NAME: dm-raid NAME is resyncing, not yet in sync.
resync_running()
{
	local action ratio

	action=$(raid_status "$1" 8) ratio=$(raid_status "$1" 7)
	if [ "$action" != resync ] || [ "${ratio%/*}" = "${ratio#*/}" ]; then
		echo "# $1: sync action $action, ratio $ratio"
		return 1
	fi
	sleep 0.3
}

# wait_in_sync NAME: dm-raid NAME has finished its resync (60 s at most).
wait_in_sync()
{
	local i ratio

	for ((i = 0; i < 300; i++)); do
		ratio=$(raid_status "$1" 7)
		[ "$(raid_status "$1" 8)" = idle ] && [ "${ratio%/*}" = "${ratio#*/}" ] &&
			return 0
		sleep 0.2
	done
	echo "# $1: still $(raid_status "$1" 8) at $ratio"
	return 1
}

ktap_print_header
ktap_set_plan 20

if ! { leg l0 "$a" 0 && l0=$LEG && leg l1 "$b" 0 && l1=$LEG &&
	leg l2 "$a" 131072 && l2=$LEG && leg l3 "$b" 131072 && l3=$LEG &&
	dmp_nullb_create md size=8 memory_backed=1 queue_mode=2 poll_queues=1 &&
	mdev=$DMP_NODE && meta m0 0 && m0=$META && meta m1 2048 && m1=$META &&
	meta m2 4096 && m2=$META && meta m3 6144 && m3=$META; }; then
	ktap_exit_fail_msg "cannot create the legs"
fi

dmp_dm_create r1 "0 131072 raid raid1 2 0 nosync 2 - $l0 - $l1" ||
	ktap_exit_fail_msg "cannot create a dm-raid raid1"
dev=$DMP_NODE
dmp_check_io_poll "dm-raid raid1" "$dev" 1
dmp_check_polled_by_irq "dm-raid raid1: writes 512B-1M" "$dev" \
	-m write -s 16M -b 512-1M -q 4 -S 61
dmp_check_polled "dm-raid raid1: reads 512B-1M" "$dev" -m read -s 16M -b 512-1M -q 4 -S 61
dmp_check_polled "dm-raid raid1: reads 4k qd16, from the submitter" "$dev" \
	-m read -s 16M -b 4k -q 16 -S 61 -W
dmp_check_irq "dm-raid raid1: 4k qd8" "$dev" -m read -s 16M -b 4k -q 8 -S 61
check_legs_equal "dm-raid raid1, the 16 MiB written" $((16 << 20)) "$l0" "$l1"
dmp_rings_under_load "dm-raid raid1: suspend and resume" "$dev" 2 5 \
	dmp_after_pause 0.2 dmp_dm_suspend_resume "$DMP_PREFIX-r1"
# LVM suspends without flushing: DM holds the bios meanwhile.
dmp_rings_under_load "dm-raid raid1: suspend --noflush and resume" "$dev" 2 5 \
	dmp_after_pause 0.2 dmp_dm_suspend_resume "$DMP_PREFIX-r1" --noflush
dmp_dm_remove r1

# raid0 (LVM striped raid0): reads and writes polled, each piece DM cuts
# at a chunk polled too
dmp_dm_create r0 "0 262144 raid raid0 1 64 2 - $l0 - $l1" ||
	ktap_exit_fail_msg "cannot create a dm-raid raid0"
dmp_check_polled "dm-raid raid0: writes and reads 512B-1M" "$DMP_NODE" \
	-s 16M -b 512-1M -q 4 -S 65 -W
dmp_dm_remove r0

# raid10, near copies 2 over four legs, with metadata as LVM builds it
# (dm-raid needs it for raid10): each read from one copy
wipe_meta || ktap_exit_fail_msg "cannot wipe the metadata devices"
dmp_dm_create r10 "0 262144 raid raid10 4 64 raid10_copies 2 nosync \
	4 $m0 $l0 $m1 $l1 $m2 $l2 $m3 $l3" ||
	ktap_exit_fail_msg "cannot create a dm-raid raid10"
dev=$DMP_NODE
dmp_check_polled_by_irq "dm-raid raid10: writes 512B-1M" "$dev" \
	-m write -s 16M -b 512-1M -q 4 -S 62
dmp_check_polled "dm-raid raid10: reads 512B-1M" "$dev" -m read -s 16M -b 512-1M -q 4 -S 62
# near 2 over 4 legs: legs 0 and 1 hold the same chunks, as do 2 and 3
check_legs_equal "dm-raid raid10, legs 0 and 1" $((8 << 20)) "$l0" "$l1"
check_legs_equal "dm-raid raid10, legs 2 and 3" $((8 << 20)) "$l2" "$l3"
dmp_dm_remove r10

# A resync under polled load, then a leg failed under it: reads go on from
# the leg left, still polled.  The resync rate is md's, global.
speed=$(cat /proc/sys/dev/raid/speed_limit_max)
dmp_on_exit "echo $speed >/proc/sys/dev/raid/speed_limit_max"
echo 2000 >/proc/sys/dev/raid/speed_limit_max
wipe_meta || ktap_exit_fail_msg "cannot wipe the metadata devices"
dmp_dm_create r1s "0 131072 raid raid1 1 0 2 $m0 $l0 $m1 $l1" ||
	ktap_exit_fail_msg "cannot create a dm-raid raid1 that resyncs"
dev=$DMP_NODE
dmp_rings_under_load "dm-raid raid1 resync" "$dev" 2 5 resync_running r1s
echo "$speed" >/proc/sys/dev/raid/speed_limit_max
wait_in_sync r1s || ktap_exit_fail_msg "the resync did not finish"
check_legs_equal "dm-raid raid1 after its resync" $((64 << 20)) "$l0" "$l1"

fail_leg1()
{
	dmsetup load "$DMP_PREFIX-l1" --table "0 131072 error" &&
		dmsetup resume "$DMP_PREFIX-l1"
}
dmp_rings_under_load "dm-raid raid1: a leg fails" "$dev" 2 1 dmp_after_pause 0.5 fail_leg1
# The load may end before a write reaches the failed leg: one write does,
# and md marks the leg dead from its thread.
dd if=/dev/zero of="$dev" bs=4k count=1 oflag=direct status=none
for ((i = 0; i < 50; i++)); do
	health=$(raid_status r1s 6)
	[ "$health" = AD ] && break
	sleep 0.1
done
echo "# dm-raid raid1: health $health after a leg failed"
if [ "$health" = AD ]; then
	ktap_test_pass "dm-raid raid1: the failed leg is marked dead"
else
	ktap_test_fail "dm-raid raid1: the failed leg is marked dead: health is not AD"
fi
dmp_check_polled_by_irq "degraded dm-raid raid1: writes" "$dev" \
	-m write -s 16M -b 4k-256k -q 4 -S 63
dmp_check_polled "degraded dm-raid raid1: reads" "$dev" -m read -s 16M -b 4k-256k -q 4 -S 63
dmp_dm_remove r1s

# One tag per queue: polled reads that find no tag fail with
# BLK_STS_AGAIN below, which md sends again itself, under DM.
if dmp_nullb_create t0 size=96 memory_backed=1 queue_mode=2 poll_queues=1 \
	submit_queues=1 hw_queue_depth=1 && t0=$DMP_NODE &&
	dmp_nullb_create t1 size=96 memory_backed=1 queue_mode=2 poll_queues=1 \
	submit_queues=1 hw_queue_depth=1 && t1=$DMP_NODE &&
	dmp_dm_create rt "0 131072 raid raid1 2 0 nosync 2 - $t0 - $t1" &&
	"$DMP_VERIFY" -m write -s 8M -b 4k-64k -q 8 -S 64 "$DMP_NODE" >/dev/null; then
	dmp_check_again "dm-raid raid1 over null_blk with one tag: reads qd8" \
		"$t0 $t1" "$DMP_NODE" -m read -s 8M -b 512-64k -q 8 -S 64
else
	ktap_test_fail "dm-raid raid1 over null_blk with one tag: cannot create or write"
fi
ktap_finished
