#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dm-crypt's mempool reserves stay with I/O that completes by interrupt: a
# write encrypted in its submitter never takes a reserve element.  A polled
# write holds its pages until its submitter polls.  Were they the reserve's,
# a writer that then waits for another write to the device (a blocking
# pwrite(), an fsync(), a journal commit) would sleep while that write
# waits for the reserve, under crypt's bio_alloc_lock, and only the
# sleeper's polling gives the reserve back: blk-mq's reaper does here, the
# NVMe timeout (30 s) without it.  Crypt takes from the reserve (256 pages)
# what its page budget does not cover: 2% of memory shared by the crypt
# targets, at least 16 MiB a target.  With enough targets, polled writes
# deep enough fill it, as a database's data writes at a high queue depth:
#   1. one thread keeps 384 polled writes of 64 KiB (24 MiB) in flight and
#      writes with a blocking pwrite() every 10 ms: every write back within
#      5 s, none reaped, kcryptd's work ran (it took the writes over the
#      budget, which go by interrupt), the data read back polled;
#   2. the same with no_write_workqueue, where the pwrite() encrypts its
#      own write.
# cipher_null: the point is memory, and AES under an emulator runs at a few
# MB/s, too slow to fill the budget between two polls.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup
dmp_get_nvme_devs 1
nvme=${DMP_NVME[0]}
modprobe -q crypto_null 2>/dev/null || true

ktap_print_header
ktap_set_plan 2

# crypt_budget_targets: how many crypt targets bring each one's page budget
# to its floor (4096 pages): 2% of memory divided among them.
crypt_budget_targets()
{
	awk '$1 == "MemTotal:" {
		n = int($2 / 4 * 2 / 100 / 4096) + 1
		print n < 1 ? 1 : n
	}' /proc/meminfo
}

nr=$(crypt_budget_targets)
echo "# $nr crypt targets: each has the 16 MiB budget"
for i in $(seq 2 "$nr"); do
	dmp_dm_create "crypt-budget$i" "0 8 crypt cipher_null-ecb - 0 $nvme $((i * 8))" ||
		ktap_exit_fail_msg "cannot create dm-crypt (cipher_null: CONFIG_CRYPTO_NULL)"
done

# crypt_check_reserve DESC TABLE-OPTIONS SEED: the writes and the blocking
# pwrite()s over a new table at 1 MiB, then the data read back.  One KTAP
# result.
crypt_check_reserve()
{
	local desc=$1 table_opts=$2 seed=$3 ev=workqueue/workqueue_execute_start
	local addr filter n reaped out rc

	dmp_dm_create "crypt-reserve$seed" \
		"0 131072 crypt cipher_null-ecb - 0 $nvme 2048 $table_opts" ||
		{ ktap_test_fail "$desc: cannot create dm-crypt"; return; }
	addr=$(awk '$3 == "kcryptd_crypt" { print $1; exit }' /proc/kallsyms)
	filter="function == 0x$addr"
	if [ -z "${addr//0/}" ] || ! dmp_count_start "$ev" common_pid "$filter"; then
		ktap_test_fail "$desc: cannot count kcryptd's work"
		return
	fi
	reaped=$(dmp_poll_reaped)
	"$DMP_VERIFY" -m write -s 24M -b 64k -q 384 -S "$seed" -w 10 -L 5000 \
		"$DMP_NODE" 2>&1 | sed 's/^/# /'
	rc=${PIPESTATUS[0]}
	n=$(dmp_count_stop "$ev" common_pid "$filter")
	reaped=$(($(dmp_poll_reaped) - reaped))
	echo "# $desc: kcryptd's work ran $n times; the reaper's polls completed" \
		"polled requests $reaped times"
	if [ "$rc" != 0 ]; then
		ktap_test_fail "$desc: a write failed or was slow"
	elif [ "$reaped" != 0 ]; then
		ktap_test_fail "$desc: polled writes waited for the reaper"
	elif [ "$n" = 0 ]; then
		ktap_test_fail "$desc: the budget never filled: kcryptd took no write"
	elif ! out=$("$DMP_VERIFY" -L "$DMP_MAX_LAT_MS" -m read -s 24M -b 64k -q 16 \
		-S "$seed" "$DMP_NODE" 2>&1); then
		echo "$out" | head -n 5 | sed 's/^/# /'
		ktap_test_fail "$desc: the data read back failed or differs"
	else
		ktap_test_pass "$desc: budget filled, no write waited for polling, data verified"
	fi
	dmp_dm_remove "crypt-reserve$seed"
}

crypt_check_reserve "crypt: polled writes past the page budget, blocking pwrite()s" "" 301
crypt_check_reserve "crypt: no_write_workqueue, polled writes past the budget, blocking pwrite()s" \
	"1 no_write_workqueue" 302
ktap_finished
