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
# still completed a read with -EAGAIN after its tail was read: from the
# tail's completion, in interrupt context, where io_uring does not
# reissue it.  The last case counts that this path runs.
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
# interrupt, in rounds, while bios to LOWER ended with BLK_STS_AGAIN
# (dmp_check_again_run).
check_parts_retried()
{
	local desc=$1 below=$2 dev=$3
	shift 3

	dmp_check_again_run "$desc" "$below" "parts that found no tag retried, data verified" \
		"$DMP_VERIFY" -I -Q -L "$DMP_MAX_LAT_MS" "$@" "$dev"
}

# wc_random_reads DEV: fio io_uring random reads by interrupt on DEV, as a
# database reads; fio's complaints, if it fails, as KTAP comments.
wc_random_reads()
{
	local out

	out=$(fio --name=wcread --filename="$1" --direct=1 --ioengine=io_uring --hipri=0 \
		--rw=randread --bsrange=8k-192k --iodepth=32 --size=1M --runtime=5 \
		--time_based --numjobs=1 --output-format=terse --terse-version=3 2>&1) &&
		return 0
	echo "$out" | grep -v '^3;' | head -n 5 | sed 's/^/# /'
	return 1
}

# wc_kprobe NAME PROBE: the kprobe event dmpoll$$/NAME on PROBE (a
# function and its fields), removed when the test exits.
wc_kprobe()
{
	local ev=dmpoll$$/$1

	dmp_trace_instance &&
		echo "p:$ev $2" >>/sys/kernel/tracing/kprobe_events || return 1
	DMP_KPROBES+=("$ev")
}

