#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dm over dm over dm, with splits at every level: the poll list of each
# level hangs off the clone the level above sent, and polling the top bio
# polls them all.  Linux 6.12 oopses in dm_submit_bio() here.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

ktap_print_header
ktap_set_plan 5
dmp_dm_create stripe8 "0 131072 striped 2 16 $a 2048 $b 2048" ||
	ktap_exit_fail_msg "cannot create dm-striped"
striped=$DMP_NODE
dmp_dm_create over "0 65536 linear $striped 1024" || ktap_exit_fail_msg "cannot create dm-linear"
dmp_check_polled "dm-linear over dm-striped (8k chunks), 512B-512k" \
	"$DMP_NODE" -s 16M -b 512-512k -q 4 -S 81
dmp_check_irq "dm-linear over dm-striped: interrupt driven" \
	"$DMP_NODE" -s 4M -b 4k-64k -q 4 -S 84

dmp_dm_create la "0 65536 linear $a 300000" || ktap_exit_fail_msg "cannot create dm-linear"
la=$DMP_NODE
dmp_dm_create lb "0 65536 linear $b 300000" || ktap_exit_fail_msg "cannot create dm-linear"
lb=$DMP_NODE
dmp_dm_create stripe_over "0 131072 striped 2 64 $la 0 $lb 0" ||
	ktap_exit_fail_msg "cannot create dm-striped over dm-linear"
top=$DMP_NODE
dmp_check_polled "dm-striped (32k chunks) over two dm-linear, 512B-1M" \
	"$top" -s 16M -b 512-1M -q 4 -S 82

dmp_dm_create three "0 16384 linear $top 0
16384 16384 linear $top 65536" || ktap_exit_fail_msg "cannot create the third level"
dmp_check_polled "two dm-linear over dm-striped over dm-linear, 512B-1M" \
	"$DMP_NODE" -b 512-1M -q 4 -S 83
dmp_check_io_poll "three levels of dm over NVMe" "$DMP_NODE" 1
ktap_finished
