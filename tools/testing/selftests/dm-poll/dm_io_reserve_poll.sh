#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DM's polled bios never hold the reserve of its io_bs that their
# submitter's blocking I/O may wait for.  Once memory is short, io_bs
# lends its reserve (16 dm_ios with their first clone), and a polled
# dm_io holds what it was lent until its submitter polls it.  A thread
# that polls its reads and also writes with a blocking pwrite(), as a
# database on LVM or LUKS polls its reads and writes its log, then sleeps
# in alloc_io() for its write's dm_io while only its own polling could
# give the reserve back: blk-mq's reaper did here (lib.sh's bound, 1 s),
# the NVMe timeout (30 s) without it.  DM fails such a polled bio with
# BLK_STS_AGAIN before anything of it is done, so that io_uring sends it
# again from io-wq (or, without REQ_NOWAIT, sends it from its worker, by
# interrupt).  dmp_starve (lend=1) makes io_bs's allocator fail for
# iopoll_verify and leaves it the reserve; iopoll_verify reads back
# polled at QD32, more than the reserve, what an unstarved pass wrote,
# and writes with a blocking pwrite() every 10 ms:
#   1. dm-linear over NVMe;
#   2. dm-crypt (cipher_null) over NVMe, whose polled reads are DM's
#      clones;
#   3. dm-linear, every read issued by io_uring's workers (IOSQE_ASYNC,
#      without REQ_NOWAIT, io_workers=1): DM's worker sends those that
#      may hold the reserve.  Here the bios DM's worker sent by interrupt
#      refill the reserve as they complete, so that the previous series
#      passes too: the case covers the worker's path.
# Every read and write back within 5 s, data verified, none reaped, the
# starved allocator called and, but in case 3, some bios of the device
# ended with BLK_STS_AGAIN (dmp_check_lent).
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup
dmp_get_nvme_devs 1
nvme=${DMP_NVME[0]}
modprobe -q crypto_null 2>/dev/null || true
dmp_starve_load

ktap_print_header
ktap_set_plan 3

# check_lent DESC NAME TABLE SEED [IO-WORKERS [OPTION...]]: write the
# first 4 MiB of a new DM device NAME of TABLE, create it again (new
# pools, empty per-cpu bio caches), and check its io_bs lent
# (dmp_check_lent) to a read pass at QD32 with blocking writes and
# iopoll_verify's OPTIONs; the reads issued inline are unwound with
# BLK_STS_AGAIN.  One KTAP result.
check_lent()
{
	local desc=$1 name=$2 table=$3 seed=$4 workers=${5:-0} dev out

	shift 4
	[ $# -eq 0 ] || shift
	dmp_dm_create "$name" "$table" ||
		{ ktap_test_fail "$desc: cannot create the device"; return; }
	if ! out=$("$DMP_VERIFY" -m write -s 4M -b 4k -q 8 -S "$seed" "$DMP_NODE" 2>&1); then
		echo "$out" | head -n 5 | sed 's/^/# /'
		ktap_test_fail "$desc: cannot write the device"
		dmp_dm_remove "$name"
		return
	fi
	if ! dmp_dm_remove "$name" || ! dmp_dm_create "$name" "$table" ||
		! dev=$(readlink -f "$(dmp_sysfs "$DMP_NODE")"); then
		ktap_test_fail "$desc: cannot create the device again"
		return
	fi
	dmp_check_lent "$desc" "$DMP_NODE" "${dev##*/}:io" "$workers" \
		$((1 - workers)) -m read -s 4M -b 4k -q 32 -S "$seed" -w 10 \
		-L 5000 -T 120 "$@"
	dmp_dm_remove "$name"
}

check_lent "dm-linear: io_bs lent, polled reads, blocking pwrite()s" \
	reserve-linear "0 131072 linear $nvme 0" 91
check_lent "dm-crypt: io_bs lent, polled reads, blocking pwrite()s" \
	reserve-crypt "0 131072 crypt cipher_null-ecb - 0 $nvme 0" 92
check_lent "dm-linear: io_bs lent, polled reads from io-wq, blocking pwrite()s" \
	reserve-linear "0 131072 linear $nvme 0" 93 1 -A
ktap_finished
