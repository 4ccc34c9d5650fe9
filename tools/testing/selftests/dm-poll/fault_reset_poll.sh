#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A bio freed, reused and reset with bio_reset() (a bio of fs_bio_set for
# submit_bio_wait(), its ->bi_private an on-stack completion) must not look
# like a poll list to a task that polls it through a stale pointer, as
# io_uring does.  With reset_poll=1 dmp_fault polls such a bio on its own
# disk at every ->poll_bio(): stat_reset_taken counts the polls in which
# the poll list took its ->bi_private for a list, which the series before
# the list states moved off 0 (the cookie bio_reset() leaves) did every
# time.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault_lib.sh"

dmp_require_root
dmpf_require_module
dmp_get_nvme_devs 1
nvme=${DMP_NVME[0]}

ktap_print_header
ktap_set_plan 3
dmpf_load "$nvme" || ktap_exit_fail_msg "cannot load dmp_fault on $nvme"
dmpf_knobs clones=2 reset_poll=1
dmpf_check "reset_poll=1: reset bios polled, none taken for a list" \
	"irqs=0 reset_poll>0 reset_taken=0 polled=clones inflight=0" \
	-s 8M -b 4k-64k -q 8 -S 221
dmpf_knobs clones=4 reset_poll=1 stray_poll=1 delay_us=100
dmpf_check "reset_poll=1 stray_poll=1: none taken for a list" \
	"irqs=0 reset_poll>0 stray>0 reset_taken=0 inflight=0" \
	-s 4M -b 4k-64k -q 16 -S 222
dmpf_check_unload "unload" "$nvme"
ktap_finished
