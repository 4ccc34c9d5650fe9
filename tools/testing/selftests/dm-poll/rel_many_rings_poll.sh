#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Many polled rings on one stacked device at once: 16 processes, each with
# its own ring, write and read back their slices of dm-striped, of
# dm-linear over it and of md raid0, for 10 s each (DMP_FULL=1; 2 s by
# default); then 8 rings on dm and 8 on md at the same time, whose upper
# bios come from the same bio cache, so that a ring polls, through a
# stale pointer, a bio the other driver has linked.  Rings poll each
# other's bios through reused pointers (see dm_rings_poll.sh) and share
# the poll queues.  And 16 rings on dmp_fault, each bio cut into 8
# clones, some sent from a workqueue, with stray polls of the bio
# submitted last.  Every I/O must complete within 5 s, with its data.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault_lib.sh"

dmp_require_root
dmp_require_cmds dmsetup mdadm
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

ktap_print_header
ktap_set_plan 7
dmp_dm_create many-striped "0 131072 striped 2 8 $a 0 $b 0" ||
	ktap_exit_fail_msg "cannot create dm-striped"
striped=$DMP_NODE
dmp_rings_under_load "dm-striped" "$striped" 16 1 sleep "$(dmp_scaled 10)"
dmp_dm_create many-nested "0 131072 linear $striped 0" ||
	ktap_exit_fail_msg "cannot create dm-linear over dm-striped"
dmp_rings_under_load "dm-linear over dm-striped" "$DMP_NODE" 16 1 sleep "$(dmp_scaled 10)"
dmp_cleanup
# md raid0 over two 64 MiB dm-linear members: 8 MiB per ring, as above
# (over the whole namespaces each ring's pass moved 64 MiB, over three
# minutes on the debug kernel).
dmp_dm_create md-m0 "0 131072 linear $a 262144" || ktap_exit_fail_msg "cannot create member"
m0=$DMP_NODE
dmp_dm_create md-m1 "0 131072 linear $b 262144" || ktap_exit_fail_msg "cannot create member"
dmp_md_create 0 --chunk=4 -- "$m0" "$DMP_NODE" || ktap_exit_fail_msg "cannot create md raid0"
dmp_rings_under_load "md raid0" "$DMP_NODE" 16 1 sleep "$(dmp_scaled 10)"
dmp_cleanup

# dm-striped on the first 64 MiB, md raid0 over dm-linear after them.
dmp_dm_create mix-striped "0 131072 striped 2 8 $a 0 $b 0" ||
	ktap_exit_fail_msg "cannot create dm-striped"
striped=$DMP_NODE
dmp_dm_create mix-m0 "0 131072 linear $a 131072" || ktap_exit_fail_msg "cannot create member"
m0=$DMP_NODE
dmp_dm_create mix-m1 "0 131072 linear $b 131072" || ktap_exit_fail_msg "cannot create member"
dmp_md_create 0 --chunk=4 -- "$m0" "$DMP_NODE" || ktap_exit_fail_msg "cannot create md raid0"
dmp_rings_under_load "dm-striped, with md raid0 at once" "$striped" 8 1 \
	dmp_rings_under_load "md raid0, with dm-striped at once" "$DMP_NODE" 8 1 \
		sleep "$(dmp_scaled 10)"
dmp_cleanup

dmpf_under_load "16 rings" "$a" "clones=8 wq_every=9 stray_poll=1" 16 1 sleep "$(dmp_scaled 10)"
ktap_finished