# check_wc_split_again DESC ORIGIN WC DISK: interrupt-driven io_uring
# reads of each 32 KiB of WC's first MiB, laid out as below: writecache
# accepts the first 4 KiB for ORIGIN, keeping REQ_NOWAIT
# (dm_accept_partial_bio() in its ->map), and DM sends the rest, cached
# blocks, to the cache device on DISK, which completes it by interrupt.
# With one tag on ORIGIN, most first parts end with BLK_STS_AGAIN after
# the rest was sent: DM must send them again, and every read complete
# whole with its data; not with -EAGAIN, which io_uring passes on when it
# comes in interrupt context.  Counted, over up to 3 passes until a part
# has ended with BLK_STS_AGAIN: the REQ_NOWAIT bios writecache accepted
# in part; the 4 KiB bios (parts: every read is 32 KiB) that ended with
# BLK_STS_AGAIN on ORIGIN; the requests of DISK and the io_uring read
# completions in interrupt context (TRACE_FLAG_HARDIRQ or _SOFTIRQ); and,
# only for the comment, the parts DM sent again (dm_io_rewind(), on its
# requeue path).  Fails if the path did not run (no part accepted, none
# ended with BLK_STS_AGAIN, nothing of DISK completed by interrupt), or a
# read completed in task context, where io_uring would reissue an
# -EAGAIN itself and hide it.  One KTAP result.
check_wc_split_again()
{
	local desc=$1 origin=$2 wc=$3 disk=$4 pass passes=0 rc=0 out n
	local accepted=0 again=0 disk_irq=0 irq=0 all=0 retried=0 rewind=1
	local again_f disk_f
	# REQ_NOWAIT, bit 21 of 6.12's bi_opf (offset 16 of struct bio)
	local nowait_f="opf & 0x200000" irq_f="common_flags & 0x18"
	local all_f="res >= -4095"

	if ! again_f=$(dmp_again_filter "$origin") ||
		! disk_f="dev == $(dmp_devt "$disk") && $irq_f" ||
		! wc_kprobe wc_accept "dm_accept_partial_bio opf=+16(\$arg1):u32" ||
		! wc_kprobe wc_uring_irq "io_complete_rw res=\$arg2:s64" ||
		! wc_kprobe wc_uring_all "io_complete_rw res=\$arg2:s64"; then
		ktap_test_fail "$desc: cannot define the events to count"
		return
	fi
	again_f="$again_f && nr_sector == 8"
	wc_kprobe wc_rewind "dm_io_rewind io=\$arg1:x64" || rewind=
	for ((pass = 1; pass <= 3; pass++)); do
		if ! dmp_count_start "dmpoll$$/wc_accept" opf "$nowait_f" ||
			! dmp_count_start block/block_bio_complete dev "$again_f" ||
			! dmp_count_start block/block_rq_complete dev "$disk_f" ||
			! dmp_count_start "dmpoll$$/wc_uring_irq" res "$irq_f" ||
			! dmp_count_start "dmpoll$$/wc_uring_all" res "$all_f" ||
			{ [ -n "$rewind" ] &&
				! dmp_count_start "dmpoll$$/wc_rewind" common_pid "io != 0"; }; then
			ktap_test_fail "$desc: cannot count the events"
			return
		fi
		out=$("$DMP_VERIFY" -I -L "$DMP_MAX_LAT_MS" -m read -s 1M -b 32k -q 32 \
			-S 303 "$wc" 2>&1) || rc=$?
		n=$(dmp_count_stop "dmpoll$$/wc_accept" opf "$nowait_f")
		accepted=$((accepted + n))
		n=$(dmp_count_stop block/block_bio_complete dev "$again_f")
		again=$((again + n))
		n=$(dmp_count_stop block/block_rq_complete dev "$disk_f")
		disk_irq=$((disk_irq + n))
		n=$(dmp_count_stop "dmpoll$$/wc_uring_irq" res "$irq_f")
		irq=$((irq + n))
		n=$(dmp_count_stop "dmpoll$$/wc_uring_all" res "$all_f")
		all=$((all + n))
		if [ -n "$rewind" ]; then
			n=$(dmp_count_stop "dmpoll$$/wc_rewind" common_pid "io != 0")
			retried=$((retried + n))
		fi
		passes=$pass
		if [ "$rc" != 0 ] || [ "$again" -gt 0 ]; then
			break
		fi
	done
	[ -n "$rewind" ] || retried="(not counted)"
	echo "# $desc: $passes of at most 3 passes; writecache accepted $accepted" \
		"REQ_NOWAIT bios in part, $again 4 KiB parts ended with BLK_STS_AGAIN" \
		"on $origin, DM sent $retried parts again; in interrupt context," \
		"$disk_irq requests of the cache device ($disk) and $irq of $all" \
		"io_uring completions"
	if [ "$rc" != 0 ]; then
		head -n 5 <<<"$out" | sed '/^#/!s/^/# /'
		ktap_test_fail "$desc: a read failed (-EAGAIN) or was slow"
	elif [ "$accepted" -eq 0 ]; then
		ktap_test_fail "$desc: writecache accepted no REQ_NOWAIT bio in part"
	elif [ "$again" -eq 0 ]; then
		ktap_test_fail "$desc: no accepted part ended with BLK_STS_AGAIN"
	elif [ "$disk_irq" -eq 0 ]; then
		ktap_test_fail "$desc: the cache device completed nothing by interrupt"
	elif [ "$irq" -eq 0 ] || [ "$irq" -ne "$all" ]; then
		ktap_test_fail "$desc: not every read completed in interrupt context"
	else
		ktap_test_pass "$desc: parts that found no tag retried, data verified"
	fi
}

ktap_print_header
ktap_set_plan 7

dmp_dm_create striped64k "0 131072 striped 2 128 $a 2048 $b 2048" ||
	ktap_exit_fail_msg "cannot create dm-striped"
striped=$DMP_NODE
check_rwf_nowait "dm-striped 64k chunks: RWF_NOWAIT reads across chunks" "$striped" read
check_rwf_nowait "dm-striped 64k chunks: RWF_NOWAIT writes across chunks" "$striped" write
dmp_check_irq "dm-striped 64k chunks: io_uring bios across chunks issued inline" \
	"$striped" -W -s 8M -b 68k-256k -q 8 -S 301

