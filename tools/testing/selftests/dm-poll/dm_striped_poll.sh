#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dm-striped over two NVMe namespaces with bios that each fit in one stripe
# chunk, so DM maps every bio to exactly one clone: polled end to end.
. "$(dirname "$0")/lib.sh"

CHUNK_SECTORS=128	# 64 KiB

dmp_require_root
dmp_require_cmds dmsetup
dmp_get_nvme_devs 2

ktap_print_header
ktap_set_plan 5
dmp_dm_create striped "0 65536 striped 2 $CHUNK_SECTORS ${DMP_NVME[0]} 2048 ${DMP_NVME[1]} 2048" ||
	ktap_exit_fail_msg "cannot create dm-striped"
dev=$DMP_NODE
dmp_check_io_poll "dm-striped" "$dev" 1
dmp_check_polled "dm-striped 4k qd8" "$dev" -b 4k -q 8 -S 31
dmp_check_polled "dm-striped 16k qd4" "$dev" -b 16k -q 4 -S 32
dmp_check_polled "dm-striped 64k (one chunk) qd4" "$dev" -b 64k -q 4 -S 33
dmp_check_irq "dm-striped 4k qd8" "$dev" -b 4k -q 8 -S 34
ktap_finished
