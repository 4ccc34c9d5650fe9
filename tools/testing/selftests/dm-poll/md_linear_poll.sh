#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# md linear over two NVMe namespaces polls end to end, bios across the
# boundary between the members too: md splits io_uring's REQ_NOWAIT bio
# in its submitter (-W: no I/O goes to an io-wq worker) and polls both
# parts through the bio io_uring polls.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds mdadm
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

ktap_print_header
ktap_set_plan 6
dmp_md_create linear -- "$a" "$b" || ktap_exit_fail_msg "cannot create md linear"
dev=$DMP_NODE
dmp_check_io_poll "md linear" "$dev" 1
dmp_check_polled "md linear 4k qd8" "$dev" -s 16M -b 4k -q 8 -S 31
# The first member's data ends where md maps the second one's.
first=$(($(cat "$(dmp_sysfs "$dev")/md/dev-${a##*/}/size") * 1024))
# One write and one read of 8k across the boundary: two parts each.
dmp_check_polled_parts "md linear 8k across the members" "$dev" 4 \
	-o $((first - 4096)) -s 8k -b 8k -q 1 -S 35 -W
dmp_check_polled "md linear 512B-512k across the members" "$dev" \
	-o $((first - (4 << 20))) -s 8M -b 512-512k -q 4 -S 32 -W
# Past the members' transfer size the block layer splits the bio for md,
# which polls the parts (BLK_FEAT_POLL_SPLIT).
dmp_check_polled "md linear 1M, past the members' transfer size" "$dev" \
	-s 16M -b 1M -q 2 -S 33 -W
dmp_check_irq "md linear 4k qd8" "$dev" -s 16M -b 4k -q 8 -S 34
ktap_finished
