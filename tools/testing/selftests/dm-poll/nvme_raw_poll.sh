#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Polled I/O on a raw NVMe namespace: the reference every stacked test is
# held to.  Completions must be reaped by polling (no NVMe interrupt while
# the polled run lasts) and the same I/O interrupt driven must interrupt.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds awk
dmp_get_nvme_devs 1
dev=${DMP_NVME[0]}

ktap_print_header
ktap_set_plan 5
dmp_check_io_poll "$dev" "$dev" 1
dmp_check_polled "$dev 4k qd8" "$dev" -s 8M -b 4k -q 8 -S 11
dmp_check_polled "$dev 512B-128k random sizes" "$dev" -s 8M -b 512-128k -q 4 -S 12
dmp_check_polled "$dev 64k registered buffers" "$dev" -s 8M -b 64k -q 4 -F -S 13
dmp_check_irq "$dev 4k qd8" "$dev" -s 8M -b 4k -q 8 -S 14
ktap_finished
