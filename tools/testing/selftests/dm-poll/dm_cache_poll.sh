#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dm-cache (lvmcache) keeps polled I/O polled: hits go to the cache
# device and misses to the origin, both remapped at once, and cache takes
# REQ_NOWAIT bios, so io_uring issues them inline.  The cache's data
# lives on the first NVMe namespace, the origin on the second, and the
# metadata, which cache commits every second, on a memory-backed null_blk.
# The data is written to the origin from below and read back through the
# cache after blocks were promoted, so hits check what the promotion
# copied; which device served a pass is read from its I/O statistics.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup dd
dmp_require_nullb
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}
irq_a=$(dmp_irq_regex "$a") irq_b=$(dmp_irq_regex "$b")
[ "$irq_a" != "$irq_b" ] || ktap_exit_fail_msg "$a and $b share their interrupts"

# metadata NAME: a zeroed memory-backed null_blk for cache metadata.
metadata()
{
	dmp_nullb_create "$1" size=16 memory_backed=1 queue_mode=2 || return 1
	dd if=/dev/zero of="$DMP_NODE" bs=1M count=1 oflag=direct status=none
}

# cache_stat NAME FIELD: a field of the cache's status line: 8 read hits,
# 9 read misses, 10 write hits, 11 write misses, 13 promotions.
cache_stat()
{
	dmsetup status "$1" | awk -v f="$2" '{ split($f, v, "/"); print v[1] }'
}

# sectors DEV read|written: sectors DEV (a dm device) has read or written.
sectors()
{
	awk -v w="$2" '{ print w == "read" ? $3 : $7 }' "$(dmp_sysfs "$1")/stat"
}

# promote NAME DEV TABLE: read the first 4 MiB of DEV by interrupt until
# the cache promoted at least 32 of its blocks, then load TABLE, the same
# with the cleaner policy: it keeps the blocks cached and moves none,
# while smq would go on promoting (by interrupt, with kcopyd).  The
# suspend waits for the migrations in flight.
promote()
{
	local i

	for ((i = 0; i < 60; i++)); do
		"$DMP_VERIFY" -I -m read -s 4M -b 64k -q 8 -S 171 "$2" >/dev/null ||
			return 1
		[ "$(cache_stat "$1" 13)" -ge 32 ] && break
	done
	echo "# $1: $(cache_stat "$1" 13) promotions after $((i + 1)) passes"
	[ "$(cache_stat "$1" 13)" -ge 32 ] || return 1
	dmsetup reload "$1" --table "$3" && dmsetup suspend "$1" &&
		dmsetup resume "$1"
}

