#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# md linear over two NVMe namespaces polls end to end.  A bio across the
# boundary between the members, which md splits, is not polled: it fails
# with -EAGAIN before any part is sent and io_uring sends it again from a
# worker, whose parts complete by interrupt.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds mdadm
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

ktap_print_header
ktap_set_plan 5
dmp_md_create linear -- "$a" "$b" || ktap_exit_fail_msg "cannot create md linear"
dev=$DMP_NODE
dmp_check_io_poll "md linear" "$dev" 1
dmp_check_polled "md linear 4k qd8" "$dev" -s 16M -b 4k -q 8 -S 31
# The first member's data ends where md maps the second one's.
first=$(($(cat "$(dmp_sysfs "$dev")/md/dev-${a##*/}/size") * 1024))
dmp_check_polled_by_irq "md linear 512B-512k across the members" "$dev" \
	-o $((first - (4 << 20))) -s 8M -b 512-512k -q 4 -S 32
# Past the members' transfer size the block layer splits the bio, and it
# polls no bio it splits: io_uring retries it, by interrupt.
dmp_check_polled_by_irq "md linear 1M, past the members' transfer size" "$dev" \
	-s 16M -b 1M -q 2 -S 33
dmp_check_irq "md linear 4k qd8" "$dev" -s 16M -b 4k -q 8 -S 34
ktap_finished
