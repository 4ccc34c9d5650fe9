#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# md's polled reads never hold a mempool reserve that their submitter's
# blocking I/O may wait for.  Once memory is short, md's pools lend their
# reserves (two clones each for io_clone_set and bio_set), and a polled
# read holds what it was lent until its submitter polls.  A thread that
# polls its reads and also writes with a blocking pwrite(), as a database
# writes its log, then sleeps in mempool_alloc() for its write's clone
# while only its own polling could give the reserve back: blk-mq's reaper
# did here (lib.sh's bound, 1 s), the NVMe timeout (30 s) without it.  md
# sends such a read by interrupt, or fails it with BLK_STS_AGAIN before
# anything of it is done, so that io_uring sends it again from io-wq.
# dmp_starve (lend=1) makes a pool's allocator fail for iopoll_verify and
# leaves the reserve to be lent to it; iopoll_verify reads back polled at
# QD8 what an unstarved pass wrote, and writes with a blocking pwrite()
# every 10 ms:
#   1. raid1, bio_set (member clones of reads and writes);
#   2. raid1, io_clone_set (accounting clones);
#   3. raid10 near2, bio_set;
#   4. raid10 near2, io_clone_set;
#   5. raid0, io_clone_set (the clones linear and raid0 send below);
#   6. raid0, the disk's bio_split, 128 KiB reads and writes across 64 KiB
#      chunks: the parts md splits polled bios into, and the split of the
#      write (pwrite() of 128 KiB);
#   7. raid1, bio_set, every read issued by io_uring's workers (IOSQE_ASYNC,
#      without REQ_NOWAIT, io_workers=1): polled reads that may wait;
#   8. linear, io_clone_set;
#   9. raid1, r1bio_pool, and 10. raid10 near2, r10bio_pool: their reserve
#      of 256 outlasts a ring's reads here, so no write would wait; a
#      polled read that drew on it would not end with BLK_STS_AGAIN.
# Every read and write back within 5 s, data verified, none reaped, the
# starved allocator called and, but in case 7, some bios of the array
# ended with BLK_STS_AGAIN (dmp_check_lent).
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds mdadm
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}
dmp_starve_load

ktap_print_header
ktap_set_plan 10

# check_lent DESC POOL SEED BS [IO-WORKERS [OPTION...]]: write the first
# 4 MiB (16 MiB for a BS over 4k) of the array at DMP_NODE (of a and b)
# in BS blocks, assemble it again, and check its POOL lent
# (dmp_check_lent) to a read pass in BS blocks with a blocking write of
# BS every 10 ms and iopoll_verify's OPTIONs; the reads issued inline
# are unwound with BLK_STS_AGAIN.  One KTAP result.
check_lent()
{
	local desc=$1 pool=$2 seed=$3 bs=$4 workers=${5:-0} dev=$DMP_NODE
	local out size=4M

	# 128 I/Os or more, so that the blocking writes meet reads in flight
	[ "$bs" = 4k ] || size=16M
	shift 4
	[ $# -eq 0 ] || shift
	if ! out=$("$DMP_VERIFY" -m write -s "$size" -b "$bs" -q 8 -S "$seed" "$dev" 2>&1); then
		echo "$out" | head -n 5 | sed 's/^/# /'
		ktap_test_fail "$desc: cannot write the array"
		return
	fi
	# Assembled again, with empty per-cpu bio caches: the reads allocate
	if ! out=$({ mdadm --stop "$dev" &&
		mdadm --assemble --run "$dev" "$a" "$b"; } 2>&1) ||
		! dmp_md_settle "$dev"; then
		echo "$out" | head -n 5 | sed 's/^/# /'
		ktap_test_fail "$desc: cannot assemble the array again"
		return
	fi
	dmp_check_lent "$desc" "$dev" "${dev#/dev/}:$pool" "$workers" \
		$((1 - workers)) -m read -s "$size" -b "$bs" -q 8 -S "$seed" \
		-w "10,$bs" -L 5000 -T 120 "$@"
}

dmp_md_create 1 --assume-clean --size=65536 -- "$a" "$b" ||
	ktap_exit_fail_msg "cannot create md raid1"
check_lent "raid1: bio_set lent, polled reads, blocking pwrite()s" bio 81 4k
dmp_cleanup
dmp_md_create 1 --assume-clean --size=65536 -- "$a" "$b" ||
	ktap_exit_fail_msg "cannot create md raid1"
check_lent "raid1: io_clone_set lent, polled reads, blocking pwrite()s" clone 82 4k
dmp_cleanup
dmp_md_create 10 --assume-clean --layout=n2 --size=65536 -- "$a" "$b" ||
	ktap_exit_fail_msg "cannot create md raid10"
check_lent "raid10 near2: bio_set lent, polled reads, blocking pwrite()s" bio 83 4k
dmp_cleanup
dmp_md_create 10 --assume-clean --layout=n2 --size=65536 -- "$a" "$b" ||
	ktap_exit_fail_msg "cannot create md raid10"
check_lent "raid10 near2: io_clone_set lent, polled reads, blocking pwrite()s" clone 87 4k
dmp_cleanup
dmp_md_create 0 --chunk=64 -- "$a" "$b" ||
	ktap_exit_fail_msg "cannot create md raid0"
check_lent "raid0: io_clone_set lent, polled reads, blocking pwrite()s" clone 84 4k
check_lent "raid0: bio_split lent, polled reads and pwrite()s across chunks" \
	split 85 128k
dmp_cleanup
dmp_md_create 1 --assume-clean --size=65536 -- "$a" "$b" ||
	ktap_exit_fail_msg "cannot create md raid1"
check_lent "raid1: bio_set lent, polled reads from io-wq, blocking pwrite()s" \
	bio 86 4k 1 -A
dmp_cleanup
dmp_md_create linear -- "$a" "$b" ||
	ktap_exit_fail_msg "cannot create md linear"
check_lent "linear: io_clone_set lent, polled reads, blocking pwrite()s" clone 88 4k
dmp_cleanup
dmp_md_create 1 --assume-clean --size=65536 -- "$a" "$b" ||
	ktap_exit_fail_msg "cannot create md raid1"
check_lent "raid1: r1bio_pool lent, polled reads, blocking pwrite()s" r1bio 89 4k
dmp_cleanup
dmp_md_create 10 --assume-clean --layout=n2 --size=65536 -- "$a" "$b" ||
	ktap_exit_fail_msg "cannot create md raid10"
check_lent "raid10 near2: r10bio_pool lent, polled reads, blocking pwrite()s" \
	r10bio 90 4k
ktap_finished
