#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A queue freeze polls the poll queues it waits for.  One thread has 8
# polled reads in flight and stops polling (iopoll_verify -H) while a
# queue below is frozen.  In real life the thread waits for the freeze
# with its next bio (a blocking write, in bio_queue_enter()), so were the
# freezer to wait for it to poll, neither would go on: on Linux 6.12 until
# the NVMe timeout, 30 s.  blk-mq's reaper is off here (io_poll_reap_ms
# 0), so nothing else polls: the freeze must end with the reads held.
#   1. NVMe namespace: an I/O scheduler switch, from none and back;
#   2. NVMe namespace: an nr_requests write;
#   3. md raid1 of two namespaces: a member's scheduler switched under
#      the reads (the thread's write then goes to both members);
#   4. the same under md raid10 (near 2 copies), whose polled reads md
#      also counts apart.
# Then the thread writes, reads on and verifies its data: without the fix
# that write waits for the freeze, which waits for the thread's reads,
# until the NVMe timeout handler polls them.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds mdadm
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}
tmp=$(mktemp -d)
dmp_on_exit "rm -rf $tmp"
modprobe -q mq-deadline-iosched || true
# Under TCG a scheduler switch allocates its tags for a second or two.
bound=10

ktap_print_header
ktap_set_plan 4

for d in "$a" "$b"; do
	sys=$(dmp_sysfs "$d")/queue
	dmp_on_exit "echo $(sed -n 's/.*\[\(.*\)\].*/\1/p' "$sys/scheduler") >$sys/scheduler"
	dmp_on_exit "echo $(cat "$sys/nr_requests") >$sys/nr_requests"
done
dmp_reap_off "$a" "$b" || ktap_exit_fail_msg "cannot turn blk-mq's reaper off"
# Without the fix the NVMe timeout handler ends the wait, which must come
# after the bound.
for d in "$a" "$b"; do
	[ "$(cat "$(dmp_sysfs "$d")/queue/io_timeout")" -gt $((bound * 2000)) ] ||
		ktap_exit_fail_msg "${d#/dev/}: io_timeout is not above $((bound * 2)) s"
done

# other_sched DEV: the scheduler to switch DEV's queue to.
other_sched()
{
	case $(sed -n 's/.*\[\(.*\)\].*/\1/p' "$(dmp_sysfs "$1")/queue/scheduler") in
	none) echo mq-deadline ;;
	*) echo none ;;
	esac
}

# freeze_held DEV HELD SEED ATTR VALUE: with the thread's reads held on
# HELD, write VALUE to DEV's queue attribute ATTR, which freezes DEV's
# queue; it must be done within $bound s, before the thread polls again.
# FROZEN_READS is how many of the reads were in flight on DEV.
freeze_held()
{
	local dev=$1 held=$2 seed=$3 attr=$4 value=$5 pid r rc=0

	dmp_hold_start "$tmp" "$held" "$seed" -L 60000 || return 1
	read -r r _ <"$(dmp_sysfs "$dev")/inflight"
	FROZEN_READS=$r
	echo "$value" >"$(dmp_sysfs "$dev")/queue/$attr" &
	pid=$!
	if ! dmp_done_within "$pid" "$bound"; then
		echo "# $attr=$value on ${dev#/dev/}: still waiting after $bound s," \
			"$r reads of ${held#/dev/} in flight there, polled by the freezer alone"
		rc=1
	fi
	dmp_hold_end "$tmp" || rc=1
	wait "$pid" || { echo "# writing $attr failed"; rc=1; }
	[ "$rc" != 0 ] || echo "# $attr=$value on ${dev#/dev/} done with $r reads held there"
	return "$rc"
}

# freeze_shown DESC: FROZEN_READS is not 0.
freeze_shown()
{
	[ "$FROZEN_READS" -gt 0 ] && return 0
	echo "# $1: no read was in flight on the queue frozen: nothing was shown"
	return 1
}

if freeze_held "$a" "$a" 11 scheduler "$(other_sched "$a")" && freeze_shown "from none" &&
	freeze_held "$a" "$a" 12 scheduler "$(other_sched "$a")" && freeze_shown "back"; then
	ktap_test_pass "${a#/dev/}: a scheduler switch with polled reads held"
else
	ktap_test_fail "${a#/dev/}: a scheduler switch with polled reads held"
fi

# Back at once, with no scheduler: one that comes and goes resets
# nr_requests but leaves the tags' depth as this left it.
nr=$(cat "$(dmp_sysfs "$a")/queue/nr_requests")
rc=0
{ freeze_held "$a" "$a" 13 nr_requests 32 && freeze_shown nr_requests; } || rc=1
echo "$nr" >"$(dmp_sysfs "$a")/queue/nr_requests" || rc=1
if [ "$rc" = 0 ]; then
	ktap_test_pass "${a#/dev/}: an nr_requests write with polled reads held"
else
	ktap_test_fail "${a#/dev/}: an nr_requests write with polled reads held"
fi

# member_switches LEVEL SEED: the reads go to either member
# (read_balance()): at least one of the two switches must have had some on
# its queue.  The array is stopped after.
member_switches()
{
	local shown=0 rc=0

	if dmp_md_create "$1" --assume-clean --size=65536 -- "$a" "$b" &&
		freeze_held "$b" "$DMP_NODE" "$2" scheduler "$(other_sched "$b")" &&
		shown=$((shown + FROZEN_READS)) &&
		freeze_held "$a" "$DMP_NODE" $(($2 + 1)) scheduler "$(other_sched "$a")" &&
		FROZEN_READS=$((shown + FROZEN_READS)) && freeze_shown "raid$1"; then
		:
	else
		rc=1
	fi
	dmp_cleanup
	return "$rc"
}
for level in 1 10; do
	if member_switches "$level" $((14 + level)); then
		ktap_test_pass "raid$level: a member's scheduler switch with polled reads held"
	else
		ktap_test_fail "raid$level: a member's scheduler switch with polled reads held"
	fi
done
ktap_finished
