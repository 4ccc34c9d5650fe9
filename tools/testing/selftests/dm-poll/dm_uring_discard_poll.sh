#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# io_uring's block discard command (BLOCK_URING_CMD_DISCARD) through the
# DM targets that take discards, now that they take REQ_NOWAIT bios, and
# through md raid5.
# io_uring issues the command nonblocking first: the discard bio carries
# REQ_NOWAIT.  linear and striped pass it on; thin, dm-raid and snapshot
# hand it to a worker of theirs without REQ_NOWAIT, and clone to its
# worker unless the regions are hydrated; DM fails it with BLK_STS_AGAIN
# while suspended.  The command sends a discard that ended with -EAGAIN
# again from io-wq, blocking (block/ioctl.c blk_cmd_complete()), as
# io_uring does one that ->uring_cmd fails with -EAGAIN at once (a
# discard of more than one bio): no -EAGAIN may reach
# the application, and every discard reported done must have zeroed its
# range on these null_blk devices (memory backed, discard=1), which thin,
# raid and the snapshot's COW pass it down to or zero.  The second issue
# reads the SQE again: the "SQE reused" runs prepare each discard in the
# SQ entry the one before was just submitted from (an SQ ring of one
# entry), as any application reusing its ring does, and the "by another
# device's" ones send every other discard to another device, whose
# ranges must stay untouched on the device under test.  snapshot-origin
# takes no discards: EOPNOTSUPP, at once.  uring_discard issues the
# discards and checks the ranges (and the gaps between them) afterwards.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup
dmp_require_nullb
DMP_DISCARD=$DMP_DIR/uring_discard
[ -x "$DMP_DISCARD" ] || dmp_skip_all "uring_discard not built"

# count_again_start DEV / count_again_stop DEV: the bios to DEV that ended
# with BLK_STS_AGAIN meanwhile: discards the command sent again.
count_again_start()
{
	local devt

	devt=$(dmp_devt "$1") &&
		dmp_count_start block/block_bio_complete dev "error == -11 && dev == $devt"
}

count_again_stop()
{
	dmp_count_stop block/block_bio_complete dev "error == -11 && dev == $(dmp_devt "$1")"
}

# check_discard DESC DEV UD-ARGS...: uring_discard UD-ARGS DEV succeeds:
# no discard failed, no -EAGAIN reached the ring, the ranges read as
# uring_discard checks.  Reports how many discard bios DEV failed with
# BLK_STS_AGAIN (sent again by the command).  One KTAP result.
check_discard()
{
	local desc=$1 dev=$2 out rc=0 n counting=1
	shift 2

	count_again_start "$dev" || counting=0
	out=$("$DMP_DISCARD" "$@" "$dev") || rc=$?
	n=
	[ "$counting" = 0 ] || n=$(count_again_stop "$dev")
	sed 's/^/# /; s/^# # /# /' <<<"$out"
	echo "# $desc: ${n:-uncounted} discard bios ended with BLK_STS_AGAIN on the device"
	if [ "$rc" = 0 ]; then
		ktap_test_pass "$desc: done, no -EAGAIN, ranges zeroed"
	else
		ktap_test_fail "$desc: failed, -EAGAIN, or ranges not as asked"
	fi
}

