#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dm-writecache (lvmcache's writecache) in SSD mode takes REQ_NOWAIT bios,
# so io_uring issues I/O to it inline.  Reads of blocks not cached go to
# the origin polled; writes and reads of cached blocks go to the cache
# device by interrupt, as writecache waits for them holding its lock: a
# blocking read of a block whose polled write is still in flight must not
# wait for that write.  A REQ_NOWAIT read of a block whose write is not
# committed, while writes are in flight, would wait for them: it fails with
# BLK_STS_AGAIN and DM retries it, counted.  The cache lives on the first
# NVMe namespace, the origin on the second; the origin is written and read
# from below.  Commits (metadata, by interrupt) happen only when the test
# asks for them.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup dd
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}
irq_a=$(dmp_irq_regex "$a")
DMP_IRQ_RE_OVERRIDE="$irq_a|$(dmp_irq_regex "$b")"

# sectors DEV read|written: sectors DEV (a dm device) has read or written.
sectors()
{
	awk -v w="$2" '{ print w == "read" ? $3 : $7 }' "$(dmp_sysfs "$1")/stat"
}

# check_served DESC FROM NOTFROM BEFORE-FROM BEFORE-NOTFROM read|written:
# FROM ("ROLE=DEV") moved sectors since, NOTFROM none.  One KTAP result.
check_served()
{
	local from=${2#*=} notfrom=${3#*=} f n
	local name="$1: ${6} the ${2%%=*}, not the ${3%%=*}"

	f=$(($(sectors "$from" "$6") - $4))
	n=$(($(sectors "$notfrom" "$6") - $5))
	echo "# $1: $f sectors $6 by the ${2%%=*}, $n by the ${3%%=*}"
	if [ "$f" -gt 0 ] && [ "$n" -eq 0 ]; then
		ktap_test_pass "$name"
	else
		ktap_test_fail "$name: not so"
	fi
}

# cleaned NAME: commit writecache NAME, switch it to cleaner mode and wait
# up to 60 s until it wrote every block back (all its blocks are free).
cleaned()
{
	local i status

	dmsetup message "$1" 0 flush && dmsetup message "$1" 0 cleaner || return 1
	for ((i = 0; i < 600; i++)); do
		status=$(dmsetup status "$1") || return 1
		awk '{ exit !($5 == $6 && $7 == 0) }' <<<"$status" && return 0
		sleep 0.1
	done
	echo "# $1: not written back in 60 s: $status"
	return 1
}

ktap_print_header
ktap_set_plan 14
dmp_kprobe_bio_status || ktap_exit_fail_msg "cannot count bio statuses"
dmp_dm_zeroed wcssd "$a" 300000 32768 || ktap_exit_fail_msg "cannot create the cache device"
ssd=$DMP_NODE
dmp_dm_create wcorig "0 65536 linear $b 300000" || ktap_exit_fail_msg "cannot create the origin"
orig=$DMP_NODE
"$DMP_VERIFY" -I -m write -s 32M -b 64k -q 8 -S 181 "$orig" >/dev/null ||
	ktap_exit_fail_msg "cannot write the origin"
table="0 65536 writecache s $orig $ssd 4096 4 autocommit_blocks 65536 autocommit_time 3600000"
dmp_dm_create wc "$table" || ktap_exit_fail_msg "cannot create writecache"
wc=$DMP_NODE name=${wc#/dev/mapper/}

set -- "$(sectors "$orig" read)" "$(sectors "$ssd" read)"
dmp_check_polled "writecache: polled reads of blocks not cached, issued inline" "$wc" \
	-W -m read -s 8M -b 4k-64k -q 8 -S 181
check_served "writecache: misses" "origin=$orig" "cache device=$ssd" "$@" read

# The cache device's writes complete by interrupt, from it alone.
set -- "$(sectors "$ssd" written)" "$(sectors "$orig" written)"
DMP_IRQ_RE_OVERRIDE=$irq_a
dmp_check_mode "writecache: polled writes, issued inline, to the cache device" irq "$wc" \
	"$DMP_VERIFY" -L "$DMP_MAX_LAT_MS" -W -m write -o 16M -s 4M -b 4k-64k -q 8 -S 182 "$wc"
check_served "writecache: writes" "cache device=$ssd" "origin=$orig" "$@" written

# A suspend commits them; the "flush" message would also write them back.
dmp_dm_suspend_resume "$name" || ktap_exit_fail_msg "cannot commit the cache"
set -- "$(sectors "$ssd" read)" "$(sectors "$orig" read)"
dmp_check_mode "writecache: polled reads of cached blocks, issued inline" irq "$wc" \
	"$DMP_VERIFY" -L "$DMP_MAX_LAT_MS" -W -m read -o 16M -s 4M -b 4k-64k -q 8 -S 182 "$wc"
check_served "writecache: hits" "cache device=$ssd" "origin=$orig" "$@" read
DMP_IRQ_RE_OVERRIDE="$irq_a|$(dmp_irq_regex "$b")"
dmp_check_irq "writecache" "$wc" -o 16M -s 4M -b 4k-64k -q 8 -S 183

# O_DSYNC writes are REQ_FUA: writecache commits after they completed, in
# its flush thread, which then completes them.
dmp_check_verified "writecache: polled O_DSYNC writes, issued inline" "$wc" \
	-D -W -o 20M -s 2M -b 4k-64k -q 8 -S 184

# Written back, the writes are on the origin at the table's sectors.
if cleaned "$name"; then
	ktap_test_pass "writecache: written back in cleaner mode"
else
	ktap_test_fail "writecache: written back in cleaner mode"
fi
if "$DMP_VERIFY" -m read -o 16M -s 4M -S 183 -L "$DMP_MAX_LAT_MS" "$orig"; then
	ktap_test_pass "writecache: the writes are on the origin at the table's sectors"
else
	ktap_test_fail "writecache: the writes are not on the origin at the table's sectors"
fi

# Writeback, commits and suspends (which commit) under polled load over
# the whole device, eight times the cache: the writes fill the cache, wait
# for writeback and go around it.
dmp_dm_remove wc || ktap_exit_fail_msg "cannot remove writecache"
dmp_dm_zeroed wcssd2 "$a" 340000 8192 || ktap_exit_fail_msg "cannot create the cache device"
dmp_dm_create wc2 "0 65536 writecache s $orig $DMP_NODE 4096 0" ||
	ktap_exit_fail_msg "cannot create writecache"
wc=$DMP_NODE
dmp_rings_under_load "writecache: suspend and resume" "$wc" 2 3 \
	dmp_after_pause 0.5 dmp_dm_suspend_resume "${wc#/dev/mapper/}"

# The rest runs over a cache device that is a null_blk whose requests
# take 20 ms, polled or by interrupt: the writes are still in flight when
# the reads come.
slow1="writecache: blocking read of a block a polled write has in flight"
slow2="writecache: polled reads of uncommitted blocks, writes in flight"
slow3="writecache: reads of uncommitted blocks retried"
if ! dmp_have_nullb; then
	ktap_test_skip "$slow1"
	ktap_test_skip "$slow2"
	ktap_test_skip "$slow3"
	ktap_finished
fi
dmp_dm_remove wc2 || ktap_exit_fail_msg "cannot remove writecache"
dmp_nullb_create wcslow size=64 memory_backed=1 queue_mode=2 poll_queues=1 \
	irqmode=2 completion_nsec=20000000 || ktap_exit_fail_msg "cannot create null_blk"
dmp_dm_create wc3 "0 65536 writecache s $orig $DMP_NODE 4096 2 autocommit_time 3600000" ||
	ktap_exit_fail_msg "cannot create writecache"
wc=$DMP_NODE name=${wc#/dev/mapper/}

# A blocking read of a block whose polled write is in flight, by the task
# that alone would poll that write: writecache waits for the writes in
# flight before it reads an uncommitted block.  The read must be the one
# hit writecache counts (its status: reads, read hits).
read -r r0 h0 < <(dmsetup status "$name" | awk '{ print $8, $9 }')
"$DMP_VERIFY" -B -W -m write -s 1M -b 4k -q 16 -S 185 -L "$DMP_MAX_LAT_MS" "$wc" && rc=0 || rc=$?
read -r r1 h1 < <(dmsetup status "$name" | awk '{ print $8, $9 }')
echo "# $slow1: writecache counted $((r1 - r0)) reads, $((h1 - h0)) hits"
if [ "$rc" = 0 ] && [ $((r1 - r0)) = 1 ] && [ $((h1 - h0)) = 1 ]; then
	ktap_test_pass "$slow1"
else
	ktap_test_fail "$slow1"
fi

# Not committed yet, while writes are in flight elsewhere: each polled read
# of these blocks fails with BLK_STS_AGAIN (12) at first, before anything
# is sent; DM's worker sends it again, by interrupt, and it waits for the
# writes.  The writer goes through io-wq (-A), without REQ_NOWAIT: its
# bios cannot end with BLK_STS_AGAIN.
"$DMP_VERIFY" -W -m write -o 2M -s 1M -b 4k -q 8 -S 186 -L "$DMP_MAX_LAT_MS" "$wc" >/dev/null ||
	ktap_exit_fail_msg "cannot write the blocks to read"
ready=/tmp/dmp-wc.$$.ready
"$DMP_VERIFY" -A -m write -o 8M -s 8M -b 4k -q 8 -S 187 -R "$ready" "$wc" >/dev/null &
DMP_LOAD_PIDS+=($!)
for ((i = 0; i < 100; i++)); do
	[ ! -e "$ready" ] || break
	sleep 0.1
done
rm -f "$ready"
dmp_count_start "$DMP_BIO_STATUS_EV" status "status == 12"
# A retried read waits, holding writecache's lock, for every write in
# flight, 20 ms each: up to seconds, queued behind the others.
if "$DMP_VERIFY" -m read -o 2M -s 1M -b 4k -q 8 -S 186 -L 10000 "$wc"; then
	ktap_test_pass "$slow2"
else
	ktap_test_fail "$slow2"
fi
n=$(dmp_count_stop "$DMP_BIO_STATUS_EV" status "status == 12")
dmp_kill_loads
# Each of the 256 reads once; a few more from the lock's trylock.
echo "# $slow3: $n bios ended with BLK_STS_AGAIN, of 256 reads"
if [ "${n:-0}" -ge 128 ]; then
	ktap_test_pass "$slow3"
else
	ktap_test_fail "$slow3"
fi
ktap_finished
