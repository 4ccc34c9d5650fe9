#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# LVM's snapshots and lvmcache on partitions of two NVMe namespaces poll
# as polled-io.rst says: a classic snapshot's and its origin's reads,
# lvmcache (writethrough) hits, misses and reads of what it wrote, with
# no interrupt from below, and the interrupt-driven control; writes to
# the origin that need a copy and the writethrough copies to the cache's
# origin by interrupt.  The cache's origin is read back directly.
. "$(dirname "$0")/lib.sh"
# shellcheck source=lvm_lib.sh
. "$(dirname "$0")/lvm_lib.sh"

dmp_require_root
lvm_require
ktap_print_header
ktap_set_plan 13
lvm_setup || ktap_exit_fail_msg "cannot build a volume group on partitions"
pa=${LVM_PVS[0]} pb=${LVM_PVS[1]}

# --- a classic snapshot of a linear LV, its exceptions on the second PV
lvm_run lvcreate -y -L 32M -n orig "$LVM_VG" "$pa" || ktap_exit_fail_msg "lvcreate origin"
"$DMP_VERIFY" -m write -s 8M -b 64k -S 231 "$(lvm_dev orig)" >/dev/null ||
	ktap_exit_fail_msg "cannot write the origin"
lvm_run lvcreate -y -s -L 8M -n snap "$LVM_VG/orig" "$pb" ||
	ktap_exit_fail_msg "lvcreate snapshot"
orig=$(lvm_dev orig) snap=$(lvm_dev snap)
dmp_check_polled "snapshot: reads of the origin, issued inline" "$orig" \
	-W -m read -s 8M -b 4k-256k -q 8 -S 231
dmp_check_polled_by_irq "snapshot: writes to the origin, copied first" "$orig" \
	-m write -s 4M -b 4k-64k -q 8 -S 232
lvm_quiet "$orig"
dmp_check_polled "snapshot: reads of the snapshot, copied chunks and shared, issued inline" \
	"$snap" -W -m read -s 8M -b 4k-256k -q 8 -S 231
dmp_check_polled "snapshot: the origin's new data, issued inline" "$orig" \
	-W -m read -s 4M -b 4k-64k -q 8 -S 232
dmp_check_irq "snapshot: reads of the snapshot" "$snap" -m read -s 8M -b 4k-64k -q 8 -S 231

# --- lvmcache: a cache pool on the second PV in front of a linear LV on
# the first, writethrough
if ! lvm_run lvcreate -y -L 32M -n corig "$LVM_VG" "$pa" ||
	! lvm_run lvcreate -y --type cache -L 16M -n cpool --cachemode writethrough \
		--cachepolicy smq "$LVM_VG/corig" "$pb"; then
	ktap_exit_fail_msg "lvcreate cache"
fi
dev=$(lvm_dev corig)
read -r _ _ _ _ _ majmin _ < <(dmsetup table "$LVM_VG-corig")
corigin=$(lvm_node "$majmin")
# cache_stat FIELD: 8 read hits, 13 promotions (dmsetup status)
cache_stat()
{
	dmsetup status "$LVM_VG-corig" | awk -v f="$1" '{ split($f, v, "/"); print v[1] }'
}
"$DMP_VERIFY" -I -m write -s 4M -b 64k -S 241 "$dev" >/dev/null ||
	ktap_exit_fail_msg "cannot write through the cache"
# Read the first 4 MiB until smq promoted half of it, then the cleaner
# policy: the blocks stay cached, no promotion copies by interrupt.
for ((i = 0; i < 40; i++)); do
	"$DMP_VERIFY" -I -m read -s 4M -b 64k -q 8 -S 241 "$dev" >/dev/null ||
		ktap_exit_fail_msg "cannot read through the cache"
	[ "$(cache_stat 13)" -lt 32 ] || break
done
echo "# cache: $(cache_stat 13) promotions after $((i + 1)) passes"
[ "$(cache_stat 13)" -ge 32 ] || ktap_exit_fail_msg "the cache promoted nothing"
lvm_run lvchange --cachepolicy cleaner "$LVM_VG/corig" ||
	ktap_exit_fail_msg "lvchange --cachepolicy cleaner"
lvm_quiet "$dev"
hits=$(cache_stat 8)
dmp_check_polled "cache: reads of cached blocks, issued inline" "$dev" \
	-W -m read -s 4M -b 4k-64k -q 8 -S 241
hits=$(($(cache_stat 8) - hits))
echo "# cache: $hits read hits counted"
if [ "$hits" -gt 0 ]; then
	ktap_test_pass "cache: the reads were cache hits"
else
	ktap_test_fail "cache: the reads were cache hits"
fi
dmp_check_polled "cache: writes and reads of blocks not cached, issued inline" "$dev" \
	-W -o 8M -s 8M -b 4k-64k -q 8 -S 242
dmp_check_polled_by_irq "cache: writethrough writes to cached blocks" "$dev" \
	-m write -s 4M -b 4k-64k -q 8 -S 243
lvm_quiet "$dev"
dmp_check_polled "cache: the writethrough writes, read through the cache" "$dev" \
	-W -m read -s 4M -b 4k-64k -q 8 -S 243
dmp_check_verified "cache: the writethrough writes, read from the origin directly" \
	"$corigin" -m read -s 4M -b 64k -S 243
dmp_check_irq "cache" "$dev" -m read -s 4M -b 4k-64k -q 8 -S 243

lvm_check_teardown
ktap_finished
