# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers of the filesystem tests: ext4 or xfs on a stack, polled direct
# I/O to files as a database does it (fio io_uring --hipri, and
# iopoll_verify -f), then a read-only fsck and a read-back after a
# remount.  Source after lib.sh.

FS_KEY=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
# Stacks are 512 MiB (xfs needs more than 300), md raid0 all of both
# namespaces; the namespaces are reused from one stack to the next.
FS_SECTORS=1048576
FS_MNT=/tmp/dmp-fs-$$
FS_STACKS="dm-striped dm-linear/dm-striped md-raid0 md-raid1 dm-thin dm-crypt"

# fs_require FS: the tools and the kernel module of FS, or skip.
fs_require()
{
	case $1 in
	ext4) dmp_require_cmds mkfs.ext4 e2fsck ;;
	xfs) dmp_require_cmds mkfs.xfs xfs_repair ;;
	esac
	dmp_require_cmds dmsetup mdadm fio fsfreeze mount umount
	dmp_require_module "$1"
	mkdir -p "$FS_MNT"
	dmp_on_exit "fs_unmount; rmdir '$FS_MNT'"
}

fs_unmount()
{
	fsfreeze --unfreeze "$FS_MNT" >/dev/null 2>&1
	! grep -q " $FS_MNT " /proc/mounts || umount "$FS_MNT"
}

# fs_stack STACK A B: build STACK over NVMe namespaces A and B; set
# DMP_NODE to its top.
fs_stack()
{
	local a=$2 b=$3

	case $1 in
	dm-striped)
		dmp_dm_create fs-striped "0 $FS_SECTORS striped 2 128 $a 2048 $b 2048"
		;;
	dm-linear/dm-striped)
		dmp_dm_create fs-striped "0 $((FS_SECTORS + 2048)) striped 2 128 $a 2048 $b 2048" &&
			dmp_dm_create fs-linear "0 $FS_SECTORS linear $DMP_NODE 2048"
		;;
	md-raid0)
		dmp_md_create 0 --chunk=64 -- "$a" "$b"
		;;
	md-raid1)
		dmp_md_create 1 --assume-clean --size=$((FS_SECTORS / 2)) -- "$a" "$b"
		;;
	dm-thin)
		dmp_dm_zeroed fs-tmeta "$a" 2048 8192 &&
			dmp_dm_create fs-pool \
				"0 $FS_SECTORS thin-pool $DMP_NODE $b 128 0 1 skip_block_zeroing" &&
			dmsetup message "$DMP_NODE" 0 "create_thin 0" &&
			dmp_dm_create fs-thin "0 $FS_SECTORS thin $DMP_NODE 0"
		;;
	dm-crypt)
		dmp_dm_create fs-crypt "0 $FS_SECTORS crypt aes-xts-plain64 $FS_KEY 0 $a 2048"
		;;
	*)
		echo "# fs_stack: unknown stack $1"
		return 1
		;;
	esac
}

# fs_mkfs FS DEV: a new filesystem on all of DEV, initialised in full now
# (ext4's lazy init would write in the background during polled runs).
fs_mkfs()
{
	case $1 in
	ext4) mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$2" ;;
	xfs) mkfs.xfs -q -f "$2" ;;
	esac
}

# fs_check FS DEV: read-only fsck finds nothing to repair.
fs_check()
{
	case $1 in
	ext4) e2fsck -fn "$2" ;;
	xfs) xfs_repair -n "$2" ;;
	esac
}

# fs_fio JOB FILE ARGS...: fio io_uring, polled, direct, on FILE, with
# crc32c verification; random sizes up to 2 MiB make iomap build I/O of
# more than one bio, which it completes by interrupt.
fs_fio()
{
	local name=$1 file=$2
	shift 2

	fio --name="$name" --filename="$file" --size=32M --ioengine=io_uring \
		--hipri=1 --direct=1 --rw=randwrite --bsrange=4k-2m --iodepth=8 \
		--verify=crc32c --verify_fatal=1 --randseed=7 --output=/tmp/fs-fio.log "$@"
}

