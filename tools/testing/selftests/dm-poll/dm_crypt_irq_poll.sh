#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dm-crypt tables whose polled I/O must still complete by interrupt, with
# its data: integrity tags, which crypt allocates for a bio of its own
# and dm-integrity stores (a random IV here: a write sent without them
# reads back wrong), and the eboiv IV, which allocates and waits for a
# cipher while it encrypts or decrypts, so it must never run in the
# poller (a kernel with CONFIG_DEBUG_ATOMIC_SLEEP, as the debug kernel,
# catches a sleep there).  Interrupt-driven I/O to the tables with tags
# is issued from the submitter, without io-wq: crypt and dm-integrity
# take REQ_NOWAIT bios.
. "$(dirname "$0")/lib.sh"

KEY=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef

dmp_require_root
dmp_require_cmds dmsetup dd
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

ktap_print_header
ktap_set_plan 8
# A seed of this run's: data an earlier run left cannot pass for it.
seed=$((RANDOM * 8 + 1))

# dm-integrity with 16-byte tags over $a: created over one sector to
# learn the sectors it provides, then loaded with that size.
dd if=/dev/zero of="$a" bs=1M count=1 oflag=direct status=none
dmp_dm_create integ "0 1 integrity $a 0 16 J 0" ||
	ktap_exit_fail_msg "cannot create dm-integrity"
integ=$DMP_NODE
sectors=$(dmsetup status "${integ#/dev/mapper/}" | awk '{ print $5 }')
[ "${sectors:-0}" -gt 65536 ] ||
	ktap_exit_fail_msg "dm-integrity provides ${sectors:-no} sectors"
if ! dmsetup reload "${integ#/dev/mapper/}" --table "0 $sectors integrity $a 0 16 J 0" ||
	! dmsetup resume "${integ#/dev/mapper/}"; then
	ktap_exit_fail_msg "cannot load dm-integrity with $sectors sectors"
fi
# check_both DESC TABLE VERIFY-ARGS...: polled writes, then polled reads,
# each by interrupt and verified.
check_both()
{
	local desc=$1 table=$2
	shift 2

	dmp_check_table irq "$desc: writes" "$table" -m write "$@"
	dmp_check_polled_by_irq "$desc: reads" "$DMP_NODE" -m read "$@"
}

# check_inline DESC: interrupt-driven I/O to the last table, which crypt
# and dm-integrity take with REQ_NOWAIT: io_uring issues it from the
# submitter (-W: no io-wq worker), tags allocated without waiting.
check_inline()
{
	dmp_check_irq "$1: issued inline" "$DMP_NODE" -W -s 8M -b 4k-64k -q 4 -S "$2"
}

check_both "crypt with integrity tags (random IV)" \
	"0 32768 crypt aes-xts-random $KEY 0 $integ 0 1 integrity:16:none" \
	-b 512-128k -q 4 -S "$seed"
check_inline "crypt with integrity tags (random IV)" "$((seed + 3))"
# Encrypted in the submitter: the tags must go with crypt's own bio.  A
# REQ_NOWAIT write, which that may not do, goes to crypt's worker.
check_both "crypt with integrity tags, no_write_workqueue" \
	"0 32768 crypt aes-xts-random $KEY 0 $integ 32768 2 integrity:16:none no_write_workqueue" \
	-b 512-128k -q 4 -S "$((seed + 1))"
check_inline "crypt with integrity tags, no_write_workqueue" "$((seed + 4))"
check_both "crypt with the eboiv IV" \
	"0 65536 crypt aes-cbc-eboiv $KEY 0 $b 2048 1 sector_size:4096" \
	-s 16M -b 4k-128k -q 4 -S "$((seed + 2))"
ktap_finished
