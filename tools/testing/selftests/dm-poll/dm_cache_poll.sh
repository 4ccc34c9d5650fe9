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
# copied.  A writethrough write to a clean block also goes to the origin,
# in a copy by interrupt: the positive control of the origin's counter.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup dd
dmp_require_nullb
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

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
	dmsetup reload "$1" --table "$3" && dmsetup suspend "$1" &&
		dmsetup resume "$1"
}

ktap_print_header
ktap_set_plan 8
metadata cmeta || ktap_exit_fail_msg "cannot create cache metadata"
cmeta=$DMP_NODE
dmp_dm_create cdata "0 16384 linear $a 810000" || ktap_exit_fail_msg "cannot create cache data"
cdata=$DMP_NODE
dmp_dm_create corig "0 65536 linear $b 800000" || ktap_exit_fail_msg "cannot create origin"
corig=$DMP_NODE
"$DMP_VERIFY" -I -m write -s 16M -b 64k -q 8 -S 171 "$corig" >/dev/null ||
	ktap_exit_fail_msg "cannot write the origin"
dmp_dm_create cache "0 65536 cache $cmeta $cdata $corig 128 1 writeback smq 0" ||
	ktap_exit_fail_msg "cannot create cache"
cache=$DMP_NODE
promote "${cache#/dev/mapper/}" "$cache" \
	"0 65536 cache $cmeta $cdata $corig 128 1 writeback cleaner 0" ||
	ktap_exit_fail_msg "cannot warm the cache"

DMP_IRQ_RE_OVERRIDE=$(dmp_irq_regex "$a" "$b")
hits=$(cache_stat "${cache#/dev/mapper/}" 8)
dmp_check_polled "cache: polled reads of promoted blocks, issued inline" "$cache" \
	-W -m read -s 2M -b 4k-64k -q 8 -S 171
hits=$(($(cache_stat "${cache#/dev/mapper/}" 8) - hits))
if [ "$hits" -gt 0 ]; then
	ktap_test_pass "cache: $hits read hits counted"
else
	ktap_test_fail "cache: no read hit counted: the reads went to the origin"
fi
misses=$(cache_stat "${cache#/dev/mapper/}" 9)
dmp_check_polled "cache: polled reads of blocks not cached, issued inline" "$cache" \
	-W -m read -o 8M -s 8M -b 4k-64k -q 8 -S 171
misses=$(($(cache_stat "${cache#/dev/mapper/}" 9) - misses))
if [ "$misses" -gt 0 ]; then
	ktap_test_pass "cache: $misses read misses counted"
else
	ktap_test_fail "cache: no read miss counted"
fi
# Writes to blocks not cached go to the origin, polled; dirtying cached
# blocks commits metadata on the first namespace, so count the second.
DMP_IRQ_RE_OVERRIDE=$(dmp_irq_regex "$b")
dmp_check_polled "cache: polled writes to blocks not cached" "$cache" \
	-W -o 8M -s 8M -b 4k-64k -q 8 -S 172
dmp_check_irq "cache: interrupt driven" "$cache" -o 8M -s 4M -b 4k-64k -q 8 -S 173

metadata wtmeta || ktap_exit_fail_msg "cannot create cache metadata"
wtmeta=$DMP_NODE
dmp_dm_create wtdata "0 16384 linear $a 840000" || ktap_exit_fail_msg "cannot create cache data"
wtdata=$DMP_NODE
dmp_dm_create wtorig "0 65536 linear $b 900000" || ktap_exit_fail_msg "cannot create origin"
wtorig=$DMP_NODE
"$DMP_VERIFY" -I -m write -s 16M -b 64k -q 8 -S 171 "$wtorig" >/dev/null ||
	ktap_exit_fail_msg "cannot write the origin"
dmp_dm_create wtcache "0 65536 cache $wtmeta $wtdata $wtorig 128 1 writethrough smq 0" ||
	ktap_exit_fail_msg "cannot create a writethrough cache"
wtcache=$DMP_NODE
promote "${wtcache#/dev/mapper/}" "$wtcache" \
	"0 65536 cache $wtmeta $wtdata $wtorig 128 1 writethrough cleaner 0" ||
	ktap_exit_fail_msg "cannot warm the cache"
dmp_check_polled_by_irq "cache: writethrough writes to clean cached blocks copy to the origin" \
	"$wtcache" -W -m write -s 2M -b 4k-64k -q 8 -S 174
dmp_check_table polled "cache: the writethrough writes, read from the origin" \
	"0 4096 linear $wtorig 0" -m read -s 2M -b 4k-64k -q 8 -S 174
ktap_finished
