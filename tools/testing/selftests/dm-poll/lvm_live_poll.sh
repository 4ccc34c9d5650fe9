#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# LVM changes a linear LV's table under polled load, as operators do on
# live volumes: pvmove to the other PV (through a temporary dm-mirror),
# lvextend onto the other PV, lvconvert to raid1 (--type raid1 -m 1,
# dm-raid, with a resync).  Two rings write and read back their own data
# all along; what was written before is read back after, polled, and
# from below: the disk the LV moved to, the new extents, each raid1 leg;
# lvchange --syncaction check finds the legs alike.
. "$(dirname "$0")/lib.sh"
# shellcheck source=lvm_lib.sh
. "$(dirname "$0")/lvm_lib.sh"

dmp_require_root
lvm_require
ktap_print_header
ktap_set_plan 16
lvm_setup || ktap_exit_fail_msg "cannot build a volume group on partitions"
pa=${LVM_PVS[0]} pb=${LVM_PVS[1]}
# The first 8 MiB of each LV hold what was written before; the rings
# load what follows.
DMP_LOAD_BASE=$((8 << 20))

# linear_lv NAME SIZE SEED: a linear LV on the first PV, its first 8 MiB
# written with SEED; DEV gets its node.
linear_lv()
{
	lvm_run lvcreate -y -L "$2" -n "$1" "$LVM_VG" "$pa" &&
		DEV=$(lvm_dev "$1") &&
		"$DMP_VERIFY" -m write -s 8M -b 64k -S "$3" "$DEV" >/dev/null
}

# --- pvmove: the LV's table goes onto pvmove's mirror and back
linear_lv mv 32M 301 || ktap_exit_fail_msg "cannot create a linear LV"
dev=$DEV
dmp_rings_under_load "pvmove of a linear LV to the other PV" "$dev" 2 1 \
	lvm_run pvmove -i 1 -n "$LVM_VG/mv" "$pa" "$pb"
where=$(lvm_field mv devices)
echo "# pvmove: the LV is on '$where', $pb expected"
if [ "${where%%(*}" = "$pb" ] && [ "${where#*,}" = "$where" ]; then
	ktap_test_pass "pvmove: the LV is on the other PV"
else
	ktap_test_fail "pvmove: the LV is on the other PV"
fi
dmp_check_polled "pvmove: the data written before, issued inline" "$dev" \
	-W -m read -s 8M -b 4k-256k -q 8 -S 301
read -r _ _ _ majmin off < <(dmsetup table "$LVM_VG-mv")
read -r disk sector < <(lvm_on_disk "$majmin" "$off")
echo "# pvmove: the LV is on $disk from sector $sector"
dmp_check_below "pvmove: the data written before, read from the other disk" \
	"$disk" "$sector" 301 8M

# --- lvextend onto the other PV: a second segment
linear_lv ext 16M 311 || ktap_exit_fail_msg "cannot create a linear LV"
dev=$DEV
dmp_rings_under_load "lvextend of a linear LV onto the other PV" "$dev" 2 1 \
	lvm_run lvextend -y -L 32M "$LVM_VG/ext" "$pb"
n=$(dmp_sectors "$dev")
echo "# lvextend: $n sectors, table: $(dmsetup table "$LVM_VG-ext" | xargs)"
if [ "$n" = 65536 ] && [ "$(dmsetup table "$LVM_VG-ext" | wc -l)" = 2 ]; then
	ktap_test_pass "lvextend: the LV has 32 MiB in two segments"
else
	ktap_test_fail "lvextend: the LV has 32 MiB in two segments"
fi
dmp_check_polled "lvextend: the data written before, issued inline" "$dev" \
	-W -m read -s 8M -b 4k-256k -q 8 -S 311
dmp_check_polled "lvextend: writes and reads of the new extents, issued inline" "$dev" \
	-W -o 16M -s 16M -b 4k-256k -q 8 -S 312
read -r _ _ _ majmin off < <(dmsetup table "$LVM_VG-ext" | sed -n 2p)
read -r disk sector < <(lvm_on_disk "$majmin" "$off")
if "$DMP_VERIFY" -L "$DMP_MAX_LAT_MS" -m read -o $((sector * 512)) -s 16M \
	-P $((32768 - sector)) -S 312 "$disk" >/dev/null; then
	ktap_test_pass "lvextend: the new extents' data is on the other disk at the table's sectors"
else
	ktap_test_fail "lvextend: the new extents' data is on the other disk at the table's sectors"
fi

# --- lvconvert of a linear LV to raid1: rmeta and a second leg added,
# the table swapped from linear to raid, a resync under the load
linear_lv cv 32M 321 || ktap_exit_fail_msg "cannot create a linear LV"
dev=$DEV
dmp_rings_under_load "lvconvert --type raid1 -m 1 of a linear LV" "$dev" 2 1 \
	lvm_run lvconvert -y --type raid1 -m 1 "$LVM_VG/cv" "$pb"
segtype=$(lvm_field cv segtype)
echo "# lvconvert: the LV is '$segtype'"
if [ "$segtype" = raid1 ] && lvm_wait_synced cv; then
	ktap_test_pass "lvconvert: the LV is raid1, in sync"
else
	ktap_test_fail "lvconvert: the LV is raid1, in sync"
fi
lvm_quiet "$dev" 6
dmp_check_polled "lvconvert: the data written before, raid1 reads, issued inline" "$dev" \
	-W -m read -s 8M -b 4k-256k -q 8 -S 321
dmp_check_verified "lvconvert: the data written before, read from the first leg directly" \
	"$(lvm_dev cv_rimage_0)" -m read -s 8M -b 64k -S 321
dmp_check_verified "lvconvert: the data written before, read from the new leg directly" \
	"$(lvm_dev cv_rimage_1)" -m read -s 8M -b 64k -S 321
lvm_check_mirrors "lvconvert" cv

lvm_check_teardown
ktap_finished
