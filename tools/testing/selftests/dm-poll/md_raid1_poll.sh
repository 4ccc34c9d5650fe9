#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# md raid1 reads poll end to end, from one mirror; writes go to every
# mirror, through plugging, the bitmap and write-behind, and complete by
# interrupt without waiting on a poll queue.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds mdadm
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

ktap_print_header
ktap_set_plan 11
dmp_md_create 1 --assume-clean --size=65536 -- "$a" "$b" ||
	ktap_exit_fail_msg "cannot create md raid1"
dev=$DMP_NODE
dmp_check_io_poll "md raid1" "$dev" 1
dmp_check_polled_by_irq "md raid1 writes 512B-1M" "$dev" -m write -s 16M -b 512-1M -q 4 -S 51
dmp_check_polled "md raid1 reads 512B-512k" "$dev" -m read -s 16M -b 512-512k -q 4 -S 51
dmp_check_polled "md raid1 reads 4k qd16" "$dev" -m read -s 16M -b 4k -q 16 -S 51
dmp_check_irq "md raid1 4k qd8" "$dev" -s 16M -b 4k -q 8 -S 52
dmp_check_mirrors "md raid1, the 16 MiB written" "$dev" 32768
# The check's own control: 4 KiB written to one leg only must be found.
sys=$(dmp_sysfs "$dev")/md
offset=$(cat "$sys/dev-${b##*/}/offset")
if dd if=/dev/urandom of="$b" bs=512 count=8 seek=$((offset + 2048)) oflag=direct \
	conv=notrunc status=none && echo 0 >"$sys/sync_min" && echo 32768 >"$sys/sync_max" &&
	echo check >"$sys/sync_action" && dmp_md_wait_checked "$dev" 32768 &&
	[ "$(cat "$sys/mismatch_cnt")" -gt 0 ]; then
	ktap_test_pass "md raid1: md check finds a write that reached one leg only"
else
	ktap_test_fail "md raid1: md check missed a write that reached one leg only"
	echo "# mismatch_cnt $(cat "$sys/mismatch_cnt")"
fi
echo max >"$sys/sync_max"
dmp_cleanup

# Internal bitmap, write-behind to a write-mostly mirror: reads come from
# the other one.
dmp_md_create 1 --assume-clean --size=65536 --bitmap=internal --write-behind=256 \
	-- "$a" --write-mostly "$b" || ktap_exit_fail_msg "cannot create md raid1 with write-behind"
dev=$DMP_NODE
dmp_check_polled_by_irq "md raid1, bitmap and write-behind: writes" "$dev" \
	-m write -s 16M -b 4k-256k -q 8 -S 53
dmp_check_polled "md raid1, bitmap and write-behind: reads" "$dev" \
	-m read -s 16M -b 4k-256k -q 8 -S 53
dmp_check_polled_by_irq "md raid1, bitmap and write-behind: writes and reads" "$dev" \
	-s 16M -b 512-64k -q 8 -S 54
dmp_cleanup

# One tag per queue: polled reads that find no tag fail with
# BLK_STS_AGAIN, which md must send again itself; the submitter must not
# wait for a tag its own polled reads hold.
if ! dmp_have_nullb; then
	ktap_test_skip "md raid1 over null_blk with one tag: no null_blk"
elif dmp_nullb_create t0 size=96 memory_backed=1 queue_mode=2 poll_queues=1 \
	submit_queues=1 hw_queue_depth=1 && t0=$DMP_NODE &&
	dmp_nullb_create t1 size=96 memory_backed=1 queue_mode=2 poll_queues=1 \
	submit_queues=1 hw_queue_depth=1 && t1=$DMP_NODE &&
	dmp_md_create 1 --assume-clean --size=65536 -- "$t0" "$t1" &&
	"$DMP_VERIFY" -m write -s 8M -b 4k-64k -q 8 -S 55 "$DMP_NODE" >/dev/null; then
	dmp_check_again "md raid1 over null_blk with one tag: reads qd8" \
		"$t0 $t1" "$DMP_NODE" -m read -s 8M -b 512-64k -q 8 -S 55
else
	ktap_test_fail "md raid1 over null_blk with one tag: cannot create or write"
fi
ktap_finished
