#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DM sends the first clone of a bio that crosses a dm-striped chunk and
# resubmits the rest of the bio, which goes through DM's queue again.  A
# REQ_NOWAIT rest that finds the queue frozen (any queue sysfs store
# freezes it) must not fail with BLK_STS_AGAIN after the first clone was
# sent: io_uring 6.12 posts such a polled bio as a completed read or write
# of full length.  Polled rings across chunks while DM's queue is frozen
# over and over: every I/O must complete with its data.  One stripe is
# dmp_fault, which spins 2 ms in ->submit_bio(), so that a freeze often
# starts between the clone sent and the rest.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault_lib.sh"

dmp_require_root
dmp_require_cmds dmsetup
dmpf_require_module
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

DMP_LOAD_ARGS="-b 4k-128k"

ktap_print_header
ktap_set_plan 2
dmpf_load "$a" || ktap_exit_fail_msg "cannot load dmp_fault on $a"
dmpf_knobs submit_delay_us=2000
dmp_dm_create striped "0 65536 striped 2 64 $DMPF_DEV 0 $b 0" ||
	ktap_exit_fail_msg "cannot create dm-striped over dmp_fault and $b"
dmp_rings_under_load "dm-striped: polled across chunks, queue freezes" \
	"$DMP_NODE" 4 300 dmp_freeze_queue "$DMP_NODE"
dmp_cleanup
dmpf_check_unload "unload" "$a"
ktap_finished
