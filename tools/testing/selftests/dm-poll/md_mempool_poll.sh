#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# md's submission never waits for a mempool reserve where its submitter
# must not sleep.  Under memory pressure md's clones and per-bio state come
# from the reserves of its mempools, and the elements a submitter's polled
# bios hold return only when that submitter polls: io_uring's ring task,
# issuing a REQ_NOWAIT bio inline or the parts of a split polled bio,
# would wait for its own polling.  md must allocate those without waiting
# and unwind: a whole REQ_NOWAIT bio fails with BLK_STS_AGAIN before
# anything of it is done (io_uring sends it again from io-wq), a part of a
# split polled bio is sent from md's worker.
# dmp_starve starves one pool of a new array for fio's ring task: the
# pool's allocator fails for it and its reserve is taken.  fio writes and
# verifies with polled io_uring; its sleeps in the submit path are counted
# (dmp_submit_sleeps), with the bios md ended with BLK_STS_AGAIN and the
# parts it deferred.  A submitter that may wait does so until the
# starvation ends, after 20 s.
#   1. raid0, 128 KiB across chunks: md_account_bio_to()'s clones of parts;
#   2. linear, 4 KiB: md_account_bio_to()'s clones of whole bios;
#   3-5. raid1: r1bio_pool, md_account_bio()'s clones (reads and writes),
#      the member clones of reads (bio_set; a read-only pass over what an
#      unstarved pass wrote: writes' member clones still wait, md.rst);
#   6-8. raid10 near2: the same.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds mdadm fio awk
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}
dmp_starve_load
STARVE_S=20

ktap_print_header
ktap_set_plan 8

# fio_run DEV FIO-OPTION...: I/O to DEV, data verified.
fio_run()
{
	local dev=$1
	shift

	fio --name=starve --filename="$dev" --direct=1 --size=8m \
		--verify=crc32c --verify_fatal=1 "$@" \
		--output-format=terse --terse-version=3 >/tmp/fio.terse 2>&1 &&
		awk -F';' '$1 == 3 && $5 != 0 { bad = 1 } END { exit bad }' /tmp/fio.terse
}

# starved_run DEV POOL FIO-OPTION...: fio_run, polled io_uring at QD8, with
# POOL of DEV starved for fio, for STARVE_S seconds at most.
starved_run()
{
	local dev=$1 pool=$2 watchdog rc=0
	shift 2

	echo fio >"$DMP_STARVE/comm" && echo "${dev#/dev/}:$pool" >"$DMP_STARVE/pool" ||
		return 1
	(sleep "$STARVE_S"; dmp_starve_feed) &
	watchdog=$!
	SECONDS=0
	fio_run "$dev" --ioengine=io_uring --hipri=1 --iodepth=8 "$@" || rc=$?
	kill "$watchdog" 2>/dev/null
	wait "$watchdog" 2>/dev/null
	dmp_starve_feed
	echo "$SECONDS" >/tmp/fio.seconds
	return "$rc"
}

# check_starved DESC DEV POOL UNWIND FIO-OPTION...: fio, its POOL of DEV
# starved, slept 0 times in the submit path, md unwound some of its bios
# as UNWIND says ("again": ended with BLK_STS_AGAIN, "deferred": sent
# from md's worker, counted by its runs), and every one was done and
# verified.  One KTAP result.
check_starved()
{
	local desc=$1 dev=$2 pool=$3 unwind=$4 filter again defer deferred n
	local starved rc=0
	shift 4

	starved=$(cat "$DMP_STARVE/stat_starved")
	if ! filter=$(dmp_again_filter "$dev") ||
		! dmp_count_start block/block_bio_complete dev "$filter" ||
		! dmp_kprobe_calls md_polled_part_work; then
		ktap_test_fail "$desc: cannot count md's bios"
		return
	fi
	defer=$DMP_KPROBE_EV
	n=$(dmp_submit_sleeps fio starved_run "$dev" "$pool" "$@") || rc=$?
	again=$(dmp_count_stop block/block_bio_complete dev "$filter")
	deferred=$(dmp_count_stop "$defer" common_pid "common_pid >= 0")
	starved=$(($(cat "$DMP_STARVE/stat_starved") - starved))
	echo "# $desc: $starved allocations starved, ${n:-uncounted} sleeps in" \
		"the submit path, ${again:-0} bios ended with BLK_STS_AGAIN," \
		"${deferred:-0} runs of md's worker for parts; fio took" \
		"$(cat /tmp/fio.seconds 2>/dev/null) s"
	if [ "$rc" != 0 ]; then
		sed 's/^/# /' /tmp/dmp-submit-sleeps.out /tmp/fio.terse | tail -3
		ktap_test_fail "$desc: I/O failed"
	elif [ "${n:-x}" != 0 ]; then
		ktap_test_fail "$desc: slept in the submit path"
	elif [ "$starved" -eq 0 ]; then
		ktap_test_fail "$desc: fio never allocated from the starved pool"
	elif [ "$unwind" = again ] && [ "${again:-0}" -eq 0 ]; then
		ktap_test_fail "$desc: starved, but md failed no bio with BLK_STS_AGAIN"
	elif [ "$unwind" = deferred ] && [ "${deferred:-0}" -eq 0 ]; then
		ktap_test_fail "$desc: starved, but md deferred no part to its worker"
	else
		ktap_test_pass "$desc: no sleep in the submit path, data verified"
	fi
}

# check_md LEVEL NAME STATE-POOL MDADM-OPTION...: cases 3-5 or 6-8, on a
# new array each, which no io_uring has used: md's bio caches are empty.
check_md()
{
	local level=$1 name=$2 state=$3 pool
	shift 3

	for pool in "$state" clone; do
		dmp_md_create "$level" --assume-clean "$@" -- "$a" "$b" ||
			ktap_exit_fail_msg "cannot create md $name"
		check_starved "$name: $pool starved, reads and writes" "$DMP_NODE" \
			"$pool" again --rw=randrw --bs=4k
		dmp_cleanup
	done
	dmp_md_create "$level" --assume-clean "$@" -- "$a" "$b" ||
		ktap_exit_fail_msg "cannot create md $name"
	if ! fio_run "$DMP_NODE" --ioengine=psync --rw=randwrite --bs=4k \
		--do_verify=0; then
		ktap_test_fail "$name: bio starved: cannot write the data"
	else
		check_starved "$name: bio starved, reads" "$DMP_NODE" bio again \
			--rw=randwrite --bs=4k --verify_only=1
	fi
	dmp_cleanup
}

dmp_md_create 0 --chunk=64 -- "$a" "$b" ||
	ktap_exit_fail_msg "cannot create md raid0"
check_starved "raid0: clone starved, parts across chunks" "$DMP_NODE" clone \
	deferred --rw=randrw --bs=128k
dmp_cleanup
dmp_md_create linear -- "$a" "$b" ||
	ktap_exit_fail_msg "cannot create md linear"
check_starved "linear: clone starved, whole bios" "$DMP_NODE" clone again \
	--rw=randrw --bs=4k
dmp_cleanup
check_md 1 raid1 r1bio --size=65536
check_md 10 raid10 r10bio --layout=n2 --size=65536
ktap_finished
