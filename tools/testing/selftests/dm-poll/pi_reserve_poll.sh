#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A polled bio to a device with protection information never holds the
# reserve of its bio set's integrity payload pool.  md gives its bio sets
# an integrity pool (a reserve of two payloads) once its members carry
# protection information; the block layer takes a bio's payload from
# there when it reaches the NVMe namespace, and a polled bio holds it
# until its submitter polls.  Once memory is short, a thread that polls
# its reads then sleeps in mempool_alloc() for the payload of its next
# polled read (at QD8, more reads than the reserve) or of its blocking
# pwrite() while only its own polling could give the reserve back:
# blk-mq's reaper did here (lib.sh's bound, 1 s).  A polled bio's payload
# comes from kmalloc(), as its protection buffer does.  dmp_starve
# (lend=1) makes the integrity pool's allocator fail for iopoll_verify
# and leaves it the reserve; iopoll_verify reads back polled at QD8 what
# an unstarved pass wrote, and writes with a blocking pwrite() every
# 10 ms, over two NVMe namespaces with 8 bytes of Type 1 protection
# information (DM_POLL_NVME_PI_DEVS; in the harness, its multipath VM
# machine):
#   1. md raid1, bio_set's integrity pool (member clones);
#   2. md raid10 near2, bio_set's integrity pool;
#   3. md raid0, io_clone_set's integrity pool (the clones raid0 sends);
#   4. dm-linear over md raid1, the array's bio_set's integrity pool.
# Every read and write back within 5 s, data verified, none reaped, and
# the starved allocator called once for each copy of each blocking write
# and for nothing else: the polled reads' payloads never came from the
# pool (dmp_check_lent, DMP_LENT_PER_WRITE).  DM's own bio sets get an
# integrity pool on 6.12 only for a table with dm-integrity in inline
# mode, not covered here.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup mdadm
dmp_get_nvme_devs 2 DM_POLL_NVME_PI_DEVS
a=${DMP_NVME[0]} b=${DMP_NVME[1]}
dmp_starve_load

ktap_print_header
ktap_set_plan 4

# check_lent DESC DEV POOL SEED COPIES: write the first 4 MiB of DEV, see
# that it took up its members' protection information, and check its
# integrity payload POOL (dmp_starve's pool= value) lent (dmp_check_lent)
# to a polled read pass at QD8 with a blocking 4 KiB write every 10 ms,
# each written in COPIES member bios.  One KTAP result.
check_lent()
{
	local desc=$1 dev=$2 pool=$3 seed=$4 copies=$5 out pi

	pi=$(cat "$(dmp_sysfs "$dev")/integrity/format" 2>/dev/null) || pi=none
	if [ "$pi" = none ]; then
		ktap_test_fail "$desc: $dev has no protection information"
		return
	fi
	if ! out=$("$DMP_VERIFY" -m write -s 4M -b 4k -q 8 -S "$seed" "$dev" 2>&1); then
		echo "$out" | head -n 5 | sed 's/^/# /'
		ktap_test_fail "$desc: cannot write $dev"
		return
	fi
	DMP_LENT_PER_WRITE=$copies dmp_check_lent "$desc ($pi)" "$dev" "$pool" \
		0 0 -m read -s 4M -b 4k -q 8 -S "$seed" -w 10 -L 5000 -T 60
}

# check_md_lent DESC SEED POOL COPIES MDADM-OPTION...: check_lent on a new
# array of a and b.  One KTAP result.
check_md_lent()
{
	local desc=$1 seed=$2 pool=$3 copies=$4

	shift 4
	if ! dmp_md_create "$@" -- "$a" "$b"; then
		ktap_test_fail "$desc: cannot create the array"
		return
	fi
	check_lent "$desc" "$DMP_NODE" "${DMP_NODE#/dev/}:$pool" "$seed" "$copies"
	dmp_cleanup
}

check_md_lent "raid1: bio_set's integrity pool lent, polled reads, blocking pwrite()s" \
	101 bio-pi 2 1 --assume-clean --size=65536
check_md_lent "raid10 near2: bio_set's integrity pool lent, polled reads, blocking pwrite()s" \
	102 bio-pi 2 10 --assume-clean --layout=n2 --size=65536
check_md_lent "raid0: io_clone_set's integrity pool lent, polled reads, blocking pwrite()s" \
	103 clone-pi 1 0 --chunk=64

desc="dm-linear over md raid1: the array's integrity pool lent, polled reads, blocking pwrite()s"
if dmp_md_create 1 --assume-clean --size=65536 -- "$a" "$b"; then
	md=$DMP_NODE
	if dmp_dm_create pi-linear "0 131072 linear $md 0"; then
		check_lent "$desc" "$DMP_NODE" "${md#/dev/}:bio-pi" 104 2
		dmp_dm_remove pi-linear
	else
		ktap_test_fail "$desc: cannot create the device"
	fi
	dmp_cleanup
else
	ktap_test_fail "$desc: cannot create the array"
fi

ktap_finished
