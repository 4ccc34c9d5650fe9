# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers of the LVM tests: a volume group over the second partition of
# each of two NVMe namespaces, built and taken down with lvm2 as an
# operator does, without udev or lvm's daemons (use_lvmpolld=0,
# monitoring=0, udev_sync=0 and udev_rules=0 in lvm.conf; lvm and
# libdevmapper create the nodes themselves).  Source after lib.sh.

# lvm warns about every file descriptor a command inherits (the TAP pipes).
export LVM_SUPPRESS_FD_WARNINGS=1
LVM_VG=dmpvg$$
# Partition 1: 64 MiB after the first MiB, unused; the PV is partition 2,
# from 65 MiB to the end.
LVM_P2_START=133120
LVM_DISKS=()
LVM_PVS=()
LVM_VG_MADE=

# lvm_require: the tools, two NVMe namespaces with poll queues, or skip.
lvm_require()
{
	dmp_require_cmds lvm sfdisk dmsetup blockdev
	dmp_get_nvme_devs 2
}

# lvm_run CMD...: an lvm command, quiet; its output as diagnostics if it
# fails.
lvm_run()
{
	local out

	if ! out=$("$@" 2>&1); then
		echo "# $*: failed"
		echo "#   ${out//$'\n'/$'\n'#   }"
		return 1
	fi
}

# lvm_part DISK N: the node of partition N of DISK.
lvm_part()
{
	case $1 in
	*[0-9]) echo "${1}p$2" ;;
	*) echo "$1$2" ;;
	esac
}

# lvm_setup: two partitions on each NVMe namespace of DMP_NVME, a PV on
# each second one and the volume group LVM_VG over both PVs; LVM_PVS
# holds the PVs.  Taken down when the test exits.  The checks of lib.sh
# count the interrupts of both namespaces (DMP_IRQ_RE_OVERRIDE).
lvm_setup()
{
	local d p i

	dmp_on_exit lvm_teardown
	for d in "${DMP_NVME[@]}"; do
		LVM_DISKS+=("$d")
		dd if=/dev/zero of="$d" bs=1M count=1 oflag=direct status=none || return 1
		printf 'start=2048, size=131072, type=83\nstart=%s, type=8e\n' \
			"$LVM_P2_START" | lvm_run sfdisk -q -X dos "$d" || return 1
		p=$(lvm_part "$d" 2)
		# devtmpfs creates the node on the partition's uevent.
		i=0
		while [ ! -b "$p" ] && [ $((i++)) -lt 50 ]; do
			sleep 0.1
		done
		[ -b "$p" ] || { echo "# $p did not appear"; return 1; }
		# No signature of an earlier test's md array or filesystem.
		dd if=/dev/zero of="$p" bs=1M count=1 oflag=direct status=none || return 1
		LVM_PVS+=("$p")
	done
	lvm_run vgcreate -y -s 4M "$LVM_VG" "${LVM_PVS[@]}" || return 1
	LVM_VG_MADE=1
	# Every LV is counted against both namespaces' interrupts: nothing
	# else does I/O there, and the walk down each LV's stack is slow.
	DMP_IRQ_RE_OVERRIDE=$(dmp_irq_regex "${DMP_NVME[@]}")
}

# lvm_teardown: remove the volume group (its LVs with it), the PVs and the
# partition tables; then no dm device of the group may be left.  Fails
# with what is left.
lvm_teardown()
{
	local d n left pass rc=0

	[ "${#LVM_DISKS[@]}" -gt 0 ] || return 0
	if [ -n "$LVM_VG_MADE" ]; then
		lvm_run vgremove -f -y "$LVM_VG" || rc=1
		LVM_VG_MADE=
	fi
	# What lvm could not take down, lower devices last.
	for ((pass = 0; pass < 3; pass++)); do
		left=$(dmsetup ls | awk -v p="$LVM_VG-" 'index($1, p) == 1 { print $1 }')
		[ -z "$left" ] && break
		rc=1
		for n in $left; do
			dmsetup remove --retry "$n" >/dev/null 2>&1
		done
	done
	[ -z "$left" ] || echo "# cleanup: dm devices left: ${left//$'\n'/ }"
	[ "${#LVM_PVS[@]}" = 0 ] || lvm_run pvremove -y -ff "${LVM_PVS[@]}" || rc=1
	for d in "${LVM_DISKS[@]}"; do
		dd if=/dev/zero of="$d" bs=1M count=1 oflag=direct status=none
		blockdev --rereadpt "$d" || { echo "# cleanup: $d: partitions in use"; rc=1; }
		[ ! -e "$(lvm_part "$d" 1)" ] ||
			{ echo "# cleanup: $d still has partitions"; rc=1; }
	done
	LVM_DISKS=() LVM_PVS=()
	return "$rc"
}

