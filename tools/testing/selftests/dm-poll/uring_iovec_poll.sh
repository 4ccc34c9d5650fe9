#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Polled READV/WRITEV whose iovecs break NVMe's virt boundary, through
# dm-striped and md raid0 with 4 KiB chunks: segments of 512 B and 3.5 KiB,
# each at offset 512 of a page of its own (512-aligned, as O_DIRECT asks,
# not page-aligned), so that every segment boundary is a gap NVMe cannot
# take in one request.
#   md raid0 splits polled bios itself, to the limits it stacks from NVMe,
#   virt boundary included: a 4 KiB I/O goes as two polled parts, and the
#   whole run polls, 0 interrupts.
#   dm passes the gaps down: NVMe cannot split a REQ_NOWAIT clone and fails
#   it with BLK_STS_AGAIN, DM's worker resubmits it without REQ_POLLED, and
#   NVMe splits it by interrupt.  Every I/O still completes in time with its
#   data; page-aligned iovecs through the same device poll, 0 interrupts.
# Interrupt-driven runs of the same I/O are the control of the counting.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup mdadm
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

gaps=(-V "512,3584")

ktap_print_header
ktap_set_plan 7
dmp_dm_create iovec-striped "0 131072 striped 2 8 $a 0 $b 0" ||
	ktap_exit_fail_msg "cannot create dm-striped"
dm=$DMP_NODE
dmp_check_polled "dm-striped: READV/WRITEV, page-aligned iovecs" "$dm" -V 4096@0 \
	-s 8M -b 4k-64k -q 8 -S 81
dmp_check_irq "dm-striped: READV/WRITEV, page-aligned iovecs, interrupt driven" "$dm" \
	-V 4096@0 -s 4M -b 4k-64k -q 8 -S 82
dmp_check_polled_by_irq "dm-striped: iovecs across NVMe's virt boundary" "$dm" "${gaps[@]}" \
	-s 8M -b 4k-64k -q 8 -S 83
dmp_cleanup

dmp_md_create 0 --chunk=4 -- "$a" "$b" || ktap_exit_fail_msg "cannot create md raid0"
md=$DMP_NODE
# 256 writes and 256 reads of 4 KiB, chunk-aligned: each in two parts.
dmp_check_polled_parts "md raid0: iovecs across NVMe's virt boundary, 4 KiB" "$md" 1024 \
	"${gaps[@]}" -s 1M -b 4k -q 8 -S 84
dmp_check_polled "md raid0: iovecs across NVMe's virt boundary, 4-128 KiB" "$md" \
	"${gaps[@]}" -s 8M -b 4k-128k -q 8 -S 85
dmp_check_polled "md raid0: iovecs across NVMe's virt boundary, 1 KiB + 1.5 KiB at 1.5 KiB" \
	"$md" -V 1024,1536@1536 -s 4M -b 4k-64k -q 8 -S 86
dmp_check_irq "md raid0: iovecs across NVMe's virt boundary, interrupt driven" "$md" \
	"${gaps[@]}" -s 4M -b 4k-128k -q 8 -S 87
ktap_finished
