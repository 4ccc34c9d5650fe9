#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# era and clone keep polled I/O polled on their data device: era's
# writes wait in its worker until the block is marked in the current era
# and are then sent polled; clone's writes of whole regions hydrate them
# without a copy, and I/O to hydrated regions goes straight to the
# destination.  Both take REQ_NOWAIT bios: io_uring issues them from the
# submitter; clone's writes to regions not hydrated fail with
# BLK_STS_AGAIN first, to be retried.  Metadata, and clone's source, live
# on the first NVMe namespace; the interrupts of the second one, the data
# device, count.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup dd
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}
DMP_IRQ_RE_OVERRIDE=$(dmp_irq_regex "$b")

ktap_print_header
ktap_set_plan 7
dmp_dm_zeroed emeta "$a" 700000 8192 || ktap_exit_fail_msg "cannot create era metadata"
dmp_dm_create era "0 65536 era $DMP_NODE $b 128" || ktap_exit_fail_msg "cannot create era"
dmp_check_polled "era: writes, then reads, issued inline" "$DMP_NODE" \
	-W -s 8M -b 512-128k -q 4 -S 151
dmp_check_irq "era: interrupt driven" "$DMP_NODE" -s 8M -b 4k-64k -q 4 -S 154
dmp_check_io_poll "era" "$DMP_NODE" 1
dmp_cleanup

dmp_dm_zeroed cmeta "$a" 710000 8192 || ktap_exit_fail_msg "cannot create clone metadata"
cmeta=$DMP_NODE
dmp_dm_create csource "0 65536 linear $a 720000" || ktap_exit_fail_msg "cannot create clone source"
csource=$DMP_NODE
dmp_dm_create clone "0 65536 clone $cmeta $b $csource 8 1 no_hydration" ||
	ktap_exit_fail_msg "cannot create clone"
# Whole-region writes hydrate regions without a copy; clone then commits
# its metadata, flushing the destination by interrupt.  Let that pass,
# then count: I/O to hydrated regions goes straight to the destination.
"$DMP_VERIFY" -m write -L "$DMP_MAX_LAT_MS" -s 8M -b 4k -q 8 -S 152 "$DMP_NODE" ||
	ktap_exit_fail_msg "clone: writes failed"
sleep 2
dmp_check_polled "clone: hydrated regions, issued inline" "$DMP_NODE" \
	-W -s 8M -b 4k-64k -q 8 -S 153
# Hydrating may wait for memory: DM requeues polled writes to regions not
# hydrated, io_uring retries the others from io-wq.
dmp_check_verified "clone: polled writes that hydrate" "$DMP_NODE" \
	-o 16M -s 2M -b 4k -q 8 -S 155
dmp_check_iowq "clone: interrupt-driven writes that hydrate, retried from io-wq" \
	"$DMP_NODE" -I -o 24M -s 2M -b 4k -q 8 -S 156
dmp_check_io_poll "clone" "$DMP_NODE" 1
ktap_finished