# check_suspended DESC NAME DEV UD-ARGS...: discards within 4-5 MiB
# issued inline while DM device NAME is suspended (DM fails a REQ_NOWAIT
# bio with BLK_STS_AGAIN, the command sends it again blocking, DM holds
# it) are still in flight after a second, and done, their ranges zeroed,
# after the resume.  One KTAP result.
check_suspended()
{
	local desc=$1 name=$2 dev=$3 pid rc=0 out=/tmp/dmp-discard.$$
	shift 3

	"$DMP_VERIFY" -I -m write -o 4M -s 1M -b 64k -q 4 -S 77 "$dev" >/dev/null ||
		{ ktap_test_fail "$desc: cannot write the range"; return; }
	if ! dmsetup suspend "$name"; then
		ktap_test_fail "$desc: cannot suspend"
		return
	fi
	"$DMP_DISCARD" -z "$@" "$dev" >"$out" &
	pid=$!
	sleep 1
	if ! kill -0 "$pid" 2>/dev/null; then
		dmsetup resume "$name"
		wait "$pid" || true
		sed 's/^/# /; s/^# # /# /' "$out"
		rm -f "$out"
		ktap_test_fail "$desc: completed while the device was suspended"
		return
	fi
	dmsetup resume "$name" || rc=1
	wait "$pid" || rc=1
	sed 's/^/# /; s/^# # /# /' "$out"
	rm -f "$out"
	if [ "$rc" = 0 ]; then
		ktap_test_pass "$desc: held while suspended, done after resume, zeroed"
	else
		ktap_test_fail "$desc: failed after resume, or ranges not zeroed"
	fi
}

# check_eopnotsupp DESC DEV UD-ARGS...: every discard fails at once with
# EOPNOTSUPP, issued inline, and the data stays.  One KTAP result.
check_eopnotsupp()
{
	local desc=$1 dev=$2 out rc=0
	local none=' done 0 eagain 0 eopnotsupp [1-9][0-9]* other 0 iowq_workers 0$'
	shift 2

	out=$("$DMP_DISCARD" -E 95 -w -z "$@" "$dev") || rc=$?
	sed 's/^/# /; s/^# # /# /' <<<"$out"
	if [ "$rc" = 0 ] && grep -q "$none" <<<"$out"; then
		ktap_test_pass "$desc: EOPNOTSUPP at once, data kept"
	else
		ktap_test_fail "$desc: not EOPNOTSUPP at once, or data changed"
	fi
}

# discard_set DESC DEV UNIT: the four runs every stack gets: discards of
# UNIT bytes (within one chunk, block or region), of 1 MiB (many of them),
# and of UNIT bytes with the SQE reused at once, by the next discard and
# by a discard of another device ($OTHER).
discard_set()
{
	local desc=$1 dev=$2 unit=$3 q

	q=$(dmp_sysfs "$dev")/queue
	echo "# $desc: discard_granularity $(cat "$q/discard_granularity")," \
		"discard_max_bytes $(cat "$q/discard_max_bytes")"
	check_discard "$desc: inline discards of $unit" "$dev" \
		-w -z -o 1M -l "$unit" -t $((2 * unit)) -n 32 -q 8 -S 1
	check_discard "$desc: inline discards of 1 MiB" "$dev" \
		-w -z -o 4M -l 1M -t 2M -n 4 -q 4 -S 2
	check_discard "$desc: inline discards of $unit, SQE reused at once" "$dev" \
		-w -z -o 12M -l "$unit" -t $((2 * unit)) -n 32 -q 8 -s 1 -S 3
	check_discard "$desc: inline discards of $unit, SQE reused by another device's" \
		"$dev" -w -z -o 16M -l "$unit" -t $((2 * unit)) -n 32 -q 8 -s 1 -S 9 -x "$OTHER"
}

ktap_print_header
ktap_set_plan 35

# nullb_set PREFIX N: N null_blk devices of 64 MiB that zero what they
# discard, in NB.
nullb_set()
{
	local i

	NB=()
	for ((i = 0; i < $2; i++)); do
		dmp_nullb_create "$1$i" size=64 memory_backed=1 discard=1 queue_mode=2 ||
			ktap_exit_fail_msg "cannot create null_blk device $1$i"
		NB+=("$DMP_NODE")
	done
}

# cleanup_stack: take down what the test made so far, and make the
# device of discard_set's "another device" again.
NOTHER=0
cleanup_stack()
{
	dmp_cleanup
	nullb_set "x$((NOTHER++))" 1
	OTHER=${NB[0]}
}

