#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# LVM's layouts, built with lvcreate on partitions of two NVMe
# namespaces, poll as polled-io.rst says their targets do: linear,
# striped, raid1 reads, reads and overwrites of provisioned thin blocks
# with no interrupt from below, and the interrupt-driven control; raid1
# writes by interrupt.  The data is read back from below: a linear LV's
# and a striped LV's first chunk from the disk at the partition's and the
# table's offset, and each raid1 leg; lvchange --syncaction check finds
# the raid1 legs alike.  Snapshots and lvmcache: lvm_snap_cache_poll.sh.
. "$(dirname "$0")/lib.sh"
# shellcheck source=lvm_lib.sh
. "$(dirname "$0")/lvm_lib.sh"

dmp_require_root
lvm_require
ktap_print_header
ktap_set_plan 19
lvm_setup || ktap_exit_fail_msg "cannot build a volume group on partitions"
pa=${LVM_PVS[0]} pb=${LVM_PVS[1]}

# --- linear, on the first PV
lvm_run lvcreate -y -L 32M -n lin "$LVM_VG" "$pa" || ktap_exit_fail_msg "lvcreate linear"
dev=$(lvm_dev lin)
dmp_check_polled "linear: writes and reads 4k-256k, issued inline" "$dev" \
	-W -s 8M -b 4k-256k -q 8 -S 201
read -r _ _ target majmin off < <(dmsetup table "$LVM_VG-lin")
echo "# linear: $target onto $(lvm_node "$majmin") from sector $off"
if [ "$target" = linear ] && [ "$(lvm_node "$majmin")" = "$pa" ]; then
	ktap_test_pass "linear: the table maps the LV onto the partition"
else
	ktap_test_fail "linear: the table maps the LV onto the partition"
fi
read -r disk sector < <(lvm_on_disk "$majmin" "$off")
echo "# linear: that is $disk from sector $sector"
dmp_check_below "linear, read from the disk" "$disk" "$sector" 201 8M
dmp_check_irq "linear" "$dev" -s 8M -b 4k-64k -q 8 -S 202

# --- striped over both PVs, 64 KiB chunks
lvm_run lvcreate -y -i 2 -I 64k -L 32M -n str "$LVM_VG" "$pa" "$pb" ||
	ktap_exit_fail_msg "lvcreate striped"
dev=$(lvm_dev str)
dmp_check_polled "striped: writes and reads 4k-256k across chunks, issued inline" "$dev" \
	-W -s 8M -b 4k-256k -q 8 -S 203
read -r _ _ _ _ _ majmin off _ < <(dmsetup table "$LVM_VG-str")
read -r disk sector < <(lvm_on_disk "$majmin" "$off")
echo "# striped: the first chunk on $disk from sector $sector"
dmp_check_below "striped, its first chunk read from the disk" "$disk" "$sector" 203 64k
dmp_check_irq "striped" "$dev" -s 8M -b 4k-64k -q 8 -S 204

# --- raid1 (dm-raid), one leg on each PV, synced first
lvm_run lvcreate -y --type raid1 -m 1 -L 16M -n r1 "$LVM_VG" "$pa" "$pb" ||
	ktap_exit_fail_msg "lvcreate raid1"
lvm_wait_synced r1 || ktap_exit_fail_msg "the raid1 LV did not sync"
dev=$(lvm_dev r1)
dmp_check_polled_by_irq "raid1: writes 4k-256k" "$dev" -m write -s 8M -b 4k-256k -q 8 -S 211
dmp_check_verified "raid1: leg 0, read directly" "$(lvm_dev r1_rimage_0)" \
	-m read -s 8M -b 64k -S 211
dmp_check_verified "raid1: leg 1, read directly" "$(lvm_dev r1_rimage_1)" \
	-m read -s 8M -b 64k -S 211
lvm_check_mirrors "raid1" r1
# md's superblock and bitmap writes after the writes, by interrupt; the
# bitmap daemon wakes every 5 s
lvm_quiet "$dev" 6
dmp_check_polled "raid1: reads 4k-256k, issued inline" "$dev" \
	-W -m read -s 8M -b 4k-256k -q 8 -S 211
dmp_check_irq "raid1: reads" "$dev" -m read -s 8M -b 4k-64k -q 8 -S 211

# --- a thin pool on the second PV and a thin LV
lvm_run lvcreate -y -L 32M -T "$LVM_VG/pool" -V 32M -n thin "$pb" ||
	ktap_exit_fail_msg "lvcreate thin"
dev=$(lvm_dev thin)
dmp_check_verified "thin: writes 4k-256k to blocks not provisioned" "$dev" \
	-m write -s 8M -b 4k-256k -q 8 -S 221
mapped=$(dmsetup status "$LVM_VG-thin" | awk '{ print $4 }')
echo "# thin: ${mapped:-no} sectors provisioned, 16384 or more expected"
if [ "${mapped:-0}" -ge 16384 ]; then
	ktap_test_pass "thin: the writes provisioned their blocks"
else
	ktap_test_fail "thin: the writes provisioned their blocks"
fi
# the pool's metadata commit, by interrupt
lvm_quiet "$dev"
dmp_check_polled "thin: reads of provisioned blocks, issued inline" "$dev" \
	-W -m read -s 8M -b 4k-256k -q 8 -S 221
dmp_check_polled "thin: overwrites and reads of provisioned blocks, issued inline" "$dev" \
	-W -s 8M -b 4k-256k -q 8 -S 222
dmp_check_irq "thin" "$dev" -m read -s 8M -b 4k-64k -q 8 -S 222

lvm_check_teardown
ktap_finished
