#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A spare without poll queues is put into a raid1 slot through sysfs
# (md/dev-*/slot, as mdmon activates spares) while a thread has polled
# reads linked and in flight.  The array stops polling then, and those
# reads must still complete when the thread polls: bio_poll() keeps
# calling ->poll_bio() for what was linked.  Otherwise nothing polls them
# once io_poll is off: they wait for blk-mq's reaper, for the NVMe timeout
# (30 s) without it.  The thread then sees its new polled I/O fail with
# EOPNOTSUPP.
. "$(dirname "$0")/lib.sh"

EOPNOTSUPP=95

dmp_require_root
dmp_require_cmds mdadm dmsetup
dmp_require_nullb
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

ktap_print_header
ktap_set_plan 4
# Created first so that teardown stops the array before the spare goes:
# md writes its superblock to every member as it stops.
dmp_nullb_create noslot size=128 memory_backed=1 queue_mode=2 poll_queues=0 \
	submit_queues=1 || ktap_exit_fail_msg "cannot create null_blk"
nopoll=$DMP_NODE
dmp_dm_create m0 "0 262144 linear $a 0" || ktap_exit_fail_msg "cannot create member"
m0=$DMP_NODE
dmp_dm_create m1 "0 262144 linear $b 0" || ktap_exit_fail_msg "cannot create member"
dmp_md_create 1 --size=65536 -- "$m0" "$DMP_NODE" || ktap_exit_fail_msg "cannot create md raid1"
dev=$DMP_NODE
sys=$(dmp_sysfs "$dev")/md
dmp_md_wait_sync "$dev" || ktap_exit_fail_msg "$dev: resync did not finish"

# A third slot, empty, and the spare beside it: with recovery frozen, md
# does not move the spare in itself.
echo frozen >"$sys/sync_action" || ktap_exit_fail_msg "cannot freeze recovery"
echo 3 >"$sys/raid_disks" || ktap_exit_fail_msg "cannot grow the raid1 to three slots"
mdadm --quiet --add "$dev" "$nopoll" || ktap_exit_fail_msg "cannot add a spare"
slot=$sys/dev-${nopoll#/dev/}/slot
[ "$(cat "$slot")" = none ] || ktap_exit_fail_msg "the spare is in slot $(cat "$slot")"

# slot_hold: the thread's polled reads are linked and in flight, unpolled
# (it waits for GO before its next step, a blocking write), when the spare
# moves into slot 2; then it polls again.  Its reads must complete by its
# own polling, in well under the reaper's bound; new ones fail with
# EOPNOTSUPP.  One KTAP result.
slot_hold()
{
	local desc="raid1: spare without poll queues put into a slot, reads linked"
	local tmp pid t=0 before reaped r w rc=0

	tmp=$(mktemp -d)
	"$DMP_VERIFY" -m rw -s 16M -b 4k -q 8 -S 81 -w 1000 -H "$tmp/ready,$tmp/go" \
		-E "$EOPNOTSUPP" -L 5000 -T 120 "$dev" >"$tmp/out" 2>&1 &
	pid=$!
	while [ ! -e "$tmp/ready" ] && kill -0 "$pid" 2>/dev/null && [ "$t" -lt 600 ]; do
		sleep 0.1
		t=$((t + 1))
	done
	before=$(dmp_poll_reaped)
	read -r r w <"$(dmp_sysfs "$dev")/inflight"
	if [ -e "$tmp/ready" ]; then
		echo 2 >"$slot" || { echo "# cannot write $slot"; rc=1; }
		touch "$tmp/go"
	else
		kill "$pid" 2>/dev/null
		echo "# iopoll_verify never had its reads in flight"
		rc=1
	fi
	wait "$pid" || rc=1
	reaped=$(($(dmp_poll_reaped) - before))
	sed 's/^/# /' "$tmp/out"
	rm -rf "$tmp"
	echo "# $desc: $r reads in flight at the slot write; the reaper's polls" \
		"completed polled requests $reaped times"
	if [ "$rc" != 0 ]; then
		ktap_test_fail "$desc: I/O failed or was slow"
	elif [ "$r" = 0 ]; then
		ktap_test_fail "$desc: no read was in flight: nothing was shown"
	elif [ "$reaped" != 0 ]; then
		ktap_test_fail "$desc: the linked reads waited for the reaper"
	else
		ktap_test_pass "$desc: they completed by their poller"
	fi
}

slot_hold
dmp_check_io_poll "raid1 with a member without poll queues in slot 2" "$dev" 0
dmp_check_eopnotsupp "raid1 with a member without poll queues in slot 2" "$dev"

echo idle >"$sys/sync_action"
dmp_md_wait_sync "$dev" || ktap_exit_fail_msg "$dev: recovery did not finish"
state=$(cat "$sys/dev-${nopoll#/dev/}/state" 2>/dev/null)
if [ "$state" = in_sync ]; then
	ktap_test_pass "raid1: the member put into slot 2 is recovered and in sync"
else
	echo "# raid1: the member put into slot 2 is '${state:-gone}'"
	ktap_test_fail "raid1: the member put into slot 2 is not in sync"
	mdadm --detail "$dev" | sed 's/^/# /'
fi
ktap_finished
