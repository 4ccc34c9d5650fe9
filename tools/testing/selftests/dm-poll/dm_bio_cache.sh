#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DM's clones of polled bios come from the per-cpu bio cache from the
# first table of a new device on: the bio slabs see next to no
# allocations per polled I/O.  Linux 6.12 only enabled the cache on a
# table reload.  Needs CONFIG_SLUB_STATS (and best slab_nomerge).
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup
dmp_get_nvme_devs 1
a=${DMP_NVME[0]}
ls /sys/kernel/slab/bio-*/alloc_fastpath >/dev/null 2>&1 ||
	dmp_skip_all "needs CONFIG_SLUB_STATS (/sys/kernel/slab/bio-*/alloc_fastpath)"

# bio_slab_allocs: allocations from every bio slab so far.
bio_slab_allocs()
{
	cat /sys/kernel/slab/bio-*/alloc_fastpath /sys/kernel/slab/bio-*/alloc_slowpath |
		awk '{ sum += $1 } END { print sum + 0 }'
}

# check DESC: polled I/O on DEV with fewer than one bio slab allocation
# per 8 I/Os.
check()
{
	local before allocs ios=4096

	before=$(bio_slab_allocs)
	if ! "$DMP_VERIFY" -s 8M -b 4k -q 8 -S 131 "$dev"; then
		ktap_test_fail "$1: polled I/O failed"
		return
	fi
	allocs=$(($(bio_slab_allocs) - before))
	if [ "$allocs" -lt $((ios / 8)) ]; then
		ktap_test_pass "$1: $allocs bio slab allocations for $ios polled I/Os"
	else
		ktap_test_fail "$1: $allocs bio slab allocations for $ios I/Os: no bio cache"
	fi
}

ktap_print_header
ktap_set_plan 3
dev=$a
check "raw NVMe"
dmp_dm_create cache "0 65536 linear $a 2048" || ktap_exit_fail_msg "cannot create dm-linear"
dev=$DMP_NODE
check "dm-linear, first table"
name=${dev#/dev/mapper/}
if ! dmsetup suspend "$name" || ! dmsetup load "$name" --table "0 65536 linear $a 4096" ||
   ! dmsetup resume "$name"; then
	ktap_exit_fail_msg "cannot reload"
fi
check "dm-linear, reloaded table"
ktap_finished
