#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bcache, a bio-based stacking driver, does not poll: it builds bios of
# its own for the cache and the backing device, and has no ->poll_bio().
# It must refuse polled I/O cleanly: queue/io_poll 0 and EOPNOTSUPP at
# once, while interrupt-driven I/O works.  The backing device is a slice
# of the first NVMe namespace, the cache a slice of the second.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup make-bcache
dmp_require_module bcache
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

# bcache_stop: stop the bcache device and its cache set, if any, before
# the dm slices below them go.
bcache_stop()
{
	local set

	[ -n "${bdev:-}" ] && [ -e "/sys/block/$bdev/bcache/stop" ] &&
		echo 1 >"/sys/block/$bdev/bcache/stop"
	for set in /sys/fs/bcache/*-*; do
		[ -e "$set/stop" ] && echo 1 >"$set/stop"
	done
	sleep 1
}
DMP_EXIT_CMDS+=(bcache_stop)

ktap_print_header
ktap_set_plan 5
dmp_dm_create backing "0 131072 linear $a 1000000" || ktap_exit_fail_msg "cannot create backing"
backing=$DMP_NODE
dmp_dm_create cache "0 131072 linear $b 1000000" || ktap_exit_fail_msg "cannot create cache"
cache=$DMP_NODE
dd if=/dev/zero of="$backing" bs=1M count=1 oflag=direct status=none
dd if=/dev/zero of="$cache" bs=1M count=1 oflag=direct status=none
make-bcache --bucket 32k -B "$backing" -C "$cache" >/dev/null ||
	ktap_exit_fail_msg "make-bcache failed"
for dev in "$cache" "$backing"; do
	echo "$dev" >/sys/fs/bcache/register ||
		ktap_exit_fail_msg "cannot register the cache and backing devices with bcache"
done
# The bcache device whose slave is the backing device.
lower_disk=$(basename "$(readlink -f "$(dmp_sysfs "$backing")")")
bdev=
for ((i = 0; i < 50; i++)); do
	for d in /sys/block/bcache*; do
		[ -e "$d/slaves/$lower_disk" ] && bdev=${d##*/}
	done
	[ -n "$bdev" ] && break
	sleep 0.1
done
[ -b "/dev/${bdev:-none}" ] || ktap_exit_fail_msg "no bcache device over the backing device"
state=/sys/block/$bdev/bcache/state
for ((i = 0; i < 50; i++)); do
	[ "$(cat "$state")" = clean ] && break
	sleep 0.1
done
[ "$(cat "$state")" = clean ] ||
	ktap_exit_fail_msg "bcache: the cache did not attach (state $(cat "$state"))"
ktap_print_msg "/dev/$bdev over $backing, cache $cache attached"

dmp_check_io_poll "bcache" "/dev/$bdev" 0
dmp_check_eopnotsupp "bcache" "/dev/$bdev"
if "$DMP_VERIFY" -I -s 8M -b 4k-128k -q 8 -S 181 "/dev/$bdev"; then
	ktap_test_pass "bcache: interrupt-driven I/O works, data verified"
else
	ktap_test_fail "bcache: interrupt-driven I/O failed"
fi
# The same data from below: bcache's data starts 8 KiB into the backing
# device (writethrough: every write reaches it), which bcache holds open.
dmp_check_table polled "bcache: the data on the backing device" \
	"0 16384 linear $a 1000016" -m read -s 8M -b 4k-64k -q 8 -S 181
# And a read of what the cache holds, again through bcache, by interrupt.
if "$DMP_VERIFY" -I -m read -s 8M -b 4k-64k -q 8 -S 181 "/dev/$bdev"; then
	ktap_test_pass "bcache: interrupt-driven reads after caching, data verified"
else
	ktap_test_fail "bcache: interrupt-driven reads after caching failed"
fi
ktap_finished
