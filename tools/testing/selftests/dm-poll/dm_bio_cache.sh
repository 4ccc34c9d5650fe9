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
dmp_require_slub_stats

ktap_print_header
ktap_set_plan 3
dmp_check_bio_cache "raw NVMe" "$a"
dmp_dm_create cache "0 65536 linear $a 2048" || ktap_exit_fail_msg "cannot create dm-linear"
dev=$DMP_NODE
dmp_check_bio_cache "dm-linear, first table" "$dev"
name=${dev#/dev/mapper/}
if ! dmsetup suspend "$name" || ! dmsetup load "$name" --table "0 65536 linear $a 4096" ||
   ! dmsetup resume "$name"; then
	ktap_exit_fail_msg "cannot reload"
fi
dmp_check_bio_cache "dm-linear, reloaded table" "$dev"
ktap_finished
