#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# thin with an external origin that cannot poll (null_blk without poll
# queues) on a pool over NVMe: the thin device polls (its iterate_devices
# reports only the pool), so reads of unprovisioned blocks, which thin
# remaps to the origin, are polled bios bound for a device that cannot
# poll.  They must complete by interrupt with the origin's data, not fail
# with EOPNOTSUPP as they did when thin passed polled clones down as they
# were.  The origin's data is written to null_blk directly and read back
# through thin; writes provision blocks, the rest still reads the origin.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup dd
dmp_require_nullb
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

ktap_print_header
ktap_set_plan 5
dmp_nullb_create origin size=64 memory_backed=1 queue_mode=2 poll_queues=0 \
	submit_queues=1 || ktap_exit_fail_msg "cannot create null_blk without poll queues"
origin=$DMP_NODE
"$DMP_VERIFY" -I -m write -s 16M -b 64k -q 4 -S 91 "$origin" ||
	ktap_exit_fail_msg "cannot write the origin's pattern"
dmp_thin_pool_create "$a" 500000 "$b" || ktap_exit_fail_msg "cannot create thin-pool"
pool=$DMP_NODE
dmsetup message "$pool" 0 "create_thin 0" || ktap_exit_fail_msg "cannot create thin 0"
dmp_dm_create thin "0 32768 thin $pool 0 $origin" ||
	ktap_exit_fail_msg "cannot create thin with external origin $origin"
thin=$DMP_NODE
dmp_check_io_poll "thin with an external origin that cannot poll" "$thin" 1
dmp_check_verified "thin: polled reads of unprovisioned blocks, from the origin" \
	"$thin" -m read -s 16M -b 4k-64k -q 8 -S 91
dmp_check_verified "thin: polled writes provision blocks, read back" \
	"$thin" -s 8M -b 4k-64k -q 8 -S 92
dmp_check_verified "thin: provisioned blocks keep the writes" \
	"$thin" -m read -s 8M -b 64k -q 8 -S 92
dmp_check_verified "thin: unprovisioned blocks still read the origin" \
	"$thin" -m read -o 8M -s 8M -b 4k-64k -q 8 -S 91
ktap_finished
