#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# blk-mq polls a poll queue that nobody polls (io_poll_reap_ms), on a raw
# NVMe namespace.  One thread keeps polled reads in flight and writes with
# a blocking O_DIRECT pwrite(), as a database polls its reads and writes
# its log; while the namespace's scheduler is switched, which freezes the
# queue.  If the write waits in bio_queue_enter() for a freeze that waits
# for the thread's own reads, nothing polls them: on Linux 6.12 they wait
# for the NVMe timeout, 30 s ("completion polled").
#   1. deterministic: the reads in flight with the reaper off, the switch
#      started and waiting for them, the reaper turned on (which must not
#      wait for the freeze), then the write: it must be back within 5 s,
#      and the reaper must have polled the namespace's poll queue (its
#      hctx*/poll_reaped in debugfs grew); from none and mq-deadline;
#   2. the scheduler switched in a loop under a thread that writes every
#      10 ms: every I/O and every write within 5 s, data verified;
#   3. io_poll_reap_ms: blk_mq.poll_reap_ms's default (10), which lib.sh
#      raised for the test, on the namespace and on a new null_blk queue,
#      not on a DM device; polled I/O with it at 0 (the reaper off).
# Reaps are this test's point, so it does not fail on them (lib.sh).
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
ktap_set_plan 3

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

# 1. The switch waits for the reads, the write for the switch.  The
# reaper is off until the switch is seen waiting, then turned on, which
# must not wait for the freeze: the reads are reaped then, and the write
# goes through.  From each scheduler in turn: the reads come from the
# driver's tags, then from the scheduler's.
reap_hold()
{
	local before from pid sw t=0 rc=0

	before=$(dev_reaped)
	from=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$sys/scheduler")
	rm -f "$tmp/ready" "$tmp/go"
	[ -z "$reap_ms" ] || echo 0 >"$sys/io_poll_reap_ms"
	"$DMP_VERIFY" -m rw -s 8M -b 4k -q 8 -S 21 -w 1000 -L "$lat_ms" -T 120 \
		-H "$tmp/ready,$tmp/go" "$dev" >"$tmp/hold.out" 2>&1 &
	pid=$!
	while [ ! -e "$tmp/ready" ] && [ "$t" -lt 600 ]; do
		sleep 0.1
		t=$((t + 1))
	done
	if [ ! -e "$tmp/ready" ]; then
		kill "$pid" 2>/dev/null
		wait "$pid"
		echo "# iopoll_verify never had its reads in flight"
		return 1
	fi
	other_sched >"$sys/scheduler" &
	sw=$!
	# The switch's freeze waits for the reads: the writer of the
	# attribute sleeps (D) until they complete.
	t=0
	while [ "$(dmp_proc_state "$sw")" != D ] && kill -0 "$sw" 2>/dev/null &&
		[ "$t" -lt 500 ]; do
		sleep 0.01
		t=$((t + 1))
	done
	if [ "$(dmp_proc_state "$sw")" != D ]; then
		echo "# the switch from $from did not wait for the reads in flight"
		rc=1
	fi
	# Turning the reaper on while the freeze waits must not wait.
	[ -z "$reap_ms" ] || timeout 10 sh -c "echo $reap_ms >$sys/io_poll_reap_ms" ||
		{ echo "# writing io_poll_reap_ms waited for the freeze"; rc=1; }
	echo "# from $from: the switch is $(dmp_proc_state "$sw" || echo "over")" \
		"after $((t * 10)) ms, the reaper on; the write goes"
	touch "$tmp/go"
	t=$SECONDS
	wait "$pid" || rc=1
	wait "$sw" || { echo "# the scheduler switch failed"; rc=1; }
	echo "# the write and the switch were done in $((SECONDS - t)) s"
	sed 's/^/# /' "$tmp/hold.out"
	echo "# ${dev#/dev/} hctx*/poll_reaped: $before before, $(dev_reaped) after"
	[ "$(dev_reaped)" -gt "$before" ] ||
		{ echo "# nothing was reaped: the reads completed some other way"; rc=1; }
	return "$rc"
}
if reap_hold && reap_hold; then
	ktap_test_pass "$dev: a blocking write behind a freeze that waits for unpolled reads"
else
	ktap_test_fail "$dev: a blocking write behind a freeze that waits for unpolled reads"
fi

# 2. The user's case, the switch in a loop.
reap_loop()
{
	local end pid rc=0 runs=0

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
	echo "# $runs runs; block/poll_reaped now $(dmp_poll_reaped)"
	[ "$runs" -gt 0 ] || rc=1
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
ktap_finished