# fs_cases FS STACK DEV: the cases of one filesystem on one stack; five
# KTAP results.
fs_cases()
{
	local fs=$1 stack=$2 dev=$3 pat=$FS_MNT/pattern desc="$1 on $2"

	if ! fs_mkfs "$fs" "$dev" >/tmp/fs-mkfs.log 2>&1 ||
		! mount -o noatime -t "$fs" "$dev" "$FS_MNT"; then
		sed 's/^/# /' /tmp/fs-mkfs.log
		ktap_exit_fail_msg "$desc: cannot create and mount the filesystem"
	fi
	# shellcheck disable=SC2034 # read by the lib.sh checks
	DMP_IRQ_RE_OVERRIDE=$(dmp_irq_regex "$dev")

	if fs_fio write "$FS_MNT/fio.dat"; then
		ktap_test_pass "$desc: fio --hipri writes 4k-2m, verified"
	else
		ktap_test_fail "$desc: fio --hipri writes 4k-2m"
		sed 's/^/# /' /tmp/fs-fio.log | tail -n 20
	fi

	# Written extents, then the pattern, polled: no extent changes after.
	if ! dd if=/dev/zero of="$pat" bs=1M count=16 oflag=direct status=none ||
		! "$DMP_VERIFY" -f -L "$DMP_MAX_LAT_MS" -m write -b 4k-256k -S 31 "$pat"; then
		ktap_exit_fail_msg "$desc: cannot write the pattern file"
	fi
	# A frozen filesystem is quiet (journal or log flushed and covered)
	# and still serves reads: any interrupt is from the reads.
	fsfreeze --freeze "$FS_MNT" || ktap_exit_fail_msg "$desc: cannot freeze"
	dmp_check_polled "$desc: polled 4k file reads" "$pat" -f -m read -b 4k -S 31
	dmp_check_irq "$desc: file reads" "$pat" -f -m read -b 4k -S 31
	fsfreeze --unfreeze "$FS_MNT" || ktap_exit_fail_msg "$desc: cannot thaw"

	umount "$FS_MNT" || ktap_exit_fail_msg "$desc: cannot unmount"
	if fs_check "$fs" "$dev" >/tmp/fs-check.log 2>&1; then
		ktap_test_pass "$desc: read-only fsck clean"
	else
		ktap_test_fail "$desc: read-only fsck"
		sed 's/^/# /' /tmp/fs-check.log | tail -n 20
	fi

	mount -o noatime -t "$fs" "$dev" "$FS_MNT" ||
		ktap_exit_fail_msg "$desc: cannot mount again"
	# 1 MiB through crypt takes a third of a second under TCG already.
	if "$DMP_VERIFY" -f -L $((3 * DMP_MAX_LAT_MS)) -m read -b 4k-1m -S 31 "$pat" &&
		fs_fio verify "$FS_MNT/fio.dat" --verify_only=1; then
		ktap_test_pass "$desc: data after a remount, polled reads up to 1m"
	else
		ktap_test_fail "$desc: data after a remount"
		sed 's/^/# /' /tmp/fs-fio.log | tail -n 20
	fi
	umount "$FS_MNT" || ktap_exit_fail_msg "$desc: cannot unmount"
	unset DMP_IRQ_RE_OVERRIDE
}

# fs_all_stacks FS: every stack of FS_STACKS in turn, over two NVMe.
fs_all_stacks()
{
	local fs=$1 stack reaped

	dmp_get_nvme_devs 2
	ktap_print_header
	ktap_set_plan $((5 * $(wc -w <<<"$FS_STACKS")))
	for stack in $FS_STACKS; do
		reaped=$(dmp_poll_reaped)
		fs_stack "$stack" "${DMP_NVME[0]}" "${DMP_NVME[1]}" ||
			ktap_exit_fail_msg "cannot build $stack"
		fs_cases "$fs" "$stack" "$DMP_NODE"
		dmp_cleanup
		# Which stack it was, should the test fail on blk-mq's reaper
		reaped=$(($(dmp_poll_reaped) - reaped))
		[ "$reaped" = 0 ] ||
			echo "# $fs on $stack: blk-mq's reaper reaped $reaped times"
	done
	ktap_finished
}
