#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dm-integrity takes REQ_NOWAIT bios, so io_uring issues I/O to it from
# the submitter instead of an io-wq worker (whose ring-lock traffic made
# polled I/O slower than interrupt-driven I/O).  Its map does not sleep:
# what would wait goes to its workers.  What it sends below goes without
# REQ_NOWAIT, by interrupt.  Journal, bitmap and direct modes with an
# internal crc32c hash, as integritysetup formats them.  The data is also
# read back through a new table, after the old one wrote its journal out:
# from the disk, each block checked against its hash.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup dd
dmp_get_nvme_devs 1
a=${DMP_NVME[0]}

# integ_create NAME DEV ARGS...: dm-integrity over DEV, formatted: created
# over one sector to learn the sectors it provides, then loaded with that
# size; set DMP_NODE and INTEG_TABLE.
integ_create()
{
	local name=$1 dev=$2 sectors
	shift 2

	dd if=/dev/zero of="$dev" bs=1M count=1 oflag=direct status=none || return 1
	dmp_dm_create "$name" "0 1 integrity $dev 0 $*" || return 1
	sectors=$(dmsetup status "$DMP_PREFIX-$name" | awk '{ print $5 }')
	[ "${sectors:-0}" -gt 65536 ] ||
		{ echo "# dm-integrity provides ${sectors:-no} sectors"; return 1; }
	INTEG_TABLE="0 $sectors integrity $dev 0 $*"
	dmsetup reload "$DMP_PREFIX-$name" --table "$INTEG_TABLE" &&
		dmsetup resume "$DMP_PREFIX-$name"
}

# reread NAME DESC SEED: the data written with SEED (the first 16 MiB),
# read through a new table of NAME (the old one is gone, its journal
# written out), by interrupt.  The teardown entry of NAME stays.
reread()
{
	local name=$DMP_PREFIX-$1 desc=$2 seed=$3

	if ! dmsetup remove --retry "$name" ||
	   ! dmsetup create "$name" --noudevsync --table "$INTEG_TABLE" ||
	   ! dmsetup mknodes "$name"; then
		ktap_exit_fail_msg "$desc: cannot load the table again"
	fi
	if "$DMP_VERIFY" -L "$DMP_MAX_LAT_MS" -I -m read -s 16M -b 64k -q 4 -S "$seed" \
		"/dev/mapper/$name"; then
		ktap_test_pass "$desc: a new table reads the data back from the disk"
	else
		ktap_test_fail "$desc: a new table does not read the data back"
	fi
}

ktap_print_header
ktap_set_plan 11
dmp_dm_create slice "0 262144 linear $a 1200000" || ktap_exit_fail_msg "cannot create a slice of $a"
slice=$DMP_NODE
DMP_IRQ_RE_OVERRIDE=$(dmp_irq_regex "$a")
# A seed of this run's: the data and tags an earlier run left on the
# disk cannot pass for it.
seed=$((RANDOM * 16 + 1))
# 16 MiB: one interleave area (interleave_sectors 32768), which DM does not
# split a bio across; one across two would fail with BLK_STS_AGAIN and
# go to io-wq (DM splits it before sending any part).
for mode in J B D; do
	integ_create "integ$mode" "$slice" 4 "$mode" 1 internal_hash:crc32c ||
		ktap_exit_fail_msg "cannot create dm-integrity in mode $mode"
	dmp_check_polled_by_irq "integrity $mode: polled, issued inline" "$DMP_NODE" \
		-W -s 16M -b 512-64k -q 8 -S "$seed"
	reread "integ$mode" "integrity $mode: polled" "$seed"
	dmp_check_irq "integrity $mode: issued inline" "/dev/mapper/$DMP_PREFIX-integ$mode" \
		-W -s 16M -b 4k -q 8 -S "$((seed + 1))"
	if [ "$mode" = J ]; then
		# O_DSYNC writes are REQ_FUA: journal commits, sent by the
		# commit worker, complete them.
		dmp_check_polled_by_irq "integrity J: polled O_DSYNC writes, issued inline" \
			"/dev/mapper/$DMP_PREFIX-integJ" -D -W -s 4M -b 4k-64k -q 8 \
			-S "$((seed + 2))"
	fi
	dmp_dm_remove "integ$mode" || ktap_exit_fail_msg "cannot remove dm-integrity in mode $mode"
	seed=$((seed + 3))
done

# A device of one tag: the bios sent below wait for it.  With REQ_NOWAIT
# they would fail with BLK_STS_AGAIN after the map had returned, from a
# worker: the caller would get -EAGAIN, and the tags of a write would be
# stored without its data.
if ! dmp_have_nullb; then
	ktap_test_skip "integrity D over a device of one tag: null_blk cannot be configured"
else
	dmp_nullb_create onetag size=64 memory_backed=1 queue_mode=2 hw_queue_depth=1 \
		submit_queues=1 poll_queues=1 ||
		ktap_exit_fail_msg "cannot create a null_blk of one tag"
	integ_create integ1 "$DMP_NODE" 4 D 1 internal_hash:crc32c ||
		ktap_exit_fail_msg "cannot create dm-integrity over one tag"
	dmp_check_verified "integrity D over a device of one tag: polled, issued inline" \
		"$DMP_NODE" -W -s 16M -b 512-64k -q 8 -S "$seed"
fi

ktap_finished
