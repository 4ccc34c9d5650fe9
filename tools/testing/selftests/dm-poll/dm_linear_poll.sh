#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dm-linear over one NVMe namespace stays polled end to end: the polled
# original is completed by polling the clone DM sent to the NVMe poll queue.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup
dmp_get_nvme_devs 1
nvme=${DMP_NVME[0]}

ktap_print_header
ktap_set_plan 5
# Skip the first MiB so that an offset bug cannot hide behind offset 0.
dmp_dm_create linear "0 65536 linear $nvme 2048" || ktap_exit_fail_msg "cannot create dm-linear"
dev=$DMP_NODE
dmp_check_io_poll "dm-linear" "$dev" 1
dmp_check_polled "dm-linear 4k qd8" "$dev" -b 4k -q 8 -S 21
dmp_check_polled "dm-linear 512B-128k random sizes" "$dev" -b 512-128k -q 4 -S 22
dmp_check_below "dm-linear 512B-128k random sizes" "$nvme" 2048 22 32M
dmp_check_irq "dm-linear 4k qd8" "$dev" -b 4k -q 8 -S 23
ktap_finished
