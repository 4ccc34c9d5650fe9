#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# md polls its members while a suspend or a quiesce waits for polled
# reads.  mddev_suspend() waits for active_io, a quiesce (raid1's
# freeze_array(), raid10's barrier) for nr_pending, and polled reads in
# flight hold both until polled.  One thread has 8 polled reads in flight
# and stops polling (iopoll_verify -H) meanwhile; in real life it waits
# for the suspend or the quiesce with its next bio (a blocking write), so
# were they to wait for it to poll, neither would go on: on Linux 6.12
# with md polling, until the NVMe timeout.  blk-mq's reaper is off here
# (io_poll_reap_ms 0): the admin operation must end with the reads held.
#   1. raid1: a suspend (a write to md/suspend_lo);
#   2. raid1 with a bitmap: a spare's recovery, resumed after a pause so
#      that no spare is added (which suspends first): its start quiesces
#      the array (raid1's freeze_array()), counted with kprobes, which
#      also say whether a suspend came first;
#   3. raid10 near2 with a bitmap: the same (raid10's raise_barrier()).
# Then the thread writes, reads on and verifies its data: without the fix
# that write waits for the suspend or the quiesce, which waits for the
# thread's reads, until the NVMe timeout handler polls them.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds mdadm
dmp_require_nullb
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}
tmp=$(mktemp -d)
dmp_on_exit "rm -rf $tmp"
bound=10

ktap_print_header
ktap_set_plan 3
dmp_reap_off "$a" "$b" || ktap_exit_fail_msg "cannot turn blk-mq's reaper off"
# Without the fix the NVMe timeout handler ends the wait, which must come
# after the bound.
for d in "$a" "$b"; do
	[ "$(cat "$(dmp_sysfs "$d")/queue/io_timeout")" -gt $((bound * 2000)) ] ||
		ktap_exit_fail_msg "${d#/dev/}: io_timeout is not above $((bound * 2)) s"
done

# drain_held DEV SEED CMD...: with the thread's reads held on DEV, run
# CMD; it must be done within $bound s, before the thread polls again.
drain_held()
{
	local dev=$1 seed=$2 pid r rc=0

	shift 2
	dmp_hold_start "$tmp" "$dev" "$seed" -L 60000 || return 1
	read -r r _ <"$(dmp_sysfs "$dev")/inflight"
	"$@" &
	pid=$!
	if ! dmp_done_within "$pid" "$bound"; then
		echo "# '$*': still waiting after $bound s, $r reads in flight on" \
			"${dev#/dev/} that nobody polls but md"
		rc=1
	fi
	dmp_hold_end "$tmp" || rc=1
	wait "$pid" || { echo "# '$*' failed"; rc=1; }
	[ "$rc" != 0 ] || echo "# '$*' done with $r reads held"
	[ "$r" -gt 0 ] || { echo "# no read was in flight: nothing was shown"; rc=1; }
	return "$rc"
}

# recover DEV: let the recovery that is frozen run, and wait for it.
recover()
{
	local sys

	sys=$(dmp_sysfs "$1")/md
	echo idle >"$sys/sync_action" || return 1
	DMP_MD_SYNC_S=60 dmp_md_wait_sync "$1" || return 1
	[ "$(cat "$sys/degraded")" = 0 ] ||
		{ echo "# $1: still degraded after the recovery"; return 1; }
}

# recovery_held LEVEL SEED OPTS...: a degraded array of LEVEL with a
# bitmap over the first namespace and a null_blk spare, whose recovery
# starts slowly and is frozen: the spare keeps its slot, so that resuming
# the recovery adds no spare and suspends nothing, but quiesces.  It is
# resumed with the reads held.
recovery_held()
{
	local level=$1 seed=$2 dev spare sys slot t=0 rc=0
	local quiesce suspend quiesces suspends first

	shift 2
	dmp_nullb_create "spare$level" size=128 memory_backed=1 queue_mode=2 \
		poll_queues=1 || return 1
	spare=$DMP_NODE
	dmp_reap_off "$spare" || return 1
	dmp_md_create "$level" --bitmap=internal --size=65536 "$@" -- "$a" missing ||
		return 1
	dev=$DMP_NODE
	sys=$(dmp_sysfs "$dev")/md
	echo 1000 >"$sys/sync_speed_max" || return 1
	mdadm --quiet --add "$dev" "$spare" || return 1
	while [ "$(cat "$sys/sync_action")" != recover ] && [ "$t" -lt 100 ]; do
		sleep 0.1
		t=$((t + 1))
	done
	echo frozen >"$sys/sync_action" || return 1
	t=0
	while [ "$(cat "$sys/sync_completed")" != none ] && [ "$t" -lt 300 ]; do
		sleep 0.1
		t=$((t + 1))
	done
	slot=$(cat "$sys/dev-${spare#/dev/}/slot")
	if [ "$slot" = none ] || [ "$(cat "$sys/degraded")" = 0 ]; then
		echo "# the spare is in slot $slot, degraded $(cat "$sys/degraded"):" \
			"no recovery left to resume"
		return 1
	fi
	echo system >"$sys/sync_speed_max" || return 1
	dmp_kprobe_calls "raid${level}_quiesce" && quiesce=$DMP_KPROBE_EV &&
		dmp_kprobe_calls mddev_suspend && suspend=$DMP_KPROBE_EV || return 1
	# In order too: the array's housekeeping after the recovery may suspend.
	: >"$DMP_TRACE/trace"
	echo 1 >"$DMP_TRACE/events/$quiesce/enable" &&
		echo 1 >"$DMP_TRACE/events/$suspend/enable" || return 1
	drain_held "$dev" "$seed" recover "$dev" || rc=1
	echo 0 >"$DMP_TRACE/events/$quiesce/enable"
	echo 0 >"$DMP_TRACE/events/$suspend/enable"
	first=$(grep -o -m 1 -E "(raid${level}_quiesce|mddev_suspend):" "$DMP_TRACE/trace")
	quiesces=$(dmp_count_stop "$quiesce" common_pid "common_pid >= 0")
	suspends=$(dmp_count_stop "$suspend" common_pid "common_pid >= 0")
	echo "# raid$level: $quiesces quiesces, $suspends suspends while the reads" \
		"were held, the first: ${first%:}"
	# raid10's recovery sometimes suspends first (1 run in 4 here); then
	# the suspend polls, and the quiesce finds nothing polled left.
	if [ "$quiesces" = 0 ]; then
		echo "# not what the case is for: no quiesce"
		rc=1
	fi
	return "$rc"
}

if dmp_md_create 1 --assume-clean --size=65536 -- "$a" "$b" &&
	drain_held "$DMP_NODE" 21 sh -c "echo 0 >$(dmp_sysfs "$DMP_NODE")/md/suspend_lo"; then
	ktap_test_pass "raid1: a suspend with polled reads held"
else
	ktap_test_fail "raid1: a suspend with polled reads held"
fi
dmp_cleanup

if recovery_held 1 22; then
	ktap_test_pass "raid1: a spare's recovery with a bitmap, polled reads held"
else
	ktap_test_fail "raid1: a spare's recovery with a bitmap, polled reads held"
fi
dmp_cleanup

if recovery_held 10 23 --layout=n2; then
	ktap_test_pass "raid10: a spare's recovery with a bitmap, polled reads held"
else
	ktap_test_fail "raid10: a spare's recovery with a bitmap, polled reads held"
fi
ktap_finished
