#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mirror takes REQ_NOWAIT bios, so io_uring issues I/O to it from the
# submitter instead of an io-wq worker (whose ring-lock traffic halved
# polled throughput); mirror does not pass polled bios, so everything
# completes by interrupt.  Writes go to kmirrord, which sends them
# without REQ_NOWAIT; every leg gets them.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

# check_legs DESC SEED LEG...: each leg, read directly, holds what was
# written through the mirror with SEED (the first 8 MiB).
check_legs()
{
	local desc=$1 seed=$2 leg
	shift 2

	for leg in "$@"; do
		if ! "$DMP_VERIFY" -I -m read -s 8M -b 64k -q 4 -S "$seed" "$leg" >/dev/null; then
			echo "# $desc: $leg does not hold the data"
			ktap_test_fail "$desc: a leg does not hold the data"
			return
		fi
	done
	ktap_test_pass "$desc: every leg, read directly, holds the data"
}

ktap_print_header
ktap_set_plan 6
dmp_dm_create leg0 "0 65536 linear $a 600000" || ktap_exit_fail_msg "cannot create leg0"
leg0=$DMP_NODE
dmp_dm_create leg1 "0 65536 linear $b 600000" || ktap_exit_fail_msg "cannot create leg1"
leg1=$DMP_NODE
# 512 KiB regions; 4 KiB I/O never crosses one, which DM would split.
dmp_dm_create mirror "0 65536 mirror core 2 1024 nosync 2 $leg0 0 $leg1 0" ||
	ktap_exit_fail_msg "cannot create mirror"
mirror=$DMP_NODE
dmp_check_polled_by_irq "mirror: polled, issued inline" "$mirror" \
	-W -s 8M -b 4k -q 8 -S 221
check_legs "mirror: polled writes" 221 "$leg0" "$leg1"
dmp_check_irq "mirror: interrupt driven, issued inline" "$mirror" \
	-W -s 8M -b 4k -q 8 -S 222
# Across a region DM splits them: the first part keeps REQ_NOWAIT, and DM
# retries it if it fails with BLK_STS_AGAIN, while the rest goes on.
dmp_check_verified "mirror: polled I/O across regions, issued inline" "$mirror" \
	-W -s 8M -b 64k-256k -q 8 -S 223
dmp_check_irq "mirror: I/O across regions, issued inline" \
	"$mirror" -W -s 8M -b 64k-256k -q 8 -S 225
check_legs "mirror: I/O across regions" 225 "$leg0" "$leg1"
ktap_finished