# lvm_check_teardown: one KTAP result for lvm_teardown.
lvm_check_teardown()
{
	if lvm_teardown; then
		ktap_test_pass "teardown: vgremove, pvremove, partitions wiped, no dm device left"
	else
		ktap_test_fail "teardown: something was left behind"
	fi
}

# lvm_dev LV: the node of LV of LVM_VG.
lvm_dev()
{
	echo "/dev/mapper/$LVM_VG-$1"
}

# lvm_field LV FIELD...: lvs fields of LV, blanks squeezed.
lvm_field()
{
	local lv=$1 f

	shift
	f=$(IFS=,; echo "$*")
	lvs --noheadings --nosuffix -o "$f" "$LVM_VG/$lv" | xargs
}

# lvm_node MAJ:MIN: the /dev node of a block device.
lvm_node()
{
	echo "/dev/$(sed -n 's/^DEVNAME=//p' "/sys/dev/block/$1/uevent")"
}

# lvm_on_disk MAJ:MIN SECTOR: SECTOR of the device MAJ:MIN as "DISK
# SECTOR" of the whole disk, where the device is a partition.
lvm_on_disk()
{
	local sys=/sys/dev/block/$1 sector=$2

	if [ -e "$sys/partition" ]; then
		sector=$((sector + $(cat "$sys/start")))
		sys=$(readlink -f "$sys")
		sys=${sys%/*}
	fi
	echo "/dev/${sys##*/} $sector"
}

# lvm_quiet DEV [SECONDS]: wait until the devices below DEV raised no
# interrupt for SECONDS (default 2), at most 60 s: what lvm and the
# targets write on their own (metadata commits, md's superblock and
# bitmap, with the bitmap daemon's 5 s period) is done before a polled
# run counts interrupts.
lvm_quiet()
{
	local re n prev still=0 i want=$((${2:-2} * 5))

	re=${DMP_IRQ_RE_OVERRIDE:-$(dmp_irq_regex "$1")}
	prev=$(dmp_irqs "$re")
	for ((i = 0; i < 300; i++)); do
		sleep 0.2
		n=$(dmp_irqs "$re")
		if [ "$n" = "$prev" ]; then
			[ $((++still)) -lt "$want" ] || return 0
		else
			still=0 prev=$n
		fi
	done
	echo "# $1: the devices below still interrupt after 60 s"
}

# lvm_raid_status LV FIELD: a field of dm-raid's status line of LV (6
# health, 7 sync ratio, 8 sync action, 9 mismatches).
lvm_raid_status()
{
	dmsetup status "$LVM_VG-$1" | awk -v f="$2" '{ print $f }'
}

# lvm_wait_synced LV: raid LV has finished its resync (120 s at most).
lvm_wait_synced()
{
	local i ratio action

	for ((i = 0; i < 600; i++)); do
		ratio=$(lvm_raid_status "$1" 7) action=$(lvm_raid_status "$1" 8)
		[ "$action" = idle ] && [ "${ratio%/*}" = "${ratio#*/}" ] && return 0
		sleep 0.2
	done
	echo "# $1: still $action at $ratio"
	return 1
}

# lvm_check_mirrors DESC LV: lvchange --syncaction check compares the legs
# of raid1 LV; lvs reports no mismatch.  One KTAP result.
lvm_check_mirrors()
{
	local desc=$1 mism

	if ! lvm_run lvchange --syncaction check "$LVM_VG/$2"; then
		ktap_test_fail "$desc: lvchange --syncaction check failed"
	elif ! lvm_wait_synced "$2"; then
		ktap_test_fail "$desc: the check did not finish"
	else
		mism=$(lvm_field "$2" raid_mismatch_count)
		echo "# $desc: raid_mismatch_count '$mism' after the check"
		if [ "$mism" = 0 ]; then
			ktap_test_pass "$desc: lvchange --syncaction check finds the legs alike"
		else
			ktap_test_fail "$desc: lvchange --syncaction check finds the legs alike"
		fi
	fi
}
