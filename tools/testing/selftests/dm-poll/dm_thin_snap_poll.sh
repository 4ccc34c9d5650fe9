#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# thin and snapshot keep polled I/O polled on their data paths: bios to
# provisioned thin blocks, bios that a thin pool's worker sends once a
# block is provisioned, and reads through snapshot-origin and of a
# snapshot's unchanged chunks.  Their metadata and copies go to the first
# NVMe namespace; the interrupts of the second one, which holds the data,
# are counted.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup dd
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}
# Only the data device's interrupts count.
DMP_IRQ_RE_OVERRIDE=$(dmp_irq_regex "$b")

ktap_print_header
ktap_set_plan 7

dmp_thin_pool_create "$a" 500000 "$b" || ktap_exit_fail_msg "cannot create thin-pool"
pool=$DMP_NODE
dmsetup message "$pool" 0 "create_thin 0" || ktap_exit_fail_msg "cannot create thin 0"
dmp_dm_create thin "0 65536 thin $pool 0" || ktap_exit_fail_msg "cannot create thin"
thin=$DMP_NODE
# Provisioning changes the pool's metadata, which it commits within a
# second, flushing the data device by interrupt: a run that lasts longer
# (a slow or debug kernel) sees that flush, so interrupts are not counted
# here.  Let the commit pass before counting.
dmp_check_verified "thin: first writes provision blocks, then read back" \
	"$thin" -s 8M -b 512-128k -q 4 -S 111
sleep 2
dmp_check_polled "thin: provisioned blocks, 4k qd8" "$thin" -s 8M -b 4k -q 8 -S 112
dmp_check_irq "thin: provisioned blocks, interrupt driven" "$thin" -s 8M -b 4k -q 8 -S 114

dmp_cleanup

dmp_dm_create base "0 65536 linear $b 2048" || ktap_exit_fail_msg "cannot create base"
base=$DMP_NODE
"$DMP_VERIFY" -m write -s 8M -b 64k -q 4 -S 113 "$base" >/dev/null ||
	ktap_exit_fail_msg "cannot write the base"
dmp_dm_create cow "0 32768 linear $a 600000" || ktap_exit_fail_msg "cannot create cow"
cow=$DMP_NODE
dd if=/dev/zero of="$cow" bs=1M count=1 oflag=direct status=none
dmp_dm_create snap "0 65536 snapshot $base $cow N 16" || ktap_exit_fail_msg "cannot create snapshot"
snap=$DMP_NODE
dmp_dm_create origin "0 65536 snapshot-origin $base" || ktap_exit_fail_msg "cannot create origin"
origin=$DMP_NODE
dmp_check_polled "snapshot-origin: reads" "$origin" -m read -s 8M -b 512-128k -q 4 -S 113
dmp_check_polled "snapshot: reads of unchanged chunks" "$snap" -m read -s 8M -b 512-128k -q 4 -S 113
# Writes to the origin copy chunks to the COW device first (by interrupt);
# the snapshot must still read the old data.
if "$DMP_VERIFY" -L "$DMP_MAX_LAT_MS" -s 1M -b 4k-64k -q 4 -S 114 "$origin" &&
   "$DMP_VERIFY" -L "$DMP_MAX_LAT_MS" -m read -s 1M -b 4k -q 4 -S 113 "$snap"; then
	ktap_test_pass "snapshot: polled writes to the origin copy on write"
else
	ktap_test_fail "snapshot: polled writes to the origin broke the snapshot"
fi
dmp_check_io_poll "snapshot" "$snap" 1
ktap_finished