cleanup_stack
nullb_set d 2
nb0=${NB[0]} nb1=${NB[1]}

# dm-linear and dm-striped pass the REQ_NOWAIT discard on.
dmp_dm_create linear "0 65536 linear $nb0 0" || ktap_exit_fail_msg "cannot create linear"
discard_set "dm-linear" "$DMP_NODE" 4096
check_suspended "dm-linear: inline discard while suspended" "$DMP_PREFIX-linear" \
	"$DMP_NODE" -o 4M -l 1M
check_suspended "dm-linear: inline discards while suspended, SQE reused at once" \
	"$DMP_PREFIX-linear" "$DMP_NODE" -o 4M -l 64k -t 128k -n 8 -q 8 -s 1
dmp_dm_remove linear
# A discard longer than one bio's limit (4 GiB): the command itself sends
# it from io-wq.
dmp_nullb_create big size=8192 memory_backed=1 discard=1 queue_mode=2 ||
	ktap_exit_fail_msg "cannot create an 8 GiB null_blk device"
dmp_dm_create biglinear "0 16777216 linear $DMP_NODE 0" ||
	ktap_exit_fail_msg "cannot create linear over 8 GiB"
check_discard "dm-linear: one discard of 5 GiB (several bios)" "$DMP_NODE" \
	-w -z -c 1M -o 0 -l 5G -n 1
dmp_dm_remove biglinear

dmp_dm_create striped "0 65536 striped 2 128 $nb0 0 $nb1 0" ||
	ktap_exit_fail_msg "cannot create striped"
discard_set "dm-striped" "$DMP_NODE" 4096
dmp_dm_remove striped

# thin defers discards to the pool's worker without REQ_NOWAIT; 64 KiB
# blocks, passed down to the data device.
dmp_thin_pool_create "$nb1" 0 "$nb0" || ktap_exit_fail_msg "cannot create thin-pool"
pool=$DMP_NODE
if ! dmsetup message "$pool" 0 "create_thin 0" ||
	! dmsetup message "$pool" 0 "create_thin 1"; then
	ktap_exit_fail_msg "cannot create thin devices"
fi
dmp_dm_create thin "0 65536 thin $pool 0" || ktap_exit_fail_msg "cannot create thin"
discard_set "thin" "$DMP_NODE" 65536
# Not on a block boundary: the command's first bio ends at the next one,
# so it takes more than one, and ->uring_cmd returns -EAGAIN at once:
# io_uring sends the discard again from io-wq.  thin discards whole
# blocks only.
check_discard "thin: inline discards off the block boundary (several bios), SQE reused at once" \
	"$DMP_NODE" -w -z -g 64k -o $((20 * 1048576 + 32768)) -l 128k -t 256k -n 8 -q 4 -s 1 -S 4
dmp_dm_create bigthin "0 16777216 thin $pool 1" || ktap_exit_fail_msg "cannot create an 8 GiB thin"
check_discard "thin: one discard of 5 GiB (several bios)" "$DMP_NODE" \
	-w -z -c 1M -o 0 -l 5G -n 1
cleanup_stack

# dm-raid fails REQ_NOWAIT discards with BLK_STS_AGAIN in raid_map().
nullb_set r 3
rb0=${NB[0]} rb1=${NB[1]} rb2=${NB[2]}
dmp_dm_create raid1 "0 65536 raid raid1 2 0 nosync 2 - $rb0 - $rb1" ||
	ktap_exit_fail_msg "cannot create dm-raid raid1"
discard_set "dm-raid raid1" "$DMP_NODE" 4096
check_discard "dm-raid raid1: IOSQE_ASYNC discards of 4 KiB" "$DMP_NODE" \
	-A -w -z -o 20M -l 4k -t 8k -n 32 -q 8 -S 5
check_suspended "dm-raid raid1: inline discard while suspended" "$DMP_PREFIX-raid1" \
	"$DMP_NODE" -o 4M -l 1M
