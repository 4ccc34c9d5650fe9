#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# blk-mq polls a poll queue that nobody polls (io_poll_reap_ms), on a raw
# NVMe namespace: the backstop for a submitter that sleeps in a wait its
# own polled requests hold up.  On Linux 6.12 a queue freeze was such a
# wait: one thread that keeps polled reads in flight and writes with a
# blocking O_DIRECT pwrite(), as a database polls its reads and writes its
# log, stalled for the NVMe timeout (30 s, "completion polled") while the
# namespace's scheduler was switched.  A freeze polls what it waits for
# now (blk_freeze_poll.sh), so the reaper is shown its stranded reads
# directly.
#   1. deterministic: 8 polled reads in flight with the reaper off, and
#      the thread stops polling (iopoll_verify -H); the reaper turned on
#      (which must not wait) must complete them within twice its bound,
#      the thread still away: its hctx*/poll_reaped in debugfs grows;
#   2. the scheduler switched in a loop under a thread that writes every
#      10 ms: every I/O and every write within 5 s, data verified, and
#      nothing reaped: the freezes poll;
#   3. io_poll_reap_ms: blk_mq.poll_reap_ms's default (10), which lib.sh
#      raised for the test, on the namespace and on a new null_blk queue,
#      not on a DM device; polled I/O with it at 0 (the reaper off);
#   4. reads just started on a poll queue that nobody polled for longer
#      than the bound, as after a controller reset, are left to their
#      submitter until they are that old: the worker looks while they are
#      young and leaves them, and reaps them at its next look (it reaped
#      them at once, and a ring on md raid0 or dm-striped met it after a
#      reset of rel_nvme_reset_poll.sh now and then).
# Reaps are case 1's point, so the test does not fail on them (lib.sh).
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup
dmp_get_nvme_devs 1
dev=${DMP_NVME[0]}
sys=$(dmp_sysfs "$dev")/queue
DMP_REAP_EXPECTED=1
# The freeze of a scheduler switch, which allocates scheduler tags for
# every hardware queue, takes a while under an emulator; 30 s is what a
# stranded read costs without the reaper.
lat_ms=5000
tmp=$(mktemp -d)
saved=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$sys/scheduler")
reap_ms=$(cat "$sys/io_poll_reap_ms" 2>/dev/null)
dmp_on_exit "echo $saved >$sys/scheduler; rm -rf $tmp"
[ -z "$reap_ms" ] || dmp_on_exit "echo $reap_ms >$sys/io_poll_reap_ms"
modprobe -q mq-deadline-iosched || true

ktap_print_header
ktap_set_plan 4

[ -d /sys/kernel/debug/block ] || ktap_exit_fail_msg "debugfs is not mounted"
[ -r "$DMP_REAPED_FILE" ] ||
	echo "# no $DMP_REAPED_FILE: this kernel does not reap unpolled poll queues"

# dev_reaped: the reaper's polls of this namespace's queues.
dev_reaped()
{
	cat "/sys/kernel/debug/block/${dev#/dev/}"/hctx*/poll_reaped 2>/dev/null |
		awk '{ n += $1 } END { print n + 0 }'
}

# other_sched: the scheduler to switch to from the current one.
other_sched()
{
	case $(sed -n 's/.*\[\(.*\)\].*/\1/p' "$sys/scheduler") in
	none) echo mq-deadline ;;
	*) echo none ;;
	esac
}

# 1. The reads in flight, nobody polling them; the reaper turned on.
reap_hold()
{
	local before r t=0 rc=0

	before=$(dev_reaped)
	[ -n "$reap_ms" ] || { echo "# no $sys/io_poll_reap_ms"; return 1; }
	echo 0 >"$sys/io_poll_reap_ms"
	dmp_hold_start "$tmp" "$dev" 21 -L 60000 || return 1
	read -r r _ <"$(dmp_sysfs "$dev")/inflight"
	timeout 10 sh -c "echo $reap_ms >$sys/io_poll_reap_ms" ||
		{ echo "# writing io_poll_reap_ms waited"; rc=1; }
	# Within twice the bound, and a second for the emulator.
	while [ "$(awk '{ print $1 }' "$(dmp_sysfs "$dev")/inflight")" != 0 ] &&
		[ "$t" -lt $((reap_ms / 50 + 10)) ]; do
		sleep 0.1
		t=$((t + 1))
	done
	echo "# $r reads in flight unpolled; $(awk '{ print $1 }' \
		"$(dmp_sysfs "$dev")/inflight") after $((t * 100)) ms with the reaper on"
	[ "$(awk '{ print $1 }' "$(dmp_sysfs "$dev")/inflight")" = 0 ] || rc=1
	dmp_hold_end "$tmp" || rc=1
	echo "# ${dev#/dev/} hctx*/poll_reaped: $before before, $(dev_reaped) after"
	[ "$(dev_reaped)" -gt "$before" ] ||
		{ echo "# nothing was reaped: the reads completed some other way"; rc=1; }
	[ "$r" -gt 0 ] || { echo "# no read was in flight: nothing was shown"; rc=1; }
	return "$rc"
}
if reap_hold; then
	ktap_test_pass "$dev: polled reads nobody polls are reaped"
