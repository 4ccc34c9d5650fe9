#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# thin and thin-pool take REQ_NOWAIT bios, so io_uring issues I/O to a
# thin device from the submitter instead of handing each one to an io-wq
# worker (whose ring-lock traffic halved polled throughput).  Bios to
# unprovisioned blocks, flushes and FUA writes go to the pool's worker
# without blocking the submitter, as do lookups that find the metadata
# lock taken.  Metadata lives on the first NVMe namespace; the interrupts
# of the second one, which holds the data, are counted.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}
DMP_IRQ_RE_OVERRIDE=$(dmp_irq_regex "$b")

# snap_churn POOL STOPFILE: create and delete a snapshot of thin 1 until
# STOPFILE exists, counting the cycles in STOPFILE.n: each message
# changes the metadata under its lock.  Not of thin 0, which the rings
# write: thin-provisioning.rst requires an active origin to be suspended
# for its snapshot (a write in flight to a block the snapshot comes to
# share is lost when the next write to that block copies the old data:
# seen once in about 30 runs), and a suspend would hand the rings' I/O
# to io-wq.  dm_thin_requeue_poll.sh snapshots a thin under load.
snap_churn()
{
	local n=0

	until [ -e "$2" ]; do
		dmsetup message "$1" 0 "create_snap 9 1" &&
			dmsetup message "$1" 0 "delete 9" || return 1
		echo $((++n)) >"$2.n"
	done
}

ktap_print_header
ktap_set_plan 11
dmp_thin_pool_create "$a" 500000 "$b" || ktap_exit_fail_msg "cannot create thin-pool"
pool=$DMP_NODE
for id in 0 1; do
	dmsetup message "$pool" 0 "create_thin $id" ||
		ktap_exit_fail_msg "cannot create thin $id"
done
dmp_dm_create thin "0 65536 thin $pool 0" || ktap_exit_fail_msg "cannot create thin"
thin=$DMP_NODE
fua=$(cat "$(dmp_sysfs "$thin")/queue/fua")

# Provisioning commits metadata, flushing the data device by interrupt:
# only the data is checked while blocks are new.
dmp_check_verified "thin: polled writes to new blocks, issued inline" \
	"$thin" -W -s 8M -b 4k-128k -q 8 -S 161
sleep 2
dmp_check_polled "thin: provisioned blocks, issued inline" "$thin" \
	-W -s 8M -b 512-128k -q 8 -S 162
# 4 KiB bios, so that none crosses a block: DM splits those, whose first
# part may then need a retry (dm_split_nowait_poll.sh).
dmp_check_irq "thin: interrupt driven, issued inline" "$thin" \
	-W -s 8M -b 4k -q 8 -S 163
# Positive control: IOSQE_ASYNC sends every I/O through io-wq, which -W
# must see.
out=$("$DMP_VERIFY" -A -W -s 1M -q 4 -S 164 "$thin") && rc=0 || rc=$?
if [ "$rc" -ne 0 ] && grep -q "iowq_workers [1-9]" <<<"$out"; then
	ktap_test_pass "thin: io-wq use detected under IOSQE_ASYNC"
else
	echo "# ${out//$'\n'/$'\n'# }"
	ktap_test_fail "thin: io-wq use not detected under IOSQE_ASYNC"
fi

# O_DSYNC writes are REQ_FUA, which thin hands to the pool's worker to be
# sent after a commit: without waiting, and with the data.
if [ "$fua" != 1 ]; then
	echo "# thin: no FUA on $thin (queue/fua $fua): no volatile write cache below"
	ktap_test_fail "thin: polled O_DSYNC writes, issued inline"
	ktap_test_fail "thin: interrupt-driven O_DSYNC writes, issued inline"
else
	dmp_check_verified "thin: polled O_DSYNC writes, issued inline" "$thin" \
		-D -W -s 4M -b 4k-64k -q 8 -S 166
	dmp_check_irq "thin: interrupt-driven O_DSYNC writes, issued inline" "$thin" \
		-D -W -s 4M -b 4k -q 8 -S 167
fi
# Across a block DM splits them: thin hands a FUA part to its worker, and
# fails it with BLK_STS_AGAIN only if the worker's throttle is taken, the
# first part before DM sends the rest (the write is retried whole, from
# io-wq), a later part never (it comes without REQ_NOWAIT).  No -EAGAIN
# may reach the caller.
dmp_check_irq "thin: O_DSYNC writes across blocks" "$thin" \
	-D -s 4M -b 4k-64k -q 8 -S 168

# Metadata changes while the ring polls: lookups that find the metadata
# lock taken go to the worker, and I/O is still issued inline.
stop=/tmp/dm_thin_nowait.$$
rm -f "$stop"
snap_churn "$pool" "$stop" &
churn=$!
dmp_check_verified "thin: polled I/O while snapshots come and go" "$thin" \
	-W -s 8M -b 4k-64k -q 8 -S 169
dmp_check_verified "thin: interrupt-driven I/O while snapshots come and go" "$thin" \
	-I -W -s 8M -b 4k -q 8 -S 170
touch "$stop"
if ! wait "$churn"; then
	ktap_test_fail "thin: snapshot churn failed"
elif [ "$(cat "$stop.n" 2>/dev/null || echo 0)" -le 0 ]; then
	ktap_test_fail "thin: no snapshot was created during the runs"
else
	echo "# thin: $(cat "$stop.n") snapshots created and deleted during the runs"
	ktap_test_pass "thin: snapshots created and deleted during the runs"
fi
rm -f "$stop" "$stop.n"

# The pool device itself takes REQ_NOWAIT too.
dmp_check_polled "thin-pool: the pool device, issued inline" "$pool" \
	-W -o 32M -s 8M -b 4k-64k -q 8 -S 165
ktap_finished