dmp_dm_remove raid1
# raid4/5/6 take discards only with devices_handle_discard_safely; 64 KiB
# chunks, two data legs: full stripes of 128 KiB.
param=/sys/module/dm_raid/parameters/devices_handle_discard_safely
old=$(cat "$param")
echo Y >"$param"
dmp_on_exit "echo $old >$param"
dmp_dm_create raid5 "0 65536 raid raid5_ls 2 128 nosync 3 - $rb0 - $rb1 - $rb2" ||
	ktap_exit_fail_msg "cannot create dm-raid raid5"
check_discard "dm-raid raid5: inline discards of a stripe" "$DMP_NODE" \
	-w -z -o 1M -l 128k -t 256k -n 16 -q 8 -S 6
check_discard "dm-raid raid5: inline discards of a stripe, SQE reused at once" "$DMP_NODE" \
	-w -z -o 12M -l 128k -t 256k -n 16 -q 8 -s 1 -S 7
cleanup_stack

# md raid5 itself, with raid456's devices_handle_discard_safely: it fails
# a REQ_NOWAIT discard with BLK_STS_AGAIN.  It used to leave it unended
# (a WARN, and a command that never completes).
nullb_set m 3
modprobe -q raid456 || true
param=/sys/module/raid456/parameters/devices_handle_discard_safely
old=$(cat "$param")
echo Y >"$param"
dmp_on_exit "echo $old >$param"
dmp_md_create 5 --assume-clean --bitmap=none --chunk=64 -- "${NB[@]}" ||
	ktap_exit_fail_msg "cannot create md raid5"
check_discard "md raid5: inline discards of a stripe" "$DMP_NODE" \
	-w -z -o 1M -l 128k -t 256k -n 16 -q 8 -S 9
cleanup_stack

# snapshot with discard_zeroes_cow, 8 KiB chunks: a discard of a chunk
# the snapshot has zeroes it in the COW (zero_exception()); the writes
# of -w make every chunk the snapshot's.  snapshot-origin: no discards.
nullb_set s 2
sb0=${NB[0]} sb1=${NB[1]}
dmp_dm_create base "0 65536 linear $sb0 0" || ktap_exit_fail_msg "cannot create base"
base=$DMP_NODE
"$DMP_VERIFY" -I -m write -s 32M -b 1M -q 4 -S 78 "$base" >/dev/null ||
	ktap_exit_fail_msg "cannot write the base"
dmp_dm_zeroed cow "$sb1" 0 98304 || ktap_exit_fail_msg "cannot create cow"
dmp_dm_create snap "0 65536 snapshot $base $DMP_NODE N 16 1 discard_zeroes_cow" ||
	ktap_exit_fail_msg "cannot create snapshot"
discard_set "snapshot" "$DMP_NODE" 8192
dmp_dm_create origin "0 65536 snapshot-origin $base" || ktap_exit_fail_msg "cannot create origin"
check_eopnotsupp "snapshot-origin: inline discards" "$DMP_NODE" -o 20M -l 64k -t 128k -n 8 -q 4 -S 8
cleanup_stack

# clone, 4 KiB regions, no background hydration: -w's whole-region writes
# hydrate the regions, whose discards go to the destination.
nullb_set c 2
cb0=${NB[0]} cb1=${NB[1]}
dmp_dm_zeroed cmeta "$cb1" 0 8192 || ktap_exit_fail_msg "cannot create clone metadata"
cmeta=$DMP_NODE
dmp_dm_create csource "0 65536 linear $cb1 16384" || ktap_exit_fail_msg "cannot create clone source"
dmp_dm_create clone "0 65536 clone $cmeta $cb0 $DMP_NODE 8 1 no_hydration" ||
	ktap_exit_fail_msg "cannot create clone"
discard_set "clone" "$DMP_NODE" 4096
ktap_finished