else
	ktap_test_fail "$dev: polled reads nobody polls are reaped"
fi

# 2. The user's case, the switch in a loop.
reap_loop()
{
	local end pid rc=0 runs=0 before

	before=$(dev_reaped)
	end=$((SECONDS + $(dmp_scaled 20)))
	(
		while :; do
			other_sched >"$sys/scheduler"
			sleep 0.05
		done
	) &
	pid=$!
	while [ "$SECONDS" -lt "$end" ]; do
		"$DMP_VERIFY" -m rw -s 4M -b 4k -q 8 -S $((30 + runs)) -w 10 -L "$lat_ms" \
			-T 120 "$dev" >"$tmp/loop.out" 2>&1 ||
			{ sed 's/^/# /' "$tmp/loop.out"; rc=1; break; }
		runs=$((runs + 1))
	done
	kill "$pid"
	wait "$pid" 2>/dev/null
	tail -n 2 "$tmp/loop.out" | sed 's/^/# /'
	echo "# $runs runs; ${dev#/dev/}'s poll queues reaped $(($(dev_reaped) - before)) times"
	[ "$runs" -gt 0 ] || rc=1
	[ "$(dev_reaped)" = "$before" ] ||
		{ echo "# a freeze waited for the reaper to poll"; rc=1; }
	return "$rc"
}
if reap_loop; then
	ktap_test_pass "$dev: polled reads and blocking writes while the scheduler switches"
else
	ktap_test_fail "$dev: polled reads and blocking writes while the scheduler switches"
fi

# 3. The attribute.
reap_attr()
{
	local rc=0

	[ -n "$reap_ms" ] || { echo "# no $sys/io_poll_reap_ms"; return 1; }
	[ "$DMP_REAP_MS_SAVED" = 10 ] ||
		{ echo "# blk_mq.poll_reap_ms was '$DMP_REAP_MS_SAVED', not 10"; rc=1; }
	[ "$reap_ms" = "$DMP_REAP_MS" ] ||
		{ echo "# io_poll_reap_ms: $reap_ms, lib.sh set $DMP_REAP_MS"; rc=1; }
	echo 0 >"$sys/io_poll_reap_ms"
	if ! "$DMP_VERIFY" -m rw -s 4M -b 4k -q 8 -S 40 -L "$lat_ms" "$dev" >/dev/null; then
		echo "# polled I/O with io_poll_reap_ms 0 failed"
		rc=1
	fi
	echo "$reap_ms" >"$sys/io_poll_reap_ms"
	if dmp_have_nullb && dmp_nullb_create reap poll_queues=1 size=64; then
		[ "$(cat "$(dmp_sysfs "$DMP_NODE")/queue/io_poll_reap_ms")" = "$DMP_REAP_MS" ] ||
			{ echo "# a new null_blk queue did not take blk_mq.poll_reap_ms"; rc=1; }
	else
		echo "# cannot create a null_blk device with poll queues"
		rc=1
	fi
	dmp_dm_create reap "0 8192 linear $dev 0" || return 1
	[ ! -e "$(dmp_sysfs "$DMP_NODE")/queue/io_poll_reap_ms" ] ||
		{ echo "# $DMP_NODE (bio-based) has io_poll_reap_ms"; rc=1; }
	return "$rc"
}
if reap_attr; then
	ktap_test_pass "$dev: io_poll_reap_ms"
else
	ktap_test_fail "$dev: io_poll_reap_ms"
