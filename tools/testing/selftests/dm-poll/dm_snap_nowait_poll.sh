#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# snapshot and snapshot-origin take REQ_NOWAIT bios, so io_uring issues
# reads, and writes to chunks every snapshot has copied, from the
# submitter instead of an io-wq worker (whose ring-lock traffic halved
# polled throughput).  Writes that need a copy fail with BLK_STS_AGAIN
# before anything is sent: DM requeues polled ones, io_uring retries the
# others from io-wq; both are copied as before, and no -EAGAIN reaches the
# caller.  The origin's data is on the second NVMe namespace, the COW
# devices on the first; the interrupts of both are counted.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup dd
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

# check_usage DESC SNAP USAGE: dmsetup status of SNAP reports USAGE
# (sectors of COW allocated / COW size, metadata sectors): as many copies
# as the writes needed, none missed or made twice.
check_usage()
{
	local status
	status=$(dmsetup status "$2" | cut -d' ' -f4-)

	echo "# $1: status '$status', expected '$3'"
	if [ "$status" = "$3" ]; then
		ktap_test_pass "$1: dmsetup status as expected"
	else
		ktap_test_fail "$1: dmsetup status not as expected"
	fi
}

ktap_print_header
ktap_set_plan 19

dmp_dm_create base "0 65536 linear $b 2048" || ktap_exit_fail_msg "cannot create base"
base=$DMP_NODE
"$DMP_VERIFY" -m write -s 8M -b 64k -q 4 -S 201 "$base" >/dev/null ||
	ktap_exit_fail_msg "cannot write the base"
dmp_dm_zeroed cow "$a" 600000 32768 || ktap_exit_fail_msg "cannot create cow"
# 8 KiB chunks.
dmp_dm_create snap "0 65536 snapshot $base $DMP_NODE N 16" ||
	ktap_exit_fail_msg "cannot create snapshot"
snap=$DMP_NODE
dmp_dm_create origin "0 65536 snapshot-origin $base" ||
	ktap_exit_fail_msg "cannot create origin"
origin=$DMP_NODE

dmp_check_polled "origin: reads, issued inline" "$origin" \
	-W -m read -s 8M -b 512-128k -q 8 -S 201
dmp_check_polled "snapshot: reads of unchanged chunks, issued inline" "$snap" \
	-W -m read -s 8M -b 512-128k -q 8 -S 201
# The first write to each chunk copies it to the COW device first.
dmp_check_verified "origin: polled writes that copy, issued inline" "$origin" \
	-W -s 2M -b 4k -q 8 -S 202
dmp_check_iowq "origin: interrupt-driven writes that copy, retried from io-wq" \
	"$origin" -I -o 2M -s 2M -b 4k -q 8 -S 202
dmp_check_polled "snapshot: reads of copied chunks, issued inline" "$snap" \
	-W -m read -s 4M -b 4k-64k -q 8 -S 201
# 4 KiB writes in 8 KiB chunks: none is split.
dmp_check_polled "origin: writes to copied chunks, issued inline" "$origin" \
	-W -s 4M -b 4k -q 8 -S 203
dmp_check_polled "snapshot: the origin's writes left it alone" "$snap" \
	-W -m read -s 4M -b 4k -q 8 -S 201
dmp_check_irq "origin: interrupt driven writes to copied chunks, issued inline" \
	"$origin" -W -s 4M -b 4k -q 8 -S 204
# Writes that cross a chunk are split in ->map, polled or not: DM retries
# a part that fails with BLK_STS_AGAIN itself.
dmp_check_polled "origin: polled writes across chunks, issued inline" "$origin" \
	-W -s 4M -b 4k-64k -q 8 -S 208
dmp_check_irq "origin: writes across chunks, issued inline" \
	"$origin" -W -s 4M -b 4k-64k -q 8 -S 205
# Across chunks that need a copy: the origin fails the first part, and DM
# the whole write, which io_uring retries from io-wq; the rest, sent
# without REQ_NOWAIT, would wait for the copy in the submitter.
dmp_check_iowq "origin: interrupt-driven writes across chunks that copy, retried whole" \
	"$origin" -I -o 6M -s 1M -b 12k-64k -q 8 -S 211
dmp_check_polled "snapshot: writes to copied chunks, issued inline" "$snap" \
	-W -s 4M -b 4k -q 8 -S 206
# Half-chunk writes to the snapshot: the other half, copied from the
# origin, must still hold the origin's data.
for ((i = 0, rc = 0; i < 8; i++)); do
	off=$((4 * 1048576 + i * 8192))
	"$DMP_VERIFY" -W -o "$off" -s 4k -b 4k -q 1 -S 207 "$snap" >/dev/null &&
		"$DMP_VERIFY" -W -m read -o $((off + 4096)) -s 4k -b 4k -q 1 -S 201 \
			"$snap" >/dev/null || rc=1
done
if [ "$rc" = 0 ]; then
	ktap_test_pass "snapshot: polled writes that copy, issued inline, keep the copied half"
else
	ktap_test_fail "snapshot: polled writes that copy failed or lost the copied half"
fi
dmp_check_iowq "snapshot: interrupt-driven writes that copy, retried from io-wq" \
	"$snap" -I -o 5M -s 1M -b 4k -q 8 -S 209
dmp_check_polled "origin: the snapshot's writes left it alone" "$origin" \
	-W -m read -o 4M -s 2M -b 4k -q 8 -S 201

# A second snapshot, with 4 KiB chunks, taken with the origin suspended:
# chunks the first one has copied need a copy again.
name=${origin#/dev/mapper/}
dmsetup suspend "$name" || ktap_exit_fail_msg "cannot suspend the origin"
if ! dmp_dm_zeroed cow2 "$a" 640000 16384 ||
   ! dmp_dm_create snap2 "0 65536 snapshot $base $DMP_NODE N 8"; then
	dmsetup resume "$name"
	ktap_exit_fail_msg "cannot create a second snapshot"
fi
snap2=$DMP_NODE
dmsetup resume "$name" || ktap_exit_fail_msg "cannot resume the origin"
dmp_check_verified "origin: polled writes that copy into the second snapshot, issued inline" \
	"$origin" -W -s 2M -b 4k -q 8 -S 210
dmp_check_polled "second snapshot: holds the origin from when it was taken" "$snap2" \
	-W -m read -s 4M -b 4k-64k -q 8 -S 205
# Copies: 0-4M and 6-7M by the origin's writes, 8 chunks by the
# half-chunk writes, 5-6M by the snapshot's own; the second snapshot
# 0-2M, in 4 KiB chunks.
check_usage "snapshot: one copy per chunk written" "$snap" \
	"$(((512 + 128 + 8 + 128) * 16))/32768 0"
check_usage "second snapshot: one copy per chunk written" "$snap2" "$((512 * 8))/16384 0"
ktap_finished
