#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A member without poll queues joins a raid1 array under polled load, as
# the spare a failed member is recovered onto: the array stops polling
# once it joins; polled I/O in flight drains, new polled I/O fails with
# EOPNOTSUPP, and the new member stays in the array.
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
dmp_nullb_create nopoll size=128 memory_backed=1 queue_mode=2 poll_queues=0 \
	submit_queues=1 || ktap_exit_fail_msg "cannot create null_blk"
nopoll=$DMP_NODE
dmp_dm_create m0 "0 262144 linear $a 0" || ktap_exit_fail_msg "cannot create member"
m0=$DMP_NODE
dmp_dm_create m1 "0 262144 linear $b 0" || ktap_exit_fail_msg "cannot create member"
dmp_md_create 1 --size=65536 -- "$m0" "$DMP_NODE" || ktap_exit_fail_msg "cannot create md raid1"
dev=$DMP_NODE
dmp_md_wait_sync "$dev" || ktap_exit_fail_msg "$dev: resync did not finish"

mdadm --quiet --add "$dev" "$nopoll" || ktap_exit_fail_msg "cannot add a spare"
DMP_LOAD_ALLOW_ERRNO=$EOPNOTSUPP dmp_rings_under_load \
	"raid1: member without poll queues joins" "$dev" 2 1 \
	dmp_after_pause 0.3 mdadm --quiet --fail "$dev" "$m0"
dmp_md_wait_sync "$dev" || ktap_exit_fail_msg "$dev: recovery did not finish"
state=$(cat "$(dmp_sysfs "$dev")/md/dev-${nopoll#/dev/}/state" 2>/dev/null)
if [ "$state" = in_sync ]; then
	ktap_test_pass "raid1: the member without poll queues is in sync"
else
	echo "# raid1: the member without poll queues is '${state:-gone}'"
	ktap_test_fail "raid1: the member without poll queues is not in sync"
	mdadm --detail "$dev" | sed 's/^/# /'
	dmesg | tail -n 20 | sed 's/^/# /'
fi
dmp_check_io_poll "raid1 with a member without poll queues" "$dev" 0
dmp_check_eopnotsupp "raid1 with a member without poll queues" "$dev"
ktap_finished
