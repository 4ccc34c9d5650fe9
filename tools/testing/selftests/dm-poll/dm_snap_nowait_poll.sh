#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# snapshot and snapshot-origin take REQ_NOWAIT bios, so io_uring issues
# reads, and writes to chunks every snapshot has copied, from the
# submitter instead of an io-wq worker (whose ring-lock traffic halved
# polled throughput).  Writes that need a copy, and origin writes that
# cross a chunk, fail with BLK_STS_AGAIN before anything is sent: DM
# requeues polled ones, io_uring retries the others from io-wq; both are
# copied as before, and no -EAGAIN reaches the caller.
# The origin's data is on the second NVMe namespace, the COW device on the
# first; the interrupts of both are counted.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup dd
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

ktap_print_header
ktap_set_plan 15

dmp_dm_create base "0 65536 linear $b 2048" || ktap_exit_fail_msg "cannot create base"
base=$DMP_NODE
"$DMP_VERIFY" -m write -s 8M -b 64k -q 4 -S 201 "$base" >/dev/null ||
	ktap_exit_fail_msg "cannot write the base"
dmp_dm_create cow "0 32768 linear $a 600000" || ktap_exit_fail_msg "cannot create cow"
cow=$DMP_NODE
dd if=/dev/zero of="$cow" bs=1M count=1 oflag=direct status=none
# 8 KiB chunks.
dmp_dm_create snap "0 65536 snapshot $base $cow N 16" ||
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
dmp_check_verified "origin: polled writes that copy" "$origin" \
	-s 2M -b 4k -q 8 -S 202
dmp_check_iowq "origin: interrupt-driven writes that copy, retried from io-wq" \
	"$origin" -I -o 2M -s 2M -b 4k -q 8 -S 202
dmp_check_polled "snapshot: reads of copied chunks, issued inline" "$snap" \
	-W -m read -s 4M -b 4k-64k -q 8 -S 201
# 4 KiB writes in 8 KiB chunks: none is split.
dmp_check_polled "origin: writes to copied chunks, issued inline" "$origin" \
	-W -s 4M -b 4k -q 8 -S 203
dmp_check_polled "origin: the writes reached the device below" "$base" \
	-m read -s 4M -b 64k -q 4 -S 203
dmp_check_irq "origin: interrupt driven writes to copied chunks, issued inline" \
	"$origin" -W -s 4M -b 4k -q 8 -S 204
# Writes that cross a chunk would be split: retried whole.
dmp_check_verified "origin: polled writes across chunks" "$origin" \
	-s 4M -b 4k-64k -q 8 -S 208
dmp_check_iowq "origin: interrupt-driven writes across chunks, retried from io-wq" \
	"$origin" -I -s 4M -b 4k-64k -q 8 -S 205
dmp_check_polled "snapshot: writes to copied chunks, issued inline" "$snap" \
	-W -s 4M -b 4k -q 8 -S 206
dmp_check_verified "snapshot: polled writes that copy" "$snap" \
	-o 4M -s 1M -b 4k -q 8 -S 207
dmp_check_iowq "snapshot: interrupt-driven writes that copy, retried from io-wq" \
	"$snap" -I -o 5M -s 1M -b 4k -q 8 -S 209
dmp_check_polled "origin: the snapshot's writes left it alone" "$origin" \
	-W -m read -s 4M -b 4k-64k -q 8 -S 205

status=$(dmsetup status "$snap")
if [ "$(awk '{print $4}' <<<"$status")" = Invalid ]; then
	ktap_test_fail "snapshot: invalidated: $status"
else
	ktap_test_pass "snapshot: valid after the runs: $status"
fi
ktap_finished
