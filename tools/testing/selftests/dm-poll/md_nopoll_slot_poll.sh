#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A spare without poll queues is put into a raid1 slot through sysfs
# (md/dev-*/slot, as mdmon activates spares) under polled load.  The array
# stops polling then, and the polled reads linked at that moment must
# still complete: md suspends the array for the slot write, as it does
# for a hot-add through recovery, so they drain first.  Without the
# suspend nothing polls them once io_poll is off: they wait for blk-mq's
# reaper (lib.sh fails the test on a reap), for the NVMe timeout (30 s)
# without it.  A ring then sees its I/O in flight complete and its new
# polled I/O fail with EOPNOTSUPP.
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

# slot_write: move the spare into slot 2 while reads are in flight (noted
# as for a suspend: the load fails if none was).
slot_write()
{
	dmp_note_inflight "$dev"
	echo 2 >"$slot"
}

# Polled reads, which raid1 links for its poller to poll (writes complete
# by interrupt), of zeros written first.
dd if=/dev/zero of="$dev" bs=1M oflag=direct status=none 2>/dev/null
DMP_LOAD_ARGS="-m zeros" DMP_LOAD_ALLOW_ERRNO=$EOPNOTSUPP dmp_rings_under_load \
	"raid1: spare without poll queues put into a slot through sysfs" "$dev" 2 1 \
	dmp_after_pause 0.3 slot_write
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
