#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# An md check (a monthly cron job) runs under a thread that keeps polled
# reads in flight and writes with a blocking pwrite() every 10 ms, as a
# database polls its reads and writes its log.  Resync, check and
# recovery raise a barrier over a region and wait for the I/O in flight
# there; the thread's write waits for that barrier to drop.  Were the
# thread's polled reads among what the barrier waits for, nothing would
# complete them, since only the thread polls them: on 6.12 with polled md
# that was the NVMe timeout (30 s), here blk-mq's reaper (lib.sh fails the
# test on a reap).  Resync does not wait for polled reads in flight; a
# read that finds the barrier up goes by interrupt instead (raid1).
#   1. raid1 of 64 MiB (one barrier bucket);
#   2. raid10 near2;
# each with checks back to back through three read passes, the data
# verified, every I/O and every write back within 5 s.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds mdadm dmsetup
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

ktap_print_header
ktap_set_plan 2

# check_loop SYS STOP COUNT: start a check as soon as the last one ended,
# until STOP exists; write how many were started to COUNT.
check_loop()
{
	local sys=$1 stop=$2 count=$3 n=0

	while [ ! -e "$stop" ]; do
		if [ "$(cat "$sys/sync_action")" = idle ]; then
			echo check >"$sys/sync_action" && n=$((n + 1))
		fi
		sleep 0.05
	done
	echo "$n" >"$count"
}

# check_under_load DESC DEV SEED: write the array, then read it back
# polled, with blocking writes, while checks run back to back.  One KTAP
# result.
check_under_load()
{
	local desc=$1 dev=$2 seed=$3 sys out rc=0 pass loop n reaped
	local tmp=/tmp/md-check.$$

	sys=$(dmp_sysfs "$dev")/md
	if ! out=$("$DMP_VERIFY" -m write -s 64M -b 64k -q 8 -S "$seed" "$dev" 2>&1); then
		echo "$out" | head -n 5 | sed 's/^/# /'
		ktap_test_fail "$desc: cannot write the array"
		return
	fi
	rm -f "$tmp.stop"
	reaped=$(dmp_poll_reaped)
	check_loop "$sys" "$tmp.stop" "$tmp.count" &
	loop=$!
	for pass in 1 2 3; do
		"$DMP_VERIFY" -m read -s 64M -b 4k-16k -q 8 -S "$seed" -w 10 -L 5000 \
			-T 120 "$dev" 2>&1 | sed "s/^/# pass $pass: /"
		[ "${PIPESTATUS[0]}" = 0 ] || { rc=1; break; }
	done
	touch "$tmp.stop"
	wait "$loop"
	n=$(cat "$tmp.count")
	rm -f "$tmp.stop" "$tmp.count"
	reaped=$(($(dmp_poll_reaped) - reaped))
	dmp_md_wait_sync "$dev" || rc=1
	echo "# $desc: $n checks started during the reads; the reaper's polls" \
		"completed polled requests $reaped times"
	if [ "$rc" != 0 ]; then
		ktap_test_fail "$desc: a read or a blocking write failed or was slow"
	elif [ "$reaped" != 0 ]; then
		ktap_test_fail "$desc: polled reads waited for the reaper"
	elif [ "$n" -lt 2 ]; then
		ktap_test_fail "$desc: fewer than two checks ran beside the reads"
	else
		ktap_test_pass "$desc: polled reads and blocking writes beside $n checks"
	fi
}

dmp_dm_create m0 "0 262144 linear $a 0" || ktap_exit_fail_msg "cannot create member"
m0=$DMP_NODE
dmp_dm_create m1 "0 262144 linear $b 0" || ktap_exit_fail_msg "cannot create member"
m1=$DMP_NODE
dmp_md_create 1 --assume-clean --size=65536 -- "$m0" "$m1" ||
	ktap_exit_fail_msg "cannot create md raid1"
check_under_load "raid1: check" "$DMP_NODE" 71
dmp_cleanup

dmp_dm_create m0 "0 262144 linear $a 0" || ktap_exit_fail_msg "cannot create member"
m0=$DMP_NODE
dmp_dm_create m1 "0 262144 linear $b 0" || ktap_exit_fail_msg "cannot create member"
m1=$DMP_NODE
dmp_md_create 10 --assume-clean --layout=n2 --size=65536 -- "$m0" "$m1" ||
	ktap_exit_fail_msg "cannot create md raid10"
check_under_load "raid10 near2: check" "$DMP_NODE" 72
ktap_finished
