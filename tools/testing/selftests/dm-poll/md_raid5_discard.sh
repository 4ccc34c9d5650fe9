#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A discard to md raid5 always completes.  raid5 skips the discards that
# come while a reshape runs, and it used to skip them without ending
# them: blkdiscard, or a filesystem's fstrim, waited for ever, and the
# array could not be stopped.  (io_uring's REQ_NOWAIT discards, which
# raid5 left unended likewise: dm_uring_discard_poll.sh.)  A raid5 of
# three memory-backed null_blk devices with discard=1 and raid456's
# devices_handle_discard_safely grows to four, its reshape held to
# 1 MB/s; blkdiscard of 1 MiB while it runs must return within 10 s.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds mdadm blkdiscard
dmp_require_nullb

ktap_print_header
ktap_set_plan 1

members=()
for m in a b c d; do
	dmp_nullb_create "r5d$m" size=64 memory_backed=1 discard=1 queue_mode=2 ||
		ktap_exit_fail_msg "cannot create null_blk"
	members+=("$DMP_NODE")
done
modprobe -q raid456 || true
param=/sys/module/raid456/parameters/devices_handle_discard_safely
old=$(cat "$param") || ktap_exit_fail_msg "no raid456 devices_handle_discard_safely"
echo Y >"$param"
dmp_on_exit "echo $old >$param"
dmp_md_create 5 --assume-clean --bitmap=none --chunk=64 -- "${members[@]:0:3}" ||
	ktap_exit_fail_msg "cannot create md raid5"
md=$DMP_NODE
sys=$(dmp_sysfs "$md")/md
echo 1000 >"$sys/sync_speed_max" || ktap_exit_fail_msg "cannot limit the reshape's speed"
mdadm --add "$md" "${members[3]}" >/dev/null 2>&1 ||
	ktap_exit_fail_msg "cannot add a fourth member"
if ! out=$(mdadm --grow "$md" --raid-devices=4 --backup-file=/tmp/r5d.backup 2>&1); then
	echo "# ${out//$'\n'/$'\n'# }"
	ktap_exit_fail_msg "cannot grow md raid5 to four members"
fi
# The reshape has started and is far from done.
for ((i = 0; i < 50; i++)); do
	[ "$(cat "$sys/reshape_position")" != none ] && break
	sleep 0.1
done
pos=$(cat "$sys/reshape_position")
[ "$pos" != none ] || ktap_exit_fail_msg "no reshape running"

desc="md raid5: a discard while a reshape runs (at sector $pos)"
blkdiscard -o 32M -l 1M "$md" &
pid=$!
for ((i = 0; i < 100; i++)); do
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$pid" 2>/dev/null; then
	ktap_test_fail "$desc: not done in 10 s"
	# The discard is never ended: the array cannot be stopped either.
	ktap_exit_fail_msg "leaving the array, which a discard holds"
elif ! wait "$pid"; then
	ktap_test_fail "$desc: failed"
else
	ktap_test_pass "$desc: done"
fi
echo "# reshape at sector $(cat "$sys/reshape_position") after the discard"
ktap_finished
