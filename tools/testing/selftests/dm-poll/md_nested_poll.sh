#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# md over dm and dm over md stay polled end to end: the lower driver links
# its bios to the upper driver's clone, which the upper driver polls.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds mdadm dmsetup
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

ktap_print_header
ktap_set_plan 6
dmp_dm_create la "0 262144 linear $a 0" || ktap_exit_fail_msg "cannot create dm-linear"
la=$DMP_NODE
dmp_dm_create lb "0 262144 linear $b 0" || ktap_exit_fail_msg "cannot create dm-linear"
dmp_md_create 0 --chunk=16 -- "$la" "$DMP_NODE" || ktap_exit_fail_msg "cannot create md raid0"
md=$DMP_NODE
dmp_check_polled "md raid0 over dm-linear: 16k" "$md" -s 16M -b 16k -q 4 -S 81
dmp_check_irq "md raid0 over dm-linear: interrupt driven" "$md" -s 4M -b 16k -q 4 -S 84

sectors=$(dmp_sectors "$md")
dmp_dm_create over-md "0 $((sectors - 2048)) linear $md 2048" ||
	ktap_exit_fail_msg "cannot create dm-linear over md"
# DM cuts its polled clones to the array's max_sectors, a chunk: the
# dm-linear offset of 1 MiB keeps them chunk aligned.
dmp_check_polled "dm-linear over md raid0 over dm-linear: 256k, cut into chunks" \
	"$DMP_NODE" -s 16M -b 256k -q 4 -S 82
dmp_cleanup

dmp_md_create 1 --assume-clean --size=65536 -- "$a" "$b" ||
	ktap_exit_fail_msg "cannot create md raid1"
md=$DMP_NODE
dmp_dm_create striped-md "0 131072 striped 2 8 $md 0 $md 65536" ||
	ktap_exit_fail_msg "cannot create dm-striped over md raid1"
dev=$DMP_NODE
dmp_check_polled_by_irq "dm-striped over md raid1: writes" "$dev" \
	-m write -s 16M -b 4k-256k -q 4 -S 83
dmp_check_polled "dm-striped over md raid1: reads" "$dev" -m read -s 16M -b 4k-256k -q 4 -S 83
dmp_check_polled "dm-striped over md raid1: 4k reads qd16" "$dev" -m read -s 16M -b 4k -q 16 -S 83
ktap_finished