# check_served DESC FROM NOTFROM FIELD BEFORE...: after a pass, FROM must
# have read more, NOTFROM not, and the cache's status FIELD have grown.
# FROM and NOTFROM are "ROLE=DEV", the role for the result's name.
check_served()
{
	local desc=$1 from=${2#*=} notfrom=${3#*=} field=$4 f0=$5 n0=$6 s0=$7 f n s
	local name="$1: read from the ${2%%=*}, none from the ${3%%=*}, counted"

	f=$(($(sectors "$from" read) - f0))
	n=$(($(sectors "$notfrom" read) - n0))
	s=$(($(cache_stat "${cache#/dev/mapper/}" "$field") - s0))
	echo "# $desc: $f sectors from $from, $n from $notfrom, counted $s"
	if [ "$f" -gt 0 ] && [ "$n" -eq 0 ] && [ "$s" -gt 0 ]; then
		ktap_test_pass "$name"
	else
		ktap_test_fail "$name: not so"
	fi
}

# cache_build P DATA-OFFSET ORIGIN-OFFSET MODE: a cache in MODE named Pcache
# over Pmeta (null_blk), Pdata (8 MiB of $a) and Porig (32 MiB of $b,
# written from below), warmed by promote(); sets meta, data, orig, cache.
cache_build()
{
	metadata "${1}meta" || ktap_exit_fail_msg "cannot create cache metadata"
	meta=$DMP_NODE
	dmp_dm_create "${1}data" "0 16384 linear $a $2" ||
		ktap_exit_fail_msg "cannot create cache data"
	data=$DMP_NODE
	dmp_dm_create "${1}orig" "0 65536 linear $b $3" ||
		ktap_exit_fail_msg "cannot create origin"
	orig=$DMP_NODE
	"$DMP_VERIFY" -I -m write -s 16M -b 64k -q 8 -S 171 "$orig" >/dev/null ||
		ktap_exit_fail_msg "cannot write the origin"
	dmp_dm_create "${1}cache" "0 65536 cache $meta $data $orig 128 1 $4 smq 0" ||
		ktap_exit_fail_msg "cannot create a $4 cache"
	cache=$DMP_NODE
	promote "${cache#/dev/mapper/}" "$cache" \
		"0 65536 cache $meta $data $orig 128 1 $4 cleaner 0" ||
		ktap_exit_fail_msg "cannot warm the cache"
}

ktap_print_header
ktap_set_plan 14
cache_build c 810000 800000 writeback
cdata=$data corig=$orig

DMP_IRQ_RE_OVERRIDE="$irq_a|$irq_b"
set -- "$(sectors "$cdata" read)" "$(sectors "$corig" read)" \
	"$(cache_stat "${cache#/dev/mapper/}" 8)"
dmp_check_polled "cache: polled reads of promoted blocks, issued inline" "$cache" \
	-W -m read -s 4M -b 4k-64k -q 8 -S 171
f0=$1 s0=$3
set -- "$(sectors "$cdata" read)" "$(sectors "$corig" read)" \
	"$(cache_stat "${cache#/dev/mapper/}" 9)"
echo "# cache: hits read $(($1 - f0)) sectors from the cache device"
if [ $(($1 - f0)) -gt 0 ] && [ $(($(cache_stat "${cache#/dev/mapper/}" 8) - s0)) -gt 0 ]; then
	ktap_test_pass "cache: hits read from the cache device"
else
	ktap_test_fail "cache: no hit read from the cache device"
fi
dmp_check_polled "cache: polled reads of blocks not cached, issued inline" "$cache" \
	-W -m read -o 8M -s 8M -b 4k-64k -q 8 -S 171
check_served "cache: misses" "origin=$corig" "cache device=$cdata" 9 "$2" "$1" "$3"

misses=$(cache_stat "${cache#/dev/mapper/}" 11)
dmp_check_polled "cache: polled writes to blocks not cached" "$cache" \
	-W -m write -o 8M -s 8M -b 4k-64k -q 8 -S 172
misses=$(($(cache_stat "${cache#/dev/mapper/}" 11) - misses))
echo "# cache: $misses write misses counted"
if [ "$misses" -gt 0 ]; then
	ktap_test_pass "cache: write misses counted"
else
	ktap_test_fail "cache: no write miss counted"
fi
dmp_check_table polled "cache: the writes, read from the origin" \
	"0 65536 linear $corig 0" -m read -o 8M -s 8M -b 4k-64k -q 8 -S 172
# O_DSYNC writes are REQ_FUA: cache sends them after a metadata commit,
# from its worker, without the submitter waiting.
dmp_check_verified "cache: polled O_DSYNC writes, issued inline" "$cache" \
	-D -W -o 8M -s 4M -b 4k-64k -q 8 -S 175
dmp_check_irq "cache: interrupt driven" "$cache" -o 8M -s 4M -b 4k-64k -q 8 -S 173

cache_build wt 840000 900000 writethrough
wtmeta=$meta wtdata=$data wtorig=$orig wtcache=$cache
# A writethrough write to a clean cached block also goes to the origin, in
# a copy by interrupt; the write to the cache device is polled.
before_a=$(dmp_irqs "$irq_a") before_b=$(dmp_irqs "$irq_b")
if ! "$DMP_VERIFY" -W -m write -s 4M -b 4k-64k -q 8 -S 174 "$wtcache"; then
	ktap_test_fail "cache: writethrough polled writes failed"
else
	ia=$(($(dmp_irqs "$irq_a") - before_a)) ib=$(($(dmp_irqs "$irq_b") - before_b))
	echo "# cache: writethrough writes: $ia cache, $ib origin interrupts"
	if [ "$ia" -eq 0 ] && [ "$ib" -gt 0 ]; then
		ktap_test_pass "cache: writethrough writes polled, interrupts from the copies"
	else
		echo "# cache: writethrough writes: want 0 cache and some origin interrupts"
		ktap_test_fail "cache: writethrough writes polled, interrupts from the copies"
	fi
fi
DMP_IRQ_RE_OVERRIDE="$irq_a|$irq_b"
dmp_check_polled "cache: the writethrough writes, read back through the cache" \
	"$wtcache" -W -m read -s 4M -b 4k-64k -q 8 -S 174
dmp_check_table polled "cache: the writethrough writes, read from the origin" \
	"0 8192 linear $wtorig 0" -m read -s 4M -b 4k-64k -q 8 -S 174
# Passthrough: writes to cached blocks invalidate them, which the worker
# does for a REQ_NOWAIT bio; the data goes to the origin.
if ! dmsetup reload "${wtcache#/dev/mapper/}" --table \
	"0 65536 cache $wtmeta $wtdata $wtorig 128 1 passthrough cleaner 0" ||
	! dmp_dm_suspend_resume "${wtcache#/dev/mapper/}"; then
	ktap_exit_fail_msg "cannot switch the cache to passthrough"
fi
dmp_check_verified "cache: passthrough polled writes to cached blocks, issued inline" \
	"$wtcache" -W -m write -s 4M -b 4k-64k -q 8 -S 176
dmp_check_table polled "cache: the passthrough writes, read from the origin" \
	"0 8192 linear $wtorig 0" -m read -s 4M -b 4k-64k -q 8 -S 176
ktap_finished
