#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dmp_fault on an NVMe namespace with poll queues, one knob at a time:
# every clone linked and polled (no interrupt) however many clones a bio
# is cut into; clones sent from a workqueue or without REQ_POLLED complete
# by interrupt; injected errors reach the CQE as -EIO; an injected
# BLK_STS_AGAIN is retried from a worker, so the I/O succeeds with its
# data; completions held back by delay_us are waited for by the poller.
# The module's counters show each knob fired, and that no clone is left in
# flight after; rmmod leaves nothing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault_lib.sh"

dmp_require_root
dmpf_require_module
dmp_get_nvme_devs 1
nvme=${DMP_NVME[0]}
args=(-s 8M -b 4k-64k -q 8)

ktap_print_header
ktap_set_plan 12
dmpf_load "$nvme" || ktap_exit_fail_msg "cannot load dmp_fault on $nvme"
dmp_check_io_poll "dmpfault0 on $nvme" "$DMPF_DEV" 1

dmpf_knobs clones=1
dmpf_check "clones=1" "irqs=0 linked=clones polled=clones inflight=0" \
	"${args[@]}" -S 201
dmpf_knobs clones=4
dmpf_check "clones=4, 512B-64k" \
	"irqs=0 clones>ios linked=clones polled=clones inflight=0" \
	-s 8M -b 512-64k -q 8 -S 202
dmpf_knobs clones=16
dmpf_check "clones=16, 512B-8k: as many clones as blocks" \
	"irqs=0 clones>ios polled=clones inflight=0" -s 4M -b 512-8k -q 8 -S 203
dmpf_knobs clones=2 wq_every=3
dmpf_check "clones=2 wq_every=3" "irqs>0 wq>0 linked<clones inflight=0" \
	"${args[@]}" -S 204
dmpf_knobs clones=2 nopoll_every=3
dmpf_check "clones=2 nopoll_every=3" \
	"irqs>0 unpolled>0 linked<clones inflight=0" "${args[@]}" -S 205
dmpf_knobs clones=2 fail_every=5 fail_status=eio
dmpf_check "clones=2 fail_every=5 eio: -EIO in the CQEs" \
	"irqs=0 failed>0 eio>0 inflight=0" "${args[@]}" -E 5 -S 206
dmpf_knobs clones=1 fail_every=1 fail_status=eio
dmpf_check "fail_every=1 eio: every I/O fails with EIO" \
	"irqs=0 failed>0 inflight=0" -s 1M -b 4k-16k -q 8 -e 5 -S 207
dmpf_knobs clones=2 fail_every=3 fail_status=again
dmpf_check "clones=2 fail_every=3 again: retried, no error, data lands" \
	"irqs>0 failed>0 retried>=failed eio=0 inflight=0" "${args[@]}" -S 208
dmpf_knobs clones=2 delay_us=3000
dmpf_check "clones=2 delay_us=3000: the poller waits" \
	"irqs=0 delayed=clones polled=clones maxlat>2999 inflight=0" \
	-s 2M -b 4k-64k -q 8 -S 209
dmpf_knobs clones=4 delay_us=2000
dmpf_check "clones=4 delay_us=2000, interrupt driven: delayed work completes" \
	"irqs>0 linked=0 delayed=clones maxlat>1999 inflight=0" \
	-s 2M -b 4k-64k -q 8 -I -S 210
dmpf_check_unload "unload" "$nvme"
ktap_finished
