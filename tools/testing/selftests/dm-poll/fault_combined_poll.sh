#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dmp_fault with its knobs combined: polled and unpolled clones of one bio,
# from the submitter and from a workqueue, some failed, some retried after
# BLK_STS_AGAIN, all completed late; knobs changed under the load of four
# rings; stray polls (stray_poll=1) of bios that other rings poll or that
# were reused on another NVMe device; and a lower null_blk device with one
# tag, whose real BLK_STS_AGAIN the module retries.  Every I/O completes
# with the right status and data, within the latency limit; the counters
# show the knobs fired and no clone is left in flight; rmmod leaves
# nothing.  The lower NVMe device may fail REQ_NOWAIT clones with a real
# BLK_STS_AGAIN too, so more clones may be retried than were failed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault_lib.sh"

dmp_require_root
dmpf_require_module
dmp_get_nvme_devs 2
nvme=${DMP_NVME[0]} other=${DMP_NVME[1]}

# dmpf_next_knobs: the next of a few knob sets, changed under load; none
# fails I/O, so the rings verify all of their data.
DMPF_ROUND=0
dmpf_next_knobs()
{
	case $((DMPF_ROUND++ % 4)) in
	0) dmpf_knobs clones=3 wq_every=4 delay_us=300 stray_poll=1 ;;
	1) dmpf_knobs clones=16 nopoll_every=5 fail_every=7 fail_status=again ;;
	2) dmpf_knobs clones=1 ;;
	3) dmpf_knobs clones=5 wq_every=2 nopoll_every=3 fail_every=4 \
		fail_status=again delay_us=1000 ;;
	esac
	sleep 0.3
}

ktap_print_header
ktap_set_plan 10
dmpf_load "$nvme" || ktap_exit_fail_msg "cannot load dmp_fault on $nvme"

dmpf_knobs clones=4 wq_every=5 nopoll_every=7 fail_every=11 fail_status=again \
	delay_us=500
dmpf_check "clones=4 wq_every=5 nopoll_every=7 fail_every=11 again delay_us=500" \
	"irqs>0 wq>0 unpolled>0 failed>0 retried>=failed delayed>0 polled>0 eio=0 inflight=0" \
	-s 8M -b 512-128k -q 16 -S 221
dmpf_knobs clones=8 wq_every=3 nopoll_every=4 fail_every=5 fail_status=eio \
	delay_us=200
dmpf_check "clones=8 wq_every=3 nopoll_every=4 fail_every=5 eio delay_us=200" \
	"failed>0 eio>0 wq>0 unpolled>0 polled>0 inflight=0" \
	-s 8M -b 4k-128k -q 16 -E 5 -S 222
dmpf_knobs clones=6 fail_every=2 fail_status=again delay_us=100
dmpf_check "clones=6 fail_every=2 again delay_us=100, qd32" \
	"failed>0 retried>=failed eio=0 inflight=0" -s 8M -b 4k-64k -q 32 -S 223
# Each knob set runs twice; the rings have stopped when this returns.
dmpf_snapshot
dmp_rings_under_load "knobs changed every 0.3 s" "$DMPF_DEV" 4 8 dmpf_next_knobs
echo "# knobs changed under load: counters:$(dmpf_counters)"
if dmpf_conds "wq>0 unpolled>0 failed>0 retried>=failed delayed>0 stray>0 polled>0 inflight=0"; then
	ktap_test_pass "knobs changed under load fired"
else
	echo "# knobs changed under load: not true:$DMPF_BAD"
	ktap_test_fail "knobs changed under load fired: not all of them"
fi

# Each poll of dmpfault0 also polls the polled bio submitted last, which
# another ring may be polling or submitting, or which was freed and
# reused by the polled I/O on the other NVMe device meanwhile.  It stays
# the one to poll until its first clone finishes, at least 200 us after
# the lower device completed that: with four rings polling, stray polls
# find its links (stray_found) many times over.
dmpf_knobs clones=4 stray_poll=1 delay_us=200 fail_every=9 fail_status=again
dmpf_snapshot
dmp_rings_under_load "stray_poll=1, polled I/O on $other alongside" "$DMPF_DEV" 4 4 \
	"$DMP_VERIFY" -s 4M -b 4k-64k -q 8 -S 225 "$other"
echo "# stray_poll=1: counters:$(dmpf_counters)"
if dmpf_conds "stray>0 stray_found>0 failed>0 retried>=failed polled>0 inflight=0"; then
	ktap_test_pass "stray_poll=1: stray polls counted and found"
else
	echo "# stray_poll=1: not true:$DMPF_BAD"
	ktap_test_fail "stray_poll=1: stray polls counted and found: not all true"
fi
dmpf_check_unload "unload after the load" "$nvme"

# One tag: the lower device fails the REQ_NOWAIT clones it has no tag for
# with BLK_STS_AGAIN, which dmp_fault must retry itself.
if ! dmp_have_nullb; then
	ktap_test_skip "null_blk with one tag: no null_blk"
	ktap_test_skip "unload from null_blk: no null_blk"
elif ! dmp_nullb_create onetag size=64 memory_backed=1 queue_mode=2 poll_queues=1 \
	submit_queues=1 hw_queue_depth=1 || ! dmpf_load "$DMP_NODE" clones=4; then
	ktap_test_fail "null_blk with one tag: cannot set up"
	ktap_test_fail "unload from null_blk: not loaded"
else
	nullb=$DMP_NODE
	dmpf_check "clones=4 on null_blk with one tag, qd16: lower BLK_STS_AGAIN retried" \
		"retried>0 failed=0 eio=0 inflight=0" -s 8M -b 4k-64k -q 16 -S 224
	dmpf_check_unload "unload from null_blk" "$nullb"
fi
ktap_finished
