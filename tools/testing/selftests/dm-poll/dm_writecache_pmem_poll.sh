#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dm-writecache in pmem mode: the cache is persistent memory, which
# writecache reads and writes with memcpy in ->map, under its lock; only
# reads of blocks not cached go to the origin as bios.  Those reads are
# polled end to end and issued inline (REQ_NOWAIT); a read of a cached
# block is copied in the submission, polled or not; a REQ_NOWAIT write
# fails with BLK_STS_AGAIN before it is copied (writecache may wait for
# the free list and its flush), so that io_uring writes it from io-wq;
# and what was written reads back, before and after a suspend, which
# commits it.  The persistent memory is the VM's legacy pmem region
# (memmap=SIZE!OFFSET: nd_e820, nd_pmem); the origin is an NVMe
# namespace, written from below first.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup
dmp_get_nvme_devs 1
dmp_get_pmem
b=${DMP_NVME[0]}
DMP_IRQ_RE_OVERRIDE=$(dmp_irq_regex "$b")

ktap_print_header
ktap_set_plan 5
dmp_dm_create wpmorig "0 65536 linear $b 400000" || ktap_exit_fail_msg "cannot create the origin"
orig=$DMP_NODE
"$DMP_VERIFY" -I -m write -s 32M -b 64k -q 8 -S 191 "$orig" >/dev/null ||
	ktap_exit_fail_msg "cannot write the origin"
dd if=/dev/zero of="$DMP_PMEM" bs=1M count=1 oflag=direct status=none ||
	ktap_exit_fail_msg "cannot clear $DMP_PMEM"
dmp_dm_create wpm "0 65536 writecache p $orig $DMP_PMEM 4096 0" ||
	ktap_exit_fail_msg "cannot create writecache in pmem mode over $DMP_PMEM"
wc=$DMP_NODE

dmp_check_polled "writecache pmem: polled reads of blocks not cached, issued inline" "$wc" \
	-W -m read -s 8M -b 4k-64k -q 8 -S 191
dmp_check_verified "writecache pmem: polled writes and reads of cached blocks" "$wc" \
	-o 16M -s 4M -b 4k-64k -q 8 -S 192
if "$DMP_VERIFY" -L "$DMP_MAX_LAT_MS" -I -W -m read -o 16M -s 4M -b 4k-64k -q 8 -S 192 "$wc"; then
	ktap_test_pass "writecache pmem: reads of cached blocks by interrupt, inline, verified"
else
	ktap_test_fail "writecache pmem: reads of cached blocks by interrupt: io-wq or failed"
fi
dmp_dm_suspend_resume "${wc#/dev/mapper/}" || ktap_exit_fail_msg "cannot commit the cache"
dmp_check_verified "writecache pmem: committed blocks read back" "$wc" \
	-m read -o 16M -s 4M -b 4k-64k -q 8 -S 192
# A REQ_NOWAIT write fails before it is copied: io-wq writes them all.
if out=$("$DMP_VERIFY" -I -o 24M -s 1M -b 4k -q 8 -S 193 "$wc" 2>&1) &&
	workers=$(sed -n 's/.* iowq_workers \([0-9]*\).*/\1/p' <<<"$out") &&
	[ "${workers:-0}" -gt 0 ]; then
	ktap_test_pass "writecache pmem: REQ_NOWAIT writes go to io-wq ($workers workers), verified"
else
	echo "# ${out//$'\n'/$'\n'# }"
	ktap_test_fail "writecache pmem: REQ_NOWAIT writes did not go to io-wq, or failed"
fi
ktap_finished
