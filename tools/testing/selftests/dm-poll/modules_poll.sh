#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The stack as modules, as distributions ship it: a table loads its
# target's module and holds it, an md array its personality, a table on
# a null_blk disk null_blk; polled I/O runs through them; each unloads once its
# user is gone, and dm_mod and md_mod unload when no table or array is
# left (a reference the series leaked would keep them).
. "$(dirname "$0")/lib.sh"

KEY=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef

dmp_require_root
dmp_require_cmds dmsetup mdadm rmmod modprobe
dmp_require_nullb
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}
for m in dm_mod md_mod null_blk; do
	[ -e "/sys/module/$m/refcnt" ] || dmp_skip_all "$m is built in: nothing to load or unload"
done

# unload MODULE: rmmod it if loaded; true if it is gone.
unload()
{
	[ ! -d "/sys/module/$1" ] || rmmod "$1" 2>/dev/null
	[ ! -d "/sys/module/$1" ]
}

# holders MODULE: the modules that hold MODULE, on one line.
holders()
{
	local h out=()

	for h in "/sys/module/$1"/holders/*; do
		[ -e "$h" ] && out+=("${h##*/}")
	done
	echo "${out[*]}"
}

# unload_tree MODULE: unload the modules that hold MODULE, theirs first,
# then MODULE.
unload_tree()
{
	local h

	for h in $(holders "$1"); do
		unload_tree "$h"
	done
	unload "$1"
}

# held DESC MODULE: MODULE is loaded, has users and refuses to unload.
held()
{
	local refs

	refs=$(cat "/sys/module/$2/refcnt" 2>/dev/null)
	echo "# $1: module $2 refcnt ${refs:-none}"
	if [ -z "$refs" ]; then
		ktap_test_fail "$1: module $2 is not loaded"
	elif [ "$refs" -lt 1 ]; then
		ktap_test_fail "$1: module $2 has no users"
	elif rmmod "$2" 2>/dev/null; then
		ktap_test_fail "$1: rmmod $2 succeeded while in use"
	else
		ktap_test_pass "$1: loaded, in use, rmmod refused"
	fi
}

# gone DESC MODULE: MODULE unloads.
gone()
{
	if unload "$2"; then
		ktap_test_pass "$1: rmmod $2"
	else
		echo "# $1: module $2 refcnt $(cat "/sys/module/$2/refcnt")"
		ktap_test_fail "$1: $2 does not unload"
	fi
}

ktap_print_header
ktap_set_plan 10

# dm: the target module comes with the table.
unload dm_crypt || ktap_exit_fail_msg "dm_crypt is in use before the test"
dmp_dm_create crypt "0 65536 crypt aes-xts-plain64 $KEY 0 $a 2048" ||
	ktap_exit_fail_msg "cannot create dm-crypt"
held "dm-crypt table" dm_crypt
dmp_check_polled "dm-crypt as a module" "$DMP_NODE" -m rw -b 4k-64k -S 41
dmp_dm_remove crypt
gone "dm-crypt table removed" dm_crypt

# md: the personality comes with the array.
unload raid0 || ktap_exit_fail_msg "raid0 is in use before the test"
dmp_md_create 0 --chunk=64 -- "$a" "$b" || ktap_exit_fail_msg "cannot create md raid0"
md=$DMP_NODE
held "md raid0 array" raid0
dmp_check_polled "md raid0 as a module" "$md" -m rw -s 16M -b 4k-128k -S 42
dmp_cleanup
gone "md raid0 stopped" raid0

# null_blk: a disk that a table holds open pins its driver, one reference
# more than its configfs device holds.
dmp_nullb_create mod memory_backed=1 size=64 queue_mode=2 poll_queues=2 ||
	ktap_exit_fail_msg "cannot create null_blk"
refs=$(cat /sys/module/null_blk/refcnt)
dmp_dm_create onnullb "0 65536 linear $DMP_NODE 0" ||
	ktap_exit_fail_msg "cannot create dm-linear on null_blk"
with=$(cat /sys/module/null_blk/refcnt)
dmp_dm_remove onnullb
if [ "$with" -eq $((refs + 1)) ] && [ "$(cat /sys/module/null_blk/refcnt)" -eq "$refs" ]; then
	ktap_test_pass "null_blk under dm-linear: the table holds one reference"
else
	after=$(cat /sys/module/null_blk/refcnt)
	echo "# null_blk under dm-linear: refcnt $refs, $with with the table, then $after"
	ktap_test_fail "null_blk under dm-linear: the table does not hold one reference"
fi
dmp_cleanup
if unload null_blk && modprobe null_blk nr_devices=0 poll_queues=2 &&
	[ -d /sys/kernel/config/nullb ]; then
	ktap_test_pass "null_blk unloads after its stack, and loads again"
else
	ktap_test_fail "null_blk after its stack: does not unload or load again"
fi

# No table, no array: the cores unload with every module that holds them.
if unload_tree dm_mod; then
	ktap_test_pass "dm_mod and its targets unload with no table left"
else
	echo "# dm_mod held by $(holders dm_mod)"
	ktap_test_fail "dm_mod and its targets do not unload"
fi
if unload_tree md_mod; then
	ktap_test_pass "md_mod and its personalities unload with no array left"
else
	echo "# md_mod held by $(holders md_mod)"
	ktap_test_fail "md_mod and its personalities do not unload"
fi
if ! modprobe dm_mod || ! modprobe md_mod; then
	ktap_exit_fail_msg "cannot load dm_mod and md_mod again"
fi
ktap_finished
