#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# REQ_NOWAIT bios that DM splits, by interrupt: the ones every io_uring
# user sends and preadv2()/pwritev2() with RWF_NOWAIT.  DM sends the first
# part with REQ_NOWAIT and the rest without; a part that fails with
# BLK_STS_AGAIN is retried by DM from its worker, so the bio completes
# whole and is never failed with -EAGAIN after any part of it was done.
# The series failed such bios whole with -EAGAIN before sending any part
# instead: RWF_NOWAIT I/O across a chunk never succeeded, io_uring took
# every one through io-wq, and dm-writecache, which splits in its map,
# still completed a read with -EAGAIN after its tail was read.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup fio
dmp_require_nullb
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

# check_rwf_nowait DESC DEV RW: fio pvsync2 with RWF_NOWAIT, 128 KiB bios
# at 128 KiB offsets of DEV, each across a chunk: no I/O may fail.
check_rwf_nowait()
{
	local out

	if out=$(fio --name=nowait --filename="$2" --direct=1 --ioengine=pvsync2 \
		--nowait=1 --rw="$3" --bs=128k --size=8M --numjobs=1 \
		--output-format=terse --terse-version=3 2>&1); then
		ktap_test_pass "$1: every I/O done, none failed with EAGAIN"
	else
		echo "$out" | grep -v '^3;' | head -n 5 | sed 's/^/# /'
		ktap_test_fail "$1: I/O failed"
	fi
}

# check_parts_retried DESC LOWER DEV VERIFY-ARGS...: verified I/O on DEV by
# interrupt while bios to LOWER ended with BLK_STS_AGAIN (dmp_check_again_run).
check_parts_retried()
{
	local desc=$1 below=$2 dev=$3
	shift 3

	dmp_check_again_run "$desc" "$below" "parts that found no tag retried, data verified" \
		"$DMP_VERIFY" -I -L "$DMP_MAX_LAT_MS" "$@" "$dev"
}

# wc_random_reads DEV: fio io_uring random reads by interrupt on DEV, as a
# database reads; fio's complaints, if it fails, as KTAP comments.
wc_random_reads()
{
	local out

	out=$(fio --name=wcread --filename="$1" --direct=1 --ioengine=io_uring --hipri=0 \
		--rw=randread --bsrange=8k-192k --iodepth=32 --size=4M --runtime=5 \
		--time_based --numjobs=1 --output-format=terse --terse-version=3 2>&1) &&
		return 0
	echo "$out" | grep -v '^3;' | head -n 5 | sed 's/^/# /'
	return 1
}

ktap_print_header
ktap_set_plan 6

dmp_dm_create striped64k "0 131072 striped 2 128 $a 2048 $b 2048" ||
	ktap_exit_fail_msg "cannot create dm-striped"
striped=$DMP_NODE
check_rwf_nowait "dm-striped 64k chunks: RWF_NOWAIT reads across chunks" "$striped" read
check_rwf_nowait "dm-striped 64k chunks: RWF_NOWAIT writes across chunks" "$striped" write
dmp_check_irq "dm-striped 64k chunks: io_uring bios across chunks issued inline" \
	"$striped" -W -s 8M -b 68k-256k -q 8 -S 301

# One tag below: the first part of most bios finds none.  8 KiB and more
# across 4 KiB chunks, every bio is split.
dmp_nullb_create onetag size=64 memory_backed=1 queue_mode=2 submit_queues=1 \
	hw_queue_depth=1 || ktap_exit_fail_msg "cannot create null_blk with one tag"
onetag=$DMP_NODE
dmp_dm_create striped4k "0 131072 striped 2 8 $onetag 0 $onetag 65536" ||
	ktap_exit_fail_msg "cannot create dm-striped over null_blk"
check_parts_retried "dm-striped over null_blk with one tag, io_uring by interrupt" \
	"$onetag" "$DMP_NODE" -W -s 8M -b 8k-64k -q 8 -S 302
dmp_dm_remove striped4k || ktap_exit_fail_msg "cannot remove dm-striped"

# dm-writecache splits a read in its map where cached blocks begin, and
# sends the part before them to the origin with REQ_NOWAIT.  Every other
# 64 KiB extent is cached (written through writecache over the same
# pattern the origin holds), the origin has one tag held 1 ms: io_uring
# random reads by interrupt, as a database reads, must never fail.
dmp_nullb_create slow size=64 memory_backed=1 queue_mode=2 submit_queues=1 \
	hw_queue_depth=1 irqmode=2 completion_nsec=1000000 ||
	ktap_exit_fail_msg "cannot create null_blk"
origin=$DMP_NODE
"$DMP_VERIFY" -I -m write -s 4M -b 64k -q 4 -S 303 "$origin" >/dev/null ||
	ktap_exit_fail_msg "cannot write the origin"
# A cache device whose first block is zeroes: writecache formats it.
dmp_dm_zeroed wcssd "$a" 300000 32768 || ktap_exit_fail_msg "cannot create the cache device"
dmp_dm_create wc "0 131072 writecache s $origin $DMP_NODE 4096 2 autocommit_time 3600000" ||
	ktap_exit_fail_msg "cannot create dm-writecache"
wc=$DMP_NODE
for ((off = 0; off < 4 << 20; off += 128 << 10)); do
	"$DMP_VERIFY" -I -m write -o "$off" -s 64k -b 64k -q 1 -S 303 "$wc" >/dev/null ||
		ktap_exit_fail_msg "cannot write through dm-writecache"
done
dmsetup message "${wc#/dev/mapper/}" 0 flush || ktap_exit_fail_msg "cannot commit dm-writecache"
dmp_check_again_run "dm-writecache, io_uring random reads across cached and uncached blocks" \
	"$origin" "every read done, parts that found no tag retried" wc_random_reads "$wc"
check_parts_retried "dm-writecache, reads across cached and uncached blocks" \
	"$origin" "$wc" -m read -s 4M -b 8k-192k -q 32 -S 303
ktap_finished