fi

# uptime_ms: the guest's uptime in milliseconds.
uptime_ms()
{
	awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime
}

# wait_reaped COUNT: until dev_reaped is past COUNT, for twice the bound
# and half a second at most.
wait_reaped()
{
	local t=0

	while [ "$(dev_reaped)" = "$1" ] && [ "$t" -lt $((reap_ms / 25 + 10)) ]; do
		sleep 0.05
		t=$((t + 1))
	done
}

# 4. Thread A's reads are reaped, the worker is due again a bound later;
# thread B's reads go in flight, unpolled, before it is due: they are
# younger than the bound when it looks, which leaves them, and older at
# its look after, which reaps them.  All on one CPU: one poll queue, one
# worker.  Returns 2 if B's reads missed the looks (a slow machine).
reap_young()
{
	local r=$reap_ms t=0 before ta tb tm te pid rc=0

	[ -n "$r" ] || { echo "# no $sys/io_poll_reap_ms"; return 1; }
	taskset -pc 0 "$BASHPID" >/dev/null || return 1
	mkdir -p "$tmp/a" "$tmp/b"
	rm -f "$tmp/b/ready" "$tmp/b/go"
	# Nothing in flight for two bounds: the worker has stopped.
	sleep "$(awk "BEGIN { print $r * 2 / 1000 }")"
	before=$(dev_reaped)
	dmp_hold_start "$tmp/a" "$dev" 41 -L 60000 || return 1
	wait_reaped "$before"
	ta=$(uptime_ms)
	[ "$(dev_reaped)" != "$before" ] ||
		{ echo "# A's reads were not reaped"; dmp_hold_end "$tmp/a"; return 1; }
	sleep "$(awk "BEGIN { print $r * 0.35 / 1000 }")"
	before=$(dev_reaped)
	"$DMP_VERIFY" -m read -s 8M -b 4k -q 8 -S 41 -w 1000 -L 60000 -T 120 \
		-H "$tmp/b/ready,$tmp/b/go" "$dev" >"$tmp/b/out" 2>&1 &
	pid=$!
	t=0
	while [ ! -e "$tmp/b/ready" ] && kill -0 "$pid" 2>/dev/null && [ "$t" -lt 100 ]; do
		sleep 0.01
		t=$((t + 1))
	done
	tb=$(uptime_ms)
	# Past the worker's look, a bound after A's reap (which ta follows
	# closely), and before B's reads are as old as the bound.
	sleep "$(awk "BEGIN { t = ($ta + $r * 1.25 - $tb) / 1000; print (t > 0 ? t : 0) }")"
	tm=$(uptime_ms)
	[ "$(dev_reaped)" = "$before" ] ||
		{ echo "# B's reads, younger than the bound, were reaped"; rc=1; }
	# The next look, a bound later, finds them older.
	wait_reaped "$before"
	te=$(uptime_ms)
	[ "$(dev_reaped)" != "$before" ] ||
		{ echo "# B's reads, older than the bound since, were not reaped"; rc=1; }
	touch "$tmp/b/go"
	wait "$pid" || { sed 's/^/# /' "$tmp/b/out"; rc=1; }
	dmp_hold_end "$tmp/a" >/dev/null || rc=1
	echo "# A's reads reaped by $((ta % 100000)) ms; B's in flight unpolled" \
		"from $((tb % 100000)) ms, still at $((tm % 100000)) ms (the worker" \
		"due at about $(((ta + r) % 100000)) ms), reaped by $((te % 100000)) ms"
	if [ ! -e "$tmp/b/ready" ] || [ "$tb" -gt $((ta + r * 85 / 100)) ] ||
		[ "$tm" -lt $((ta + r * 115 / 100)) ] ||
		[ $((tm - tb)) -gt $((r * 95 / 100)) ]; then
		echo "# B's reads were not in flight, younger than the bound, while" \
			"the worker looked: timing"
		return 2
	fi
	return "$rc"
}
for _ in 1 2 3; do
	rc=0
	(reap_young) || rc=$?
	[ "$rc" = 2 ] || break
done
if [ "$rc" = 0 ]; then
	ktap_test_pass "$dev: polled reads are reaped once as old as the bound, not before"
else
	ktap_test_fail "$dev: polled reads are reaped once as old as the bound, not before"
fi
ktap_finished
