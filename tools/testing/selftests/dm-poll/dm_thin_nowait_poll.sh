#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# thin and thin-pool take REQ_NOWAIT bios, so io_uring issues I/O to a
# thin device from the submitter instead of handing each one to an io-wq
# worker (whose ring-lock traffic halved polled throughput).  Bios to
# unprovisioned blocks go to the pool's worker without blocking the
# submitter.  Metadata lives on the first NVMe namespace; the interrupts
# of the second one, which holds the data, are counted.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}
DMP_IRQ_RE_OVERRIDE=$(dmp_irq_regex "$b")

ktap_print_header
ktap_set_plan 8
dmp_thin_pool_create "$a" 500000 "$b" || ktap_exit_fail_msg "cannot create thin-pool"
pool=$DMP_NODE
dmsetup message "$pool" 0 "create_thin 0" || ktap_exit_fail_msg "cannot create thin 0"
dmp_dm_create thin "0 65536 thin $pool 0" || ktap_exit_fail_msg "cannot create thin"
thin=$DMP_NODE

# Provisioning commits metadata, flushing the data device by interrupt:
# only the data is checked while blocks are new.
dmp_check_verified "thin: polled writes to new blocks, issued inline" \
	"$thin" -W -s 8M -b 4k-128k -q 8 -S 161
sleep 2
dmp_check_polled "thin: provisioned blocks, issued inline" "$thin" \
	-W -s 8M -b 512-128k -q 8 -S 162
# 4 KiB: a bio across a block DM splits, and fails whole if REQ_NOWAIT
# and not polled (dm_split_poll.sh).
dmp_check_irq "thin: interrupt driven, issued inline" "$thin" \
	-W -s 8M -b 4k -q 8 -S 163
# Positive control: IOSQE_ASYNC sends every I/O through io-wq, which -W
# must see.
if "$DMP_VERIFY" -A -W -s 1M -q 4 -S 164 "$thin" >/dev/null; then
	ktap_test_fail "thin: io-wq use not detected (IOSQE_ASYNC run passed -W)"
else
	ktap_test_pass "thin: io-wq use detected under IOSQE_ASYNC"
fi
# O_DSYNC writes are REQ_FUA, which thin throttles: a REQ_NOWAIT one
# fails with BLK_STS_AGAIN in ->map.  DM retries a polled one itself (no
# io-wq); io_uring retries an interrupt-driven one from io-wq, which shows
# that the path ran (the same I/O without O_DSYNC was issued inline).
dmp_check_verified "thin: polled O_DSYNC writes, retried by DM" "$thin" \
	-D -W -s 4M -b 4k-64k -q 8 -S 166
dmp_check_iowq "thin: interrupt-driven O_DSYNC writes, BLK_STS_AGAIN" "$thin" \
	-I -D -s 4M -b 4k -q 8 -S 167
# Across a block DM splits them: the first part's BLK_STS_AGAIN must not
# complete the write with -EAGAIN after the rest was done.
dmp_check_iowq "thin: interrupt-driven O_DSYNC writes across blocks" "$thin" \
	-I -D -s 4M -b 4k-64k -q 8 -S 168
# The pool device itself takes REQ_NOWAIT too.
dmp_check_polled "thin-pool: the pool device, issued inline" "$pool" \
	-W -o 32M -s 8M -b 4k-64k -q 8 -S 165
ktap_finished