# One tag below: most parts find none.  8 KiB and 64 KiB bios at 4 KiB
# offsets cross 4 KiB chunks (2 and 17 parts), the last of a pass too:
# one cut to the region's end could fit in a chunk and rightly fail
# whole with BLK_STS_AGAIN, which io_uring retries from io-wq, as -W
# would count.
dmp_nullb_create onetag size=64 memory_backed=1 queue_mode=2 submit_queues=1 \
	hw_queue_depth=1 || ktap_exit_fail_msg "cannot create null_blk with one tag"
onetag=$DMP_NODE
dmp_dm_create striped4k "0 131072 striped 2 8 $onetag 0 $onetag 65536" ||
	ktap_exit_fail_msg "cannot create dm-striped over null_blk"
check_parts_retried "dm-striped over null_blk with one tag, io_uring by interrupt, 8 KiB" \
	"$onetag" "$DMP_NODE" -W -o 4k -s 8M -b 8k -q 8 -S 302
check_parts_retried "dm-striped over null_blk with one tag, io_uring by interrupt, 64 KiB" \
	"$onetag" "$DMP_NODE" -W -o 4k -s 8M -b 64k -q 8 -S 304
dmp_dm_remove striped4k || ktap_exit_fail_msg "cannot remove dm-striped"

# dm-writecache splits a read in its map where cached blocks begin, and
# sends the part before them to the origin with REQ_NOWAIT.  Of each
# 32 KiB of the first MiB, the first 4 KiB are on the origin only and
# the other 28 KiB cached (written through writecache over the same
# pattern the origin holds, with O_DSYNC, which commits them; a "flush"
# message would also write them back and free them, and leave no read to
# split).  The origin has one tag held 1 ms: io_uring reads by interrupt,
# random ones as a database reads, must never fail.
dmp_nullb_create slow size=64 memory_backed=1 queue_mode=2 submit_queues=1 \
	hw_queue_depth=1 irqmode=2 completion_nsec=1000000 ||
	ktap_exit_fail_msg "cannot create null_blk"
origin=$DMP_NODE
"$DMP_VERIFY" -I -m write -s 1M -b 64k -q 4 -S 303 "$origin" >/dev/null ||
	ktap_exit_fail_msg "cannot write the origin"
# A cache device whose first block is zeroes: writecache formats it.
dmp_dm_zeroed wcssd "$a" 300000 32768 || ktap_exit_fail_msg "cannot create the cache device"
dmp_dm_create wc "0 131072 writecache s $origin $DMP_NODE 4096 2 autocommit_time 3600000" ||
	ktap_exit_fail_msg "cannot create dm-writecache"
wc=$DMP_NODE
for ((off = 0; off < 1 << 20; off += 32 << 10)); do
	"$DMP_VERIFY" -I -D -m write -o $((off + 4096)) -s 28k -b 28k -q 1 -S 303 "$wc" \
		>/dev/null || ktap_exit_fail_msg "cannot write through dm-writecache"
done
# Status: error, blocks, free blocks...: 32 extents of 7 blocks cached.
read -r _ _ _ _ blocks free _ < <(dmsetup status "${wc#/dev/mapper/}")
echo "# dm-writecache: $((blocks - free)) blocks cached"
[ $((blocks - free)) -eq 224 ] ||
	ktap_exit_fail_msg "dm-writecache holds $((blocks - free)) blocks, not 224"
dmp_check_again_run "dm-writecache, io_uring random reads across cached and uncached blocks" \
	"$origin" "every read done, parts that found no tag retried" wc_random_reads "$wc"
check_wc_split_again "dm-writecache, reads across cached and uncached blocks" \
	"$origin" "$wc" "$a"
ktap_finished
