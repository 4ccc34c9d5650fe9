#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Requeue under polled load: a noflush suspend makes thin push back the
# bios waiting for its pool's worker, to provision a block or to break
# its sharing with a snapshot (BLK_STS_DM_REQUEUE); DM requeues them and
# sends them, by interrupt, after resume.  Each suspend takes a new
# snapshot of the thin device (and deletes the one before), so that the
# writes after it share their blocks and the next suspend finds some
# held; cycles suspend again (up to 40 times) until bios have been
# pushed back.  Every I/O must complete, with its data.  Over a
# device with one tag, interrupt-driven REQ_NOWAIT bios also fail with
# BLK_STS_AGAIN below: those DM's worker resends must not (io_uring does
# not retry them from there).
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup dd
dmp_require_nullb
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

# The bios thin pushes back end with BLK_STS_DM_REQUEUE (11).
requeued="status == 11"

# check_count DESC EVENT KEY FILTER WHAT: the events counted since
# dmp_count_start EVENT KEY FILTER, which must have happened.
check_count()
{
	local n

	n=$(dmp_count_stop "$2" "$3" "$4")
	echo "# $1: ${n:-0} $5"
	if [ "${n:-0}" -gt 0 ]; then
		ktap_test_pass "$1: $5"
	else
		ktap_test_fail "$1: $5"
	fi
}

ktap_print_header
ktap_set_plan 5
dmp_kprobe_bio_status || ktap_exit_fail_msg "cannot count bio statuses"
# The metadata behind dm-delay (20 ms): the pool's worker, which
# provisions blocks and commits, is slow enough that the suspends find
# bios waiting for it.
if ! dmp_dm_zeroed tmeta "$a" 500000 8192 ||
	! dmp_dm_create tmetadelay "0 8192 delay $DMP_NODE 0 20" ||
	! dmp_dm_create pool "0 262144 thin-pool $DMP_NODE $b 128 0 1 skip_block_zeroing"; then
	ktap_exit_fail_msg "cannot create thin-pool"
fi
pool=$DMP_NODE
dmsetup message "$pool" 0 "create_thin 1" || ktap_exit_fail_msg "cannot create thin 1"
dmp_dm_create thin1 "0 131072 thin $pool 1" || ktap_exit_fail_msg "cannot create thin 1"
thin1=$DMP_NODE

# thin1_noflush: a noflush suspend of thin1 (thin 1 of pool $pool), a
# snapshot of it meanwhile (thin snaps+1), the one before deleted.
snaps=0
thin1_noflush()
{
	local rc=0

	dmp_dm_suspend "${thin1#/dev/mapper/}" --noflush || return 1
	snaps=$((snaps + 1))
	dmsetup message "$pool" 0 "create_snap $((snaps + 1)) 1" || rc=1
	[ "$snaps" = 1 ] || dmsetup message "$pool" 0 "delete $snaps" || rc=1
	dmsetup resume "${thin1#/dev/mapper/}" || rc=1
	return "$rc"
}

# thin1_until_requeued: thin1_noflush, then more of them, 0.3 s apart,
# until a requeue has been counted since dmp_count_start; 40 more at most
# in a test (suspends during the load's read-back passes find no bio
# waiting for the pool's worker).
thin1_until_requeued()
{
	local n=1

	thin1_noflush || return 1
	while [ "$(dmp_count_peek "$DMP_BIO_STATUS_EV")" = 0 ] && [ "$extra" -lt 40 ]; do
		sleep 0.3
		thin1_noflush || return 1
		n=$((n + 1)) extra=$((extra + 1))
	done
	echo "# noflush suspends in this cycle: $n"
}
extra=0
dmp_count_start "$DMP_BIO_STATUS_EV" status "$requeued"
dmp_under_load "thin: noflush suspend while blocks are provisioned" "$thin1" \
	thin1_until_requeued
check_count "thin: noflush suspend while blocks are provisioned" \
	"$DMP_BIO_STATUS_EV" status "$requeued" "bios pushed back and requeued"

dmp_nullb_create onetag size=128 memory_backed=1 queue_mode=2 poll_queues=1 \
	submit_queues=1 hw_queue_depth=1 || ktap_exit_fail_msg "cannot create null_blk with one tag"
onetag=$DMP_NODE
dmp_dm_create tmeta2 "0 8192 linear $a 520000" || ktap_exit_fail_msg "cannot create metadata"
dd if=/dev/zero of="$DMP_NODE" bs=1M count=4 oflag=direct status=none
dmp_dm_create pool2 "0 262144 thin-pool $DMP_NODE $onetag 128 0 1 skip_block_zeroing" ||
	ktap_exit_fail_msg "cannot create the second thin-pool"
dmsetup message "${DMP_NODE#/dev/mapper/}" 0 "create_thin 1" ||
	ktap_exit_fail_msg "cannot create thin 1 in the second pool"
pool=$DMP_NODE snaps=0 extra=0
dmp_dm_create thin2 "0 131072 thin $pool 1" || ktap_exit_fail_msg "cannot create thin 2"
thin1=$DMP_NODE
again=$(dmp_again_filter "$onetag") || ktap_exit_fail_msg "cannot build the BLK_STS_AGAIN filter"
dmp_count_start "$DMP_BIO_STATUS_EV" status "$requeued"
dmp_count_start block/block_bio_complete dev "$again"
DMP_LOAD_ARGS=-I dmp_under_load "thin over one tag, interrupt driven: noflush suspend" \
	"$thin1" thin1_until_requeued
check_count "thin over one tag, interrupt driven" \
	"$DMP_BIO_STATUS_EV" status "$requeued" "bios pushed back and requeued"
# The load's writes mostly wait for the pool's worker (snapshots): reads
# issued inline at QD8 over the one tag, beside the ring's slice, make
# sure some REQ_NOWAIT bios find no tag.
"$DMP_VERIFY" -I -m rw -o 40M -s 8M -b 4k-64k -q 8 -S 167 -L 5000 "$thin1" >/dev/null ||
	ktap_test_fail "thin over one tag, interrupt driven: I/O beside the load"
check_count "thin over one tag, interrupt driven" \
	block/block_bio_complete dev "$again" "bios to the null_blk ended with BLK_STS_AGAIN"
ktap_finished
