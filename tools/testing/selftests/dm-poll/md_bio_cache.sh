#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# md's clones of polled bios, md_account_bio()'s and raid1's and raid10's
# reads, come from the per-cpu bio cache: the bio slabs see next to no
# allocations per polled I/O.  Needs CONFIG_SLUB_STATS (and best
# slab_nomerge).
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds mdadm
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}
dmp_require_slub_stats

ktap_print_header
ktap_set_plan 4
dmp_md_create 0 --chunk=64 -- "$a" "$b" || ktap_exit_fail_msg "cannot create md raid0"
dmp_check_bio_cache "md raid0" "$DMP_NODE"
dmp_cleanup
dmp_md_create linear -- "$a" "$b" || ktap_exit_fail_msg "cannot create md linear"
dmp_check_bio_cache "md linear" "$DMP_NODE"
dmp_cleanup
# Reads only: mirrored writes are not polled.
for level in 1 10; do
	dmp_md_create "$level" --assume-clean --size=65536 -- "$a" "$b" ||
		ktap_exit_fail_msg "cannot create md raid$level"
	"$DMP_VERIFY" -m write -s 8M -b 64k -q 8 -S 131 "$DMP_NODE" >/dev/null ||
		ktap_exit_fail_msg "cannot write md raid$level"
	dmp_check_bio_cache "md raid$level reads" "$DMP_NODE" -m read
	dmp_cleanup
done
ktap_finished
