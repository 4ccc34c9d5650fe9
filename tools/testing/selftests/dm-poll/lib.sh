#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Shared helpers of the dm-poll selftests: device discovery, stacked device
# set-up with guaranteed teardown, interrupt accounting and the polled I/O
# checker.  Each test sources this file and then uses ktap_helpers.sh.
#
# The devices under test come from the environment, like blktests'
# TEST_DEVS.  Their contents are DESTROYED.
#   DM_POLL_NVME_DEVS    NVMe namespaces with poll queues (nvme.poll_queues=N)
#   DM_POLL_NVME_CHARS   matching NVMe generic char devices (/dev/ngXnY), optional
#   DM_POLL_VIRTIO_DEV   a virtio-blk disk with poll queues (virtio_blk.poll_queues=N)
#   DM_POLL_NVME_4KN_DEVS    NVMe namespaces of 4096-byte logical blocks
#   DM_POLL_NVME_PI_DEVS     NVMe namespaces with protection information
#   DM_POLL_NVME_MPATH_DEVS  NVMe multipath heads (/dev/nvmeXnY) of two paths
#   DMP_FULL=1           stress loops at full length (see dmp_scaled)
# null_blk devices are created through configfs when null_blk is available.
# A test whose devices are not given reports SKIP with the reason.

DMP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=/dev/null
. "$DMP_DIR/../kselftest/ktap_helpers.sh"

DMP_VERIFY=$DMP_DIR/iopoll_verify
# No I/O may take longer than this (ms): a polled bio left on a poll queue
# that nobody polls waits for the device's timeout, 30 s on NVMe.
DMP_MAX_LAT_MS=${DMP_MAX_LAT_MS:-1000}
DMP_PREFIX=dmpoll-$$
# What the test created, in order: "dm NAME", "md NODE MEMBER..." or
# "nullb NAME"; dmp_cleanup takes it down in the reverse order.
DMP_TEARDOWN=()
DMP_NTABLES=0
DMP_NLOADS=0
DMP_NMD=0
# The load rings of dmp_rings_under_load still running.
DMP_LOAD_PIDS=()

# Without a running udev (its control socket), libdevmapper must create
# /dev/mapper nodes itself and not wait for udev cookies, and mdadm, which
# takes the /run/udev directory alone for udev, must create /dev/md nodes.
if [ ! -S /run/udev/control ]; then
	export DM_DISABLE_UDEV=1 MDADM_NO_UDEV=1
fi

dmp_cleanup()
{
	local i

	dmp_kill_loads
	for ((i = ${#DMP_TEARDOWN[@]} - 1; i >= 0; i--)); do
		# shellcheck disable=SC2086 # a word list
		dmp_teardown_one ${DMP_TEARDOWN[$i]}
	done
	DMP_TEARDOWN=()
}

# dmp_kill_loads: end the load rings of dmp_rings_under_load that still
# run, as after a test that exits in the middle of one: with them their
# iopoll_verify, which would keep the devices open.
dmp_kill_loads()
{
	local pid pids=() i alive

	[ "${#DMP_LOAD_PIDS[@]}" -gt 0 ] || return 0
	for pid in "${DMP_LOAD_PIDS[@]}"; do
		# shellcheck disable=SC2207 # numbers
		pids+=($(dmp_kill_tree "$pid"))
		wait "$pid" 2>/dev/null
	done
	echo "# cleanup: killed ${#DMP_LOAD_PIDS[@]} load rings still running"
	DMP_LOAD_PIDS=()
	rm -f /tmp/dmp-load.$$.*
	# Those not our children: gone, or zombies, whose files are closed.
	for ((i = 0; i < 100; i++)); do
		alive=
		for pid in "${pids[@]}"; do
			case $(dmp_proc_state "$pid") in
			'' | Z) ;;
			*) alive="$alive $pid" ;;
			esac
		done
		[ -n "$alive" ] || return 0
		sleep 0.1
	done
	echo "# cleanup: killed load ring processes still there after 10 s:$alive"
}

# dmp_kill_tree PID: SIGKILL to PID and every process below it; prints
# their PIDs.  PID is stopped first, so that it starts no other.
dmp_kill_tree()
{
	local child

	kill -STOP "$1" 2>/dev/null || return 0
	while read -r child; do
		dmp_kill_tree "$child"
	done < <(awk -v ppid="$1" '{ sub(/.*\) /, "") } $2 == ppid {
		split(FILENAME, f, "/"); print f[3] }' /proc/[0-9]*/stat 2>/dev/null)
	kill -KILL "$1" 2>/dev/null
	echo "$1"
}

# dmp_proc_state PID: R, S, D, Z...
dmp_proc_state()
{
	sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null
}

# dmp_teardown_one KIND NAME [MEMBER...]
dmp_teardown_one()
{
	local kind=$1 name=$2

	shift 2
	case $kind in
	dm)
		dmsetup remove --retry "$name" >/dev/null 2>&1 ||
			echo "# cleanup: cannot remove dm device $name"
		;;
	md)
		mdadm --stop "$name" >/dev/null 2>&1 ||
			echo "# cleanup: cannot stop md array $name"
		mdadm --zero-superblock "$@" >/dev/null 2>&1 || true
		;;
	nullb)
		echo 0 >"/sys/kernel/config/nullb/$name/power" 2>/dev/null
		rmdir "/sys/kernel/config/nullb/$name" 2>/dev/null ||
			echo "# cleanup: cannot remove null_blk device $name"
		;;
	esac
}

# What a kernel log must not show during a test: it fails the test that
# was running, not only the whole run (the harness checks the console too).
DMP_KERNEL_ERRORS='Oops|BUG:|WARNING:|Kernel panic|general protection fault'
DMP_KERNEL_ERRORS+='|blocked for more than|soft lockup|hard LOCKUP|Call Trace:'
DMP_KERNEL_ERRORS+='|nvme nvme[0-9]+: I/O .*timeout|list_(add|del) corruption|ODEBUG:'
# The polls of blk-mq's reaper that completed requests, since boot: polls
# of a poll queue that nobody polled for io_poll_reap_ms.  A test that
# has any had a submitter wait for its own polling; one that strands
# requests on purpose sets DMP_REAP_EXPECTED=1.
DMP_REAPED_FILE=/sys/kernel/debug/block/poll_reaped
DMP_REAP_EXPECTED=

# dmp_poll_reaped: that count, 0 where the kernel has none.
dmp_poll_reaped()
{
	cat "$DMP_REAPED_FILE" 2>/dev/null || echo 0
}
DMP_REAPED_START=$(dmp_poll_reaped)

# The reaper's bound while a test runs.  Here pollers share two emulated
# CPUs (four rings on two) and may be off theirs for tens of ms with
# nothing wrong, which the default (10 ms) would count; a stranded
# request waits far longer.  Set for the queues there are and, through
# blk_mq.poll_reap_ms, for those the test creates; restored at its end.
# DMP_REAP_MS set but empty keeps the kernel's (the bench measures it).
DMP_REAP_MS=${DMP_REAP_MS-1000}
DMP_REAP_PARAM=/sys/module/blk_mq/parameters/poll_reap_ms
DMP_REAP_MS_SAVED=

# dmp_reap_bound MS: every blk-mq queue's io_poll_reap_ms, and new ones'.
dmp_reap_bound()
{
	local f

	echo "$1" >"$DMP_REAP_PARAM"
	for f in /sys/block/*/queue/io_poll_reap_ms; do
		[ ! -e "$f" ] || echo "$1" >"$f"
	done
}
if [ -n "$DMP_REAP_MS" ] && [ -w "$DMP_REAP_PARAM" ]; then
	DMP_REAP_MS_SAVED=$(cat "$DMP_REAP_PARAM")
	dmp_reap_bound "$DMP_REAP_MS"
fi

# dmp_reaped_check: no polled request of this test waited for the reaper.
dmp_reaped_check()
{
	local n=$(($(dmp_poll_reaped) - DMP_REAPED_START))

	# Under the kernel's own bound (the guest jobs) a reap needs no bug.
	[ "$n" = 0 ] || [ -n "$DMP_REAP_EXPECTED" ] || [ -z "$DMP_REAP_MS" ] && return 0
	echo "# blk-mq's reaper completed polled requests $n times (block/poll_reaped):"
	echo "# nobody polled them for io_poll_reap_ms ($DMP_REAP_MS), their submitter slept"
	return 1
}
DMP_KMSG_MARK="dm-poll: $(basename "$0") [$$] starts"
echo "$DMP_KMSG_MARK" 2>/dev/null >/dev/kmsg || DMP_KMSG_MARK=
DMP_EXIT_CMDS=()

# dmp_devices: the dm devices, md arrays and null_blk configfs devices
# there are, one "dm NAME", "md NAME" or "nullb NAME" a line, read from
# sysfs, /proc and configfs: no tool that could load a module to answer.
dmp_devices()
{
	local f

	for f in /sys/block/dm-*/dm/name; do
		[ -e "$f" ] && echo "dm $(cat "$f")"
	done
	[ ! -e /proc/mdstat ] || sed -n 's/^\(md[^ ]*\) : .*/md \1/p' /proc/mdstat
	for f in /sys/kernel/config/nullb/*/; do
		[ -d "$f" ] && f=${f%/} && echo "nullb ${f##*/}"
	done
}
DMP_DEVICES_BEFORE=$(dmp_devices)

# dmp_leftovers_check: the test left no dm device, md array or null_blk
# device behind that was not there when it started (md lets a stopped
# array go from a workqueue: allow 2 s).  Names each, and takes it down,
# so that the next test does not fail on it.
dmp_leftovers_check()
{
	local left i kind name

	for ((i = 0; i < 20; i++)); do
		left=$(dmp_devices | awk 'NR == FNR { before[$0]; next }
			!($0 in before)' <(echo "$DMP_DEVICES_BEFORE") -)
		[ -z "$left" ] && return 0
		sleep 0.1
	done
	while read -r kind name; do
		echo "# $(basename "$0") left $kind $name behind"
		[ "$kind" = md ] && name=/dev/$name
		dmp_teardown_one "$kind" "$name"
	done <<<"$left"
	return 1
}

# dmp_on_exit CMD: run CMD (a string, evaluated then) when the test exits,
# before its devices are taken down: global settings to restore.
dmp_on_exit()
{
	DMP_EXIT_CMDS+=("$1")
}

# dmp_starve_load: load the test module dmp_starve (fault/dmp_starve.c),
# looked for at DMPS_KO, unless it is loaded; at the test's end give back
# the pool it starves, then unload it if this test loaded it.  Sets
# DMP_STARVE, its parameters' directory; fails the test if the module has
# no lend parameter.
dmp_starve_load()
{
	local ko=${DMPS_KO:-/lib/modules/stackpoll/dmp_starve.ko}

	DMP_STARVE=/sys/module/dmp_starve/parameters
	# Exit commands run in order: the pool is given back before the unload
	dmp_on_exit dmp_starve_feed
	if [ ! -d "$DMP_STARVE" ]; then
		[ -f "$ko" ] || dmp_skip_all "no $ko (scripts/build-module.sh builds it)"
		# insmod loads no dependencies: it calls md_mod's lock helpers
		modprobe -q md_mod || dmp_skip_all "no md_mod, which $ko needs"
		insmod "$ko" || ktap_exit_fail_msg "cannot load $ko"
		dmp_on_exit "rmmod dmp_starve"
	fi
	[ -e "$DMP_STARVE/lend" ] ||
		ktap_exit_fail_msg "dmp_starve has no lend parameter: an older build"
}

# dmp_starve_feed: end the starvation dmp_starve_load's module keeps up;
# the next pool is starved with its reserve hidden and io_uring's workers
# spared, unless lend and io_workers are set again.
dmp_starve_feed()
{
	{
		echo >"$DMP_STARVE/pool"
		echo 0 >"$DMP_STARVE/lend"
		echo 0 >"$DMP_STARVE/io_workers"
	} 2>/dev/null
}

# dmp_check_lent DESC DEV POOL WORKERS AGAIN OPTION...: lend dmp_starve's
# POOL (its pool= value: md100:bio, dm-3:io) to iopoll_verify, and to
# io_uring's workers if WORKERS is 1, and run iopoll_verify on DEV with
# its OPTIONs: a read pass with blocking writes (-w).  Pass when every
# read and write was back in time with its data, a blocking write ran,
# the reaper completed nothing (no write waited for polled reads), the
# starved allocator was called and, if AGAIN is 1, DEV ended some bios
# with BLK_STS_AGAIN: the submissions that could not be sent without the
# reserve were unwound.  With DMP_LENT_PER_WRITE=N, the starved allocator
# must have been called exactly N times for each blocking write, so never
# for a polled read.  One KTAP result.
dmp_check_lent()
{
	local desc=$1 dev=$2 pool=$3 workers=$4 again=$5 out starved reaped
	local writes filter n=0 rc=0 per_write=${DMP_LENT_PER_WRITE:-}

	shift 5
	if ! filter=$(dmp_again_filter "$dev") ||
		! dmp_count_start block/block_bio_complete dev "$filter"; then
		ktap_test_fail "$desc: cannot count BLK_STS_AGAIN"
		return
	fi
	starved=$(cat "$DMP_STARVE/stat_starved")
	reaped=$(dmp_poll_reaped)
	if ! { echo iopoll_verify >"$DMP_STARVE/comm" && echo 1 >"$DMP_STARVE/lend" &&
		echo "$workers" >"$DMP_STARVE/io_workers" &&
		echo "$pool" >"$DMP_STARVE/pool"; }; then
		ktap_test_fail "$desc: cannot starve $pool"
		dmp_starve_feed
		dmp_count_stop block/block_bio_complete dev "$filter" >/dev/null
		return
	fi
	out=$("$DMP_VERIFY" "$@" "$dev" 2>&1) || rc=$?
	dmp_starve_feed
	n=$(dmp_count_stop block/block_bio_complete dev "$filter")
	echo "$out" | tail -n 5 | sed 's/^/# /'
	writes=$(awk '$3 == "blocking" && $4 == "writes," { print $2 }' <<<"$out")
	starved=$(($(cat "$DMP_STARVE/stat_starved") - starved))
	reaped=$(($(dmp_poll_reaped) - reaped))
	echo "# $desc: $starved allocations starved, ${n:-0} bios ended with" \
		"BLK_STS_AGAIN; the reaper's polls completed polled requests" \
		"$reaped times"
	if [ "$rc" != 0 ]; then
		ktap_test_fail "$desc: a read or a blocking write failed or was slow"
	elif [ "${writes:-0}" -eq 0 ]; then
		ktap_test_fail "$desc: no blocking write ran beside the polled reads"
	elif [ "$reaped" != 0 ]; then
		ktap_test_fail "$desc: a blocking write waited for polled reads' reserve"
	elif [ "$starved" -eq 0 ]; then
		ktap_test_fail "$desc: iopoll_verify never allocated from the starved pool"
	elif [ -n "$per_write" ] && [ "$starved" != $((writes * per_write)) ]; then
		echo "# $desc: $writes blocking writes of $per_write bios each"
		ktap_test_fail "$desc: the polled reads allocated from the starved pool"
	elif [ "$again" = 1 ] && [ "${n:-0}" -eq 0 ]; then
		ktap_test_fail "$desc: starved, but no bio was unwound with BLK_STS_AGAIN"
	else
		ktap_test_pass "$desc: no write waited for polled reads, data verified"
	fi
}

# dmp_kernel_log: the kernel log since this test started.
dmp_kernel_log()
{
	dmesg | awk -v mark="$DMP_KMSG_MARK" 'seen; index($0, mark) { seen = 1 }'
}

# dmp_kernel_log_check: the kernel log since this test started is clean.
dmp_kernel_log_check()
{
	local bad line

	[ -n "$DMP_KMSG_MARK" ] || return 0
	bad=$(dmp_kernel_log | grep -E "$DMP_KERNEL_ERRORS" | head -n 5)
	[ -z "$bad" ] && return 0
	echo "# kernel log during $(basename "$0"):"
	while IFS= read -r line; do
		echo "# $line"
	done <<<"$bad"
	return 1
}

# The EXIT trap: the exit commands, the teardown (load rings still running
# first), then what is left behind and the kernel log, each of which fails
# the test if it shows a device or a warning or worse.
dmp_exit()
{
	local rc=$? cmd

	for cmd in "${DMP_EXIT_CMDS[@]}"; do
		eval "$cmd"
	done
	dmp_cleanup
	dmp_leftovers_check || rc=1
	dmp_kernel_log_check || rc=1
	dmp_reaped_check || rc=1
	[ -z "$DMP_REAP_MS_SAVED" ] || dmp_reap_bound "$DMP_REAP_MS_SAVED"
	exit "$rc"
}
trap dmp_exit EXIT

# dmp_skip_all REASON: the whole test cannot run here.
dmp_skip_all()
{
	ktap_print_header
	ktap_skip_all "$*"
	exit "$KSFT_SKIP"
}

dmp_require_root()
{
	[ "$(id -u)" = 0 ] || dmp_skip_all "must be run as root"
}

# dmp_require_cmds CMD...: the tools, and for dmsetup and mdadm the kernel
# side they drive (dm_mod, md_mod), or skip.
dmp_require_cmds()
{
	local c

	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || dmp_skip_all "$c not installed"
		case $c in
		dmsetup) dmp_require_module dm_mod ;;
		mdadm) dmp_require_module md_mod ;;
		esac
	done
	[ -x "$DMP_VERIFY" ] || dmp_skip_all "iopoll_verify not built"
}

# dmp_require_module MODULE: loaded (or built in), as udev or the tools'
# packaging would load it, or skip.  What a table or an array needs
# beyond it (targets, personalities) the kernel loads on demand.
dmp_require_module()
{
	# modprobe succeeds for a module built in (modules.builtin).
	[ -d "/sys/module/$1" ] || modprobe -q "$1" ||
		dmp_skip_all "kernel module $1 not available"
}

# dmp_find_pmem: bind the VM's legacy persistent memory (memmap=
# SIZE!OFFSET on the kernel command line) with nd_e820 and nd_pmem, and
# set DMP_PMEM to its device; fail without it.
dmp_find_pmem()
{
	local i

	modprobe -q nd_e820 2>/dev/null
	modprobe -q nd_pmem 2>/dev/null
	for ((i = 0; i < 50; i++)); do
		[ -b /dev/pmem0 ] && break
		sleep 0.1
	done
	[ -b /dev/pmem0 ] || return 1
	# shellcheck disable=SC2034 # for the caller
	DMP_PMEM=/dev/pmem0
}

# dmp_get_pmem: dmp_find_pmem, or skip the test.
dmp_get_pmem()
{
	dmp_find_pmem ||
		dmp_skip_all "no /dev/pmem0: boot with memmap=SIZE!OFFSET, CONFIG_X86_PMEM_LEGACY"
}

# dmp_get_nvme_devs N [VAR]: set DMP_NVME to N devices of DM_POLL_NVME_DEVS
# (or of the variable VAR names: DM_POLL_NVME_4KN_DEVS, namespaces of
# 4096-byte blocks, DM_POLL_NVME_PI_DEVS, namespaces with protection
# information, DM_POLL_NVME_MPATH_DEVS, NVMe multipath heads) that have
# poll queues, or skip the test.
dmp_get_nvme_devs()
{
	local -a devs
	local d var=${2:-DM_POLL_NVME_DEVS}

	read -r -a devs <<<"${!var:-}"
	[ "${#devs[@]}" -ge "$1" ] ||
		dmp_skip_all "needs $1 NVMe devices with poll queues in $var"
	for d in "${devs[@]:0:$1}"; do
		[ -b "$d" ] || dmp_skip_all "$d is not a block device"
		[ "$(dmp_io_poll "$d")" = 1 ] ||
			dmp_skip_all "$d has no poll queues (boot with nvme.poll_queues=N)"
	done
	# shellcheck disable=SC2034 # for the caller
	DMP_NVME=("${devs[@]:0:$1}")
}

# dmp_sysfs DEV: the /sys/dev/block directory of a block device node.
dmp_sysfs()
{
	local majmin

	majmin=$(stat -L -c '%t:%T' "$1") || return 1
	echo "/sys/dev/block/$((16#${majmin%:*})):$((16#${majmin#*:}))"
}

dmp_io_poll()
{
	cat "$(dmp_sysfs "$1")/queue/io_poll"
}

# dmp_sectors DEV: size in 512-byte sectors.
dmp_sectors()
{
	cat "$(dmp_sysfs "$1")/size"
}

# dmp_dm_create NAME TABLE: create a dm device, registered for teardown,
# and set DMP_NODE to its node.  NAME gets a per-run prefix.
dmp_dm_create()
{
	local name=$DMP_PREFIX-$1

	DMP_NODE=
	if ! dmsetup create "$name" --noudevsync --table "$2"; then
		echo "# dmsetup create $name failed: $2"
		return 1
	fi
	DMP_TEARDOWN+=("dm $name")
	[ -b "/dev/mapper/$name" ] || dmsetup mknodes "$name"
	[ -b "/dev/mapper/$name" ] ||
		{ echo "# /dev/mapper/$name is not a block device"; return 1; }
	DMP_NODE=/dev/mapper/$name
}

# dmp_dm_zeroed NAME DEV OFFSET SECTORS: a dm-linear piece of DEV whose
# first MiB is zeroed, so that no target finds stale metadata there; set
# DMP_NODE.
dmp_dm_zeroed()
{
	dmp_dm_create "$1" "0 $4 linear $2 $3" || return 1
	dd if=/dev/zero of="$DMP_NODE" bs=1M count=1 oflag=direct status=none
}

# dmp_dm_remove NAME: remove dm device NAME (as given to dmp_dm_create)
# before the test ends.
dmp_dm_remove()
{
	local name=$DMP_PREFIX-$1 i

	dmsetup remove --retry "$name" || return 1
	for i in "${!DMP_TEARDOWN[@]}"; do
		[ "${DMP_TEARDOWN[$i]}" != "dm $name" ] || unset "DMP_TEARDOWN[$i]"
	done
	DMP_TEARDOWN=("${DMP_TEARDOWN[@]}")
}

# Suspends noted by dmp_note_inflight, and those that found I/O in flight:
# dmp_rings_under_load fails a run of suspends that never met its load.
DMP_SUSPENDS=0
DMP_SUSPENDS_BUSY=0

# dmp_note_inflight DEV: about to suspend DEV; note whether it has I/O in
# flight (its inflight counts, which dm and md keep for every bio).  A
# ring between two I/Os shows none: look up to 10 times in 0.1 s.
dmp_note_inflight()
{
	local r w i f

	f=$(dmp_sysfs "$1")/inflight
	[ -r "$f" ] || return 0
	DMP_SUSPENDS=$((DMP_SUSPENDS + 1))
	for ((i = 0; i < 10; i++)); do
		read -r r w <"$f" || return 0
		if [ $((r + w)) != 0 ]; then
			DMP_SUSPENDS_BUSY=$((DMP_SUSPENDS_BUSY + 1))
			return 0
		fi
		sleep 0.01
	done
}

# dmp_dm_suspend NAME [SUSPEND-OPTIONS]: suspend dm device NAME (the full
# name, as dmsetup knows it), noting the I/O in flight.
dmp_dm_suspend()
{
	local name=$1

	shift
	dmp_note_inflight "/dev/mapper/$name"
	dmsetup suspend "$@" "$name"
}

# dmp_dm_suspend_resume NAME [SUSPEND-OPTIONS]: one suspend and resume of
# dm device NAME.
dmp_dm_suspend_resume()
{
	dmp_dm_suspend "$@" && dmsetup resume "$1"
}

# dmp_nullb_create NAME KEY=VALUE...: create and power on a null_blk
# device through configfs, registered for teardown; set DMP_NODE.
dmp_nullb_create()
{
	local dir=/sys/kernel/config/nullb/$DMP_PREFIX-$1 kv node
	shift

	DMP_NODE=
	mkdir "$dir" || return 1
	DMP_TEARDOWN+=("nullb ${dir##*/}")
	for kv in "$@"; do
		echo "${kv#*=}" >"$dir/${kv%%=*}" ||
			{ echo "# null_blk: cannot set $kv"; return 1; }
	done
	echo 1 >"$dir/power" || return 1
	# The disk is named after the configfs directory (nullbN before 6.0).
	for node in "/dev/${dir##*/}" "/dev/nullb$(cat "$dir/index")"; do
		if [ -b "$node" ]; then
			# shellcheck disable=SC2034 # for the caller
			DMP_NODE=$node
			return 0
		fi
	done
	echo "# no block device node for null_blk ${dir##*/}"
	return 1
}

# dmp_md_create LEVEL [MDADM-OPTION...] -- MEMBER...: create and start an
# md array (metadata 1.2) on MEMBERs, registered for teardown; set
# DMP_NODE to its node.  Per-member options (--write-mostly) may go
# between the members.
dmp_md_create()
{
	local level=$1 node=/dev/md$((100 + DMP_NMD++)) opts=() out members
	shift

	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	members=$(dmp_members "$@")
	DMP_NODE=
	# shellcheck disable=SC2086 # a word list
	mdadm --zero-superblock $members >/dev/null 2>&1
	if ! out=$(mdadm --create "$node" --run --quiet --metadata=1.2 \
		--level="$level" --raid-devices="$(wc -w <<<"$members")" \
		"${opts[@]}" "$@" 2>&1); then
		echo "# ${out//$'\n'/$'\n'# }"
		echo "# mdadm --create $node --level=$level ${opts[*]} $* failed"
		return 1
	fi
	DMP_TEARDOWN+=("md $node $members")
	[ -b "$node" ] || { echo "# $node is not a block device"; return 1; }
	dmp_md_settle "$node"
	# shellcheck disable=SC2034 # for the caller
	DMP_NODE=$node
}

# dmp_md_build LEVEL -- MEMBER...: like dmp_md_create, but an array without
# superblocks (mdadm --build), whose members' boundaries are where their
# sizes put them.
dmp_md_build()
{
	local level=$1 node=/dev/md$((100 + DMP_NMD++)) out
	shift 2

	DMP_NODE=
	if ! out=$(mdadm --build "$node" --level="$level" --raid-devices=$# \
		"$@" 2>&1); then
		echo "# ${out//$'\n'/$'\n'# }"
		echo "# mdadm --build $node --level=$level $* failed"
		return 1
	fi
	DMP_TEARDOWN+=("md $node")
	[ -b "$node" ] || { echo "# $node is not a block device"; return 1; }
	dmp_md_settle "$node"
	# shellcheck disable=SC2034 # for the caller
	DMP_NODE=$node
}

# dmp_md_stop NODE: stop the array NODE (of dmp_md_create or dmp_md_build)
# before the test ends, and clear its members' superblocks; a process that
# just closed it may hold it a moment longer: retry for up to 5 s.
dmp_md_stop()
{
	local i entry node

	for ((i = 0; ; i++)); do
		mdadm --stop "$1" >/dev/null 2>&1 && break
		[ "$i" -lt 50 ] || { echo "# mdadm --stop $1 failed for 5 s"; return 1; }
		sleep 0.1
	done
	for i in "${!DMP_TEARDOWN[@]}"; do
		entry=${DMP_TEARDOWN[$i]}
		read -r _ node _ <<<"$entry"
		if [ "${entry%% *}" = md ] && [ "$node" = "$1" ]; then
			# shellcheck disable=SC2086 # a word list
			mdadm --zero-superblock ${entry#md "$1"} >/dev/null 2>&1
			unset "DMP_TEARDOWN[$i]"
		fi
	done
	DMP_TEARDOWN=("${DMP_TEARDOWN[@]}")
}

# dmp_md_settle NODE: md reads and writes by interrupt on its own: the
# superblock after creation and whenever the array turns clean again
# (safe mode) or active, the bitmap when its daemon clears bits, and the
# partition table on the first open.  Those interrupts would count against
# polled runs: keep the array active once written, the bitmap daemon
# asleep, open the array once, and wait until the members are quiet.
dmp_md_settle()
{
	local sys re n prev=-1 i

	sys=$(dmp_sysfs "$1")/md
	echo 0 >"$sys/safe_mode_delay"
	: <"$1"
	[ ! -e "$sys/bitmap/time_base" ] || echo 3600 >"$sys/bitmap/time_base"
	re=$(dmp_irq_regex "$1")
	for ((i = 0; i < 50; i++)); do
		n=$(dmp_irqs "$re")
		[ "$n" = "$prev" ] && return 0
		prev=$n
		sleep 0.3
	done
	echo "# $1: members still busy after 15 s"
}

# dmp_members ARG...: the ARGs that are not options.
dmp_members()
{
	local a out=()

	for a in "$@"; do
		[ "${a#-}" = "$a" ] && out+=("$a")
	done
	echo "${out[*]}"
}

# dmp_md_wait_sync NODE: wait until NODE has no resync or recovery running,
# at most DMP_MD_SYNC_S seconds (default 300); fails with md's state then.
dmp_md_wait_sync()
{
	local sys i

	sys=$(dmp_sysfs "$1")/md
	for ((i = 0; i < ${DMP_MD_SYNC_S:-300} * 5; i++)); do
		[ "$(cat "$sys/sync_action")" = idle ] && return 0
		sleep 0.2
	done
	echo "# $1: still $(cat "$sys/sync_action") after ${DMP_MD_SYNC_S:-300} s:" \
		"$(cat "$sys/sync_completed" 2>/dev/null)"
	return 1
}

# dmp_check_mirrors DESC NODE [SECTORS]: md's "check" finds the copies of
# the first SECTORS (default all) of the array NODE alike: a write lost
# on one mirror passes every read that read_balance() sends to another.
# One KTAP result.
dmp_check_mirrors()
{
	local desc=$1 sys mism
	sys=$(dmp_sysfs "$2")/md

	if ! { echo 0 >"$sys/sync_min" && echo "${3:-max}" >"$sys/sync_max" &&
		echo check >"$sys/sync_action"; }; then
		ktap_test_fail "$desc: cannot start a check"
	elif ! dmp_md_wait_checked "$2" "${3:-}"; then
		ktap_test_fail "$desc: the check did not finish"
	else
		mism=$(cat "$sys/mismatch_cnt")
		echo "# $desc: mismatch_cnt $mism"
		if [ "$mism" = 0 ]; then
			ktap_test_pass "$desc: md check finds the mirrors alike"
		else
			ktap_test_fail "$desc: md check finds the mirrors differ"
		fi
	fi
	echo max >"$sys/sync_max"
}

# dmp_md_wait_checked NODE [SECTORS]: wait for a check to finish, or to
# reach SECTORS, where md pauses it at sync_max: stop it there (the count
# of mismatches stays until the next check starts).
dmp_md_wait_checked()
{
	local sys i pos
	sys=$(dmp_sysfs "$1")/md

	for ((i = 0; i < ${DMP_MD_SYNC_S:-300} * 5; i++)); do
		[ "$(cat "$sys/sync_action")" = idle ] && return 0
		pos=$(cut -d' ' -f1 "$sys/sync_completed")
		if [ -n "${2:-}" ] && [ "$pos" != none ] && [ "$pos" -ge "$2" ]; then
			echo idle >"$sys/sync_action"
			dmp_md_wait_sync "$1"
			return
		fi
		sleep 0.2
	done
	echo "# $1: check still at $(cat "$sys/sync_completed") after ${DMP_MD_SYNC_S:-300} s"
	return 1
}

# dmp_md_stop_refused NODE: mdadm --stop fails while the array is open.
# Load rings open it for each pass only: hold it open here too.
dmp_md_stop_refused()
{
	local rc=0

	exec 9<"$1"
	if mdadm --stop "$1" >/dev/null 2>&1; then
		echo "# $1 stopped while in use"
		rc=1
	fi
	exec 9<&-
	sleep 0.3
	return "$rc"
}

# dmp_thin_pool_create METADEV OFFSET DATADEV: a 64 MiB thin-pool on
# DATADEV with zeroed metadata at OFFSET of METADEV; DMP_NODE is the pool.
dmp_thin_pool_create()
{
	dmp_dm_create tmeta "0 8192 linear $1 $2" || return 1
	dd if=/dev/zero of="$DMP_NODE" bs=1M count=4 oflag=direct status=none || return 1
	dmp_dm_create pool "0 131072 thin-pool $DMP_NODE $3 128 0 1 skip_block_zeroing"
}

# dmp_have_nullb: null_blk can be configured through configfs.
dmp_have_nullb()
{
	[ -d /sys/kernel/config/nullb ] ||
		modprobe null_blk nr_devices=0 poll_queues=2 >/dev/null 2>&1 ||
		true
	[ -d /sys/kernel/config/nullb ]
}

# dmp_load_stack: dm_mod, md_mod and null_blk loaded, for the guest jobs
# that build stacks outside a test (bench, demo, profile).
dmp_load_stack()
{
	if ! modprobe -a dm_mod md_mod || ! dmp_have_nullb; then
		echo "# cannot load dm_mod, md_mod and null_blk"
		return 1
	fi
}

# dmp_require_nullb: null_blk configured through configfs, or skip.
dmp_require_nullb()
{
	dmp_have_nullb || dmp_skip_all "null_blk with configfs not available"
}

# dmp_irqs REGEX: total interrupts, all CPUs, of /proc/interrupts lines
# whose action name matches REGEX (extended, anchored).
dmp_irqs()
{
	awk -v re="^($1)\$" '
		NR == 1 { ncpu = NF; next }
		$NF ~ re { for (i = 2; i <= ncpu + 1; i++) sum += $i }
		END { print sum + 0 }' /proc/interrupts
}

# dmp_irq_regex DEV...: the interrupt names of the NVMe controllers or
# virtio-blk devices behind DEVs, following dm and md stacks down through
# slaves/, NVMe multipath heads down to their paths (6.12 has no
# multipath/ directory: nvmeSnN's paths are the hidden disks nvmeScCnN),
# and partitions to their disks.
dmp_irq_regex()
{
	local d re=""

	for d in "$@"; do
		re="$re|$(dmp_irq_regex_sysfs "$(readlink -f "$(dmp_sysfs "$d")")")"
	done
	# Each name once; none empty, which devices without interrupts leave
	tr '|' '\n' <<<"$re" | sed '/^$/d' | sort -u | paste -sd'|'
}

dmp_irq_regex_sysfs()
{
	local sys=$1 lower parent name re=""

	# A partition (LVM's PVs) interrupts as its disk.
	[ ! -e "$sys/partition" ] || sys=${sys%/*}
	for lower in "$sys"/slaves/* "$sys"/multipath/*; do
		[ -e "$lower" ] &&
			re="$re|$(dmp_irq_regex_sysfs "$(readlink -f "$lower")")"
	done
	parent=$(basename "$(readlink -f "$sys/device")")
	case $parent in
	nvme-subsys*)
		# An NVMe multipath head, nvmeSnN, whose paths are nvmeScCnN.
		name=${sys##*/}
		for lower in /sys/block/"${name%n*}"c*n"${name##*n}"; do
			[ -e "$lower" ] &&
				re="$re|$(dmp_irq_regex_sysfs "$(readlink -f "$lower")")"
		done
		;;
	nvme[0-9]*) re="$re|${parent}q[1-9][0-9]*" ;;
	virtio[0-9]*) re="$re|$parent-.*" ;;
	esac
	echo "${re#|}"
}

# dmp_run_counted VAR CMD...: run CMD, store the number of device
# interrupts it caused in VAR.  Uses DMP_IRQ_RE set by the caller.
dmp_run_counted()
{
	local -n _count=$1
	local before rc=0
	shift

	before=$(dmp_irqs "$DMP_IRQ_RE")
	"$@" || rc=$?
	_count=$(($(dmp_irqs "$DMP_IRQ_RE") - before))
	return "$rc"
}

# dmp_verify_counted DEV VERIFY-ARGS...: polled write+verify on DEV, every
# I/O within DMP_MAX_LAT_MS; DMP_IRQS gets the interrupts it caused below
# DEV (or on DMP_IRQ_RE_OVERRIDE).
dmp_verify_counted()
{
	local dev=$1
	shift

	DMP_IRQ_RE=${DMP_IRQ_RE_OVERRIDE:-$(dmp_irq_regex "$dev")}
	dmp_run_counted DMP_IRQS "$DMP_VERIFY" -L "$DMP_MAX_LAT_MS" "$@" "$dev"
}

# dmp_check_polled DESC DEV VERIFY-ARGS...: polled end to end: data
# verified, no interrupt from the devices below.  One KTAP result.
dmp_check_polled()
{
	local desc=$1 dev=$2
	shift 2

	dmp_check_mode "$desc" polled "$dev" "$DMP_VERIFY" -L "$DMP_MAX_LAT_MS" "$@" "$dev"
}

# dmp_check_mode DESC polled|irq DEV CMD...: run CMD, verified I/O on DEV,
# counting the interrupts of the devices below DEV (or DMP_IRQ_RE_OVERRIDE's):
# polled, there must be none; by interrupt, the control that the count
# works, some.  One KTAP result; returns 1 if it failed.
dmp_check_mode()
{
	local desc=$1 mode=$2 dev=$3 rc=0
	shift 3

	DMP_IRQ_RE=${DMP_IRQ_RE_OVERRIDE:-$(dmp_irq_regex "$dev")}
	dmp_run_counted DMP_IRQS "$@" || rc=$?
	echo "# $desc: $DMP_IRQS interrupts (${DMP_IRQ_RE:-no device to count})"
	if [ "$rc" != 0 ]; then
		ktap_test_fail "$desc: I/O failed or was slow"
	elif [ -z "$DMP_IRQ_RE" ]; then
		# 0 interrupts of no line would prove nothing.
		echo "# $desc: no device below $dev has interrupts to count"
		ktap_test_fail "$desc: no device below has interrupts to count"
	elif [ "$mode" = polled ] && [ "$DMP_IRQS" -ne 0 ]; then
		ktap_test_fail "$desc: interrupts during polled I/O"
	elif [ "$mode" = irq ] && [ "$DMP_IRQS" -eq 0 ]; then
		ktap_test_fail "$desc: no interrupt counted"
	elif [ "$mode" = polled ]; then
		ktap_test_pass "$desc: polled, data verified, 0 interrupts"
		return 0
	else
		ktap_test_pass "$desc: completed by interrupt, data verified"
		return 0
	fi
	return 1
}

# dmp_check_below DESC LOWER START SEED SIZE: the pattern of seed SEED that
# a mapping wrote at its first SIZE bytes is on LOWER from sector START,
# numbered with the mapping's own sectors: read directly from LOWER, so a
# mapping that shifts reads and writes alike cannot pass.  One KTAP result.
dmp_check_below()
{
	local desc=$1 lower=$2 start=$3 out

	if out=$("$DMP_VERIFY" -m read -o $((start * 512)) -s "$5" -P "-$start" -S "$4" \
		-L "$DMP_MAX_LAT_MS" "$lower" 2>&1); then
		ktap_test_pass "$desc: the data is on the device below, at the table's sectors"
	else
		echo "$out" | head -n 5
		ktap_test_fail "$desc: the device below does not hold it at the table's sectors"
	fi
}

# dmp_check_polled_parts DESC DEV PARTS VERIFY-ARGS...: dmp_check_polled,
# and DEV, an md array, completed PARTS bios in all: md accounts each part
# of a bio that it or the block layer split, so a split shows there.
dmp_check_polled_parts()
{
	local desc=$1 dev=$2 parts=$3 stat before n
	shift 3

	stat=$(dmp_sysfs "$dev")/stat
	before=$(awk '{ print $1 + $5 }' "$stat")
	if ! dmp_verify_counted "$dev" "$@"; then
		ktap_test_fail "$desc: polled I/O failed or was slow"
		return
	fi
	n=$(($(awk '{ print $1 + $5 }' "$stat") - before))
	echo "# $desc: $DMP_IRQS interrupts (${DMP_IRQ_RE:-no device to count});" \
		"$dev completed $n bios, $parts expected"
	if [ -z "$DMP_IRQ_RE" ]; then
		ktap_test_fail "$desc: no device below has interrupts to count"
	elif [ "$DMP_IRQS" -ne 0 ]; then
		ktap_test_fail "$desc: interrupts during polled I/O"
	elif [ "$n" -ne "$parts" ]; then
		ktap_test_fail "$desc: not split into the expected parts"
	else
		ktap_test_pass "$desc: polled in the expected parts, data verified, 0 interrupts"
	fi
}

# dmp_check_polled_by_irq DESC DEV VERIFY-ARGS...: polled I/O to a target
# that completes it by interrupt: data verified, every I/O within
# DMP_MAX_LAT_MS, and interrupts from below (none would mean a bio was
# left on a poll queue and reaped by the timeout handler).
dmp_check_polled_by_irq()
{
	local desc=$1 dev=$2
	shift 2

	dmp_check_mode "$desc" irq "$dev" "$DMP_VERIFY" -L "$DMP_MAX_LAT_MS" "$@" "$dev"
}

# dmp_check_table polled|irq|verified DESC TABLE VERIFY-ARGS...: create a
# dm device with TABLE and check polled I/O on it in the target's mode
# ("verified": a target with no device below, whose data is checked).
dmp_check_table()
{
	local mode=$1 desc=$2 table=$3
	shift 3

	if ! dmp_dm_create "t$((++DMP_NTABLES))" "$table"; then
		ktap_test_fail "$desc: cannot create the table"
	elif [ "$mode" = polled ]; then
		dmp_check_polled "$desc" "$DMP_NODE" "$@"
	elif [ "$mode" = verified ]; then
		dmp_check_verified "$desc" "$DMP_NODE" "$@"
	else
		dmp_check_polled_by_irq "$desc" "$DMP_NODE" "$@"
	fi
}

# dmp_check_irq DESC DEV VERIFY-ARGS...: the same I/O interrupt driven must
# raise interrupts: proves the counter watches the right lines.
dmp_check_irq()
{
	local desc=$1 dev=$2
	shift 2

	dmp_check_mode "$desc, interrupt driven" irq "$dev" "$DMP_VERIFY" -I "$@" "$dev"
}

# dmp_iowq_workers: the io-wq workers of the iopoll_verify output on stdin.
dmp_iowq_workers()
{
	sed -n 's/.* iowq_workers \([0-9]*\).*/\1/p'
}

# dmp_check_iowq DESC DEV VERIFY-ARGS...: I/O that DEV fails with
# BLK_STS_AGAIN at once (REQ_NOWAIT) is retried by io_uring from an io-wq
# worker: data verified, and at least one worker seen.  One KTAP result.
dmp_check_iowq()
{
	local desc=$1 dev=$2 out rc=0 workers
	shift 2

	out=$("$DMP_VERIFY" "$@" "$dev") || rc=$?
	workers=$(dmp_iowq_workers <<<"$out")
	echo "# $desc: ${workers:-no} io-wq workers"
	if [ "$rc" -ne 0 ]; then
		tr '\n' ' ' <<<"$out" | cut -c1-300 | sed 's/^/# /'
		ktap_test_fail "$desc: I/O failed"
	elif [ "${workers:-0}" -le 0 ]; then
		ktap_test_fail "$desc: nothing was retried from io-wq"
	else
		ktap_test_pass "$desc: retried from io-wq, data verified"
	fi
}

# dmp_check_verified DESC DEV VERIFY-ARGS...: polled write+verify where
# interrupts cannot be attributed (null_blk completes without a device).
dmp_check_verified()
{
	local desc=$1 dev=$2
	shift 2

	if "$DMP_VERIFY" -L "$DMP_MAX_LAT_MS" "$@" "$dev"; then
		ktap_test_pass "$desc: polled, data verified"
	else
		ktap_test_fail "$desc: polled I/O failed"
	fi
}

# Kernel events the tests count, with hist triggers (CONFIG_HIST_TRIGGERS)
# in a trace instance of the test's own, removed on exit with the kprobe
# events the test defined.
DMP_TRACE=
DMP_KPROBES=()

dmp_trace_instance()
{
	local tracefs=/sys/kernel/tracing

	[ -z "$DMP_TRACE" ] || return 0
	[ -d "$tracefs/instances" ] ||
		mount -t tracefs nodev "$tracefs" 2>/dev/null || return 1
	mkdir "$tracefs/instances/$DMP_PREFIX" || return 1
	DMP_TRACE=$tracefs/instances/$DMP_PREFIX
	dmp_on_exit dmp_trace_remove
}

dmp_trace_remove()
{
	local k

	# Removing the instance drops its triggers; then the kprobes are free.
	[ -z "$DMP_TRACE" ] || rmdir "$DMP_TRACE"
	for k in "${DMP_KPROBES[@]}"; do
		echo "-:$k" >>/sys/kernel/tracing/kprobe_events
	done
	DMP_TRACE=""
	DMP_KPROBES=()
}

# dmp_count_start EVENT KEY FILTER: count from now on the events EVENT
# (system/name) that pass FILTER, by KEY, one of its fields.  One count
# per event at a time: dmp_count_stop adds up every histogram the event has.
dmp_count_start()
{
	dmp_trace_instance &&
		echo "hist:keys=$2 if $3" >"$DMP_TRACE/events/$1/trigger"
}

# dmp_count_peek EVENT: print what dmp_count_start has counted so far.
dmp_count_peek()
{
	awk '$1 == "Hits:" { n += $2 } END { print n + 0 }' "$DMP_TRACE/events/$1/hist"
}

# dmp_count_stop EVENT KEY FILTER: print what dmp_count_start counted
# and stop counting.
dmp_count_stop()
{
	dmp_count_peek "$1"
	echo "!hist:keys=$2 if $3" >"$DMP_TRACE/events/$1/trigger"
}

# dmp_devt DEV: DEV's device number as the kernel's trace events print it.
dmp_devt()
{
	local mm

	mm=$(cat "$(dmp_sysfs "$1")/dev") || return 1
	echo $(((${mm%:*} << 20) | ${mm#*:}))
}

# dmp_again_filter DEV...: the block_bio_complete filter of bios to DEVs
# that ended with BLK_STS_AGAIN (-EAGAIN): REQ_NOWAIT bios that found no
# tag.  Every submitted bio that ends without a request reports this event.
dmp_again_filter()
{
	local d devt list=""

	for d in "$@"; do
		devt=$(dmp_devt "$d") || return 1
		list="$list || dev == $devt"
	done
	echo "error == -11 && (${list# || })"
}

# dmp_check_again_run DESC "LOWER..." PASS CMD...: run CMD, which must
# succeed although some of its bios to the LOWER devices failed with
# BLK_STS_AGAIN: counted, so that a run where every bio found a tag cannot
# pass for a retry.  PASS says what passed.  One KTAP result.
dmp_check_again_run()
{
	local desc=$1 pass=$3 filter n rc=0
	local -a lower
	read -ra lower <<<"$2"
	shift 3

	if ! filter=$(dmp_again_filter "${lower[@]}") ||
		! dmp_count_start block/block_bio_complete dev "$filter"; then
		ktap_test_fail "$desc: cannot count block_bio_complete events"
		return
	fi
	"$@" || rc=$?
	n=$(dmp_count_stop block/block_bio_complete dev "$filter")
	echo "# $desc: ${n:-0} bios to ${lower[*]} ended with BLK_STS_AGAIN"
	if [ "$rc" != 0 ]; then
		ktap_test_fail "$desc: I/O failed"
	elif [ "${n:-0}" -eq 0 ]; then
		ktap_test_fail "$desc: no bio below ended with BLK_STS_AGAIN"
	else
		ktap_test_pass "$desc: $pass"
	fi
}

# dmp_check_again DESC "LOWER..." DEV VERIFY-ARGS...: dmp_check_again_run
# of a polled write+verify on DEV, in rounds (-Q): each round's I/Os are
# submitted together, so those that meet on a one-tag device below find
# its tag taken whatever the timing (refilled one completion at a time,
# some runs saw none).
dmp_check_again()
{
	local desc=$1 below=$2 dev=$3
	shift 3

	dmp_check_again_run "$desc" "$below" \
		"polled, BLK_STS_AGAIN below retried, data verified" \
		"$DMP_VERIFY" -Q -L "$DMP_MAX_LAT_MS" "$@" "$dev"
}

# dmp_submit_sleeps COMM CMD...: run CMD, and print how often a task
# named COMM (iopoll_verify, fio) slept in io_uring's submit path:
# sched_switch events of COMM whose stack holds io_submit_sqes() and
# schedule() (a sleep; cond_resched() and preemption go through
# __schedule() alone).  A hist key keeps the innermost 16 frames, which
# end before io_submit_sqes() in a deep stack (md's clone of a raid0
# part): __submit_bio() and mempool_alloc() count too, where COMM submits
# bios only through io_uring.  Waiting for completions in io_uring_enter()
# is not counted.  Prints nothing if the events cannot be counted; CMD's
# status is returned.
dmp_submit_sleeps()
{
	local comm=${1:0:15} trigger rc=0

	shift
	trigger="hist:keys=common_stacktrace:vals=hitcount if prev_comm == \"$comm\""
	dmp_trace_instance &&
		echo "$trigger" >"$DMP_TRACE/events/sched/sched_switch/trigger" ||
		return 1
	"$@" >/tmp/dmp-submit-sleeps.out 2>&1 || rc=$?
	awk 'index($0, "stacktrace:") { sub_ = 0; sleep_ = 0; next }
		/io_submit_sqes\+|__submit_bio\+|mempool_alloc/ { sub_ = 1 }
		/ schedule\+/ { sleep_ = 1 }
		/^} hitcount:/ { if (sub_ && sleep_) n += $3 }
		END { print n + 0 }' "$DMP_TRACE/events/sched/sched_switch/hist"
	echo "!$trigger" >"$DMP_TRACE/events/sched/sched_switch/trigger"
	return "$rc"
}

# dmp_check_no_sleep DESC FILTER WHAT NONE CMD...: run CMD, a fio load
# whose terse output is /tmp/fio.terse, counting fio's sleeps in the
# submit path (dmp_submit_sleeps) and the block_bio_complete events that
# FILTER (dmp_again_filter) matches, WHAT ("writes md", "bios to X") that
# ended with BLK_STS_AGAIN.  Pass when CMD succeeded, fio never slept
# there and some event matched; NONE says what no match means.  One KTAP
# result.
dmp_check_no_sleep()
{
	local desc=$1 filter=$2 what=$3 none=$4 again n rc=0
	shift 4

	if ! dmp_count_start block/block_bio_complete dev "$filter"; then
		ktap_test_fail "$desc: cannot count block_bio_complete events"
		return
	fi
	n=$(dmp_submit_sleeps fio "$@") || rc=$?
	again=$(dmp_count_stop block/block_bio_complete dev "$filter")
	echo "# $desc: ${n:-uncounted} sleeps in the submit path," \
		"${again:-0} $what ended with BLK_STS_AGAIN"
	if [ "$rc" != 0 ]; then
		sed 's/^/# /' /tmp/dmp-submit-sleeps.out /tmp/fio.terse | tail -3
		ktap_test_fail "$desc: I/O failed"
	elif [ "${n:-x}" != 0 ]; then
		ktap_test_fail "$desc: slept in the submit path"
	elif [ "${again:-0}" -eq 0 ]; then
		ktap_test_fail "$desc: $none"
	else
		ktap_test_pass "$desc: no sleep in the submit path"
	fi
}

# dmp_kprobe_calls FUNC: count the calls of the kernel function FUNC from
# now on, through a kprobe event; DMP_KPROBE_EV is the event, for
# dmp_count_peek, and for dmp_count_stop with key common_pid and filter
# "common_pid >= 0".
DMP_KPROBE_EV=
dmp_kprobe_calls()
{
	local ev=dmpoll$$/$1

	DMP_KPROBE_EV=
	if [[ " ${DMP_KPROBES[*]} " != *" $ev "* ]]; then
		dmp_trace_instance &&
			echo "p:$ev $1" >>/sys/kernel/tracing/kprobe_events || return 1
		DMP_KPROBES+=("$ev")
	fi
	dmp_count_start "$ev" common_pid "common_pid >= 0" || return 1
	# shellcheck disable=SC2034 # for the caller
	DMP_KPROBE_EV=$ev
}

# dmp_kprobe_bio_status: define the kprobe event DMP_BIO_STATUS_EV on
# bio_endio() with the bio's bi_status as field "status".  bi_status sits at
# offset 25 of 6.12's struct bio (8 + 8 + 4 + 2 + 2 + 1): checked here, a
# bio of the error target must end with BLK_STS_IOERR (10).  Creates and
# removes a dm device: DMP_NODE changes.
DMP_BIO_STATUS_EV=
dmp_kprobe_bio_status()
{
	local ev=dmpoll$$/bio_status n

	[ -z "$DMP_BIO_STATUS_EV" ] || return 0
	dmp_trace_instance &&
		echo "p:$ev bio_endio status=+25(\$arg1):u8" >>/sys/kernel/tracing/kprobe_events ||
		return 1
	DMP_KPROBES+=("$ev")
	dmp_count_start "$ev" status "status == 10" || return 1
	if dmp_dm_create ioerr "0 8 error"; then
		dd if="$DMP_NODE" of=/dev/null bs=4k count=1 iflag=direct status=none 2>/dev/null
		dmp_dm_remove ioerr
	fi
	n=$(dmp_count_stop "$ev" status "status == 10")
	if [ "${n:-0}" -eq 0 ]; then
		echo "# bio_endio: no BLK_STS_IOERR at offset 25, not bi_status"
		return 1
	fi
	DMP_BIO_STATUS_EV=$ev
}

# dmp_rings_under_load DESC DEV RINGS CYCLES CMD...: run CMD CYCLES times
# while RINGS processes, each with an io_uring of its own, write and read
# back their own slice of DEV (at most 32 MiB) with polled I/O, over and
# over until the cycles are done; the cycles start once every ring has
# completed an I/O (or 30 s have passed).  Every I/O must complete within 5 s
# (DMP_LOAD_MAX_LAT_MS), each pass within 180 s (DMP_LOAD_PASS_S), with
# its data.  With DMP_LOAD_ALLOW_ERRNO set (errnos, comma separated), I/O
# may also fail with those errnos: what was written is still read back
# and verified, and each ring must get some I/O through.  DMP_LOAD_BASE (bytes)
# moves the slices up; DMP_LOAD_ARGS adds iopoll_verify options (-A, -b).
# Says how often blk-mq's reaper completed polled requests meanwhile (the
# test's end fails it for any: dmp_reaped_check).  One KTAP result.
dmp_rings_under_load()
{
	local desc=$1 dev=$2 rings=$3 cycles=$4 slice r i rc=0 suspends busy
	local reaped
	# Its own files: CMD may be another dmp_rings_under_load.
	local tmp=/tmp/dmp-load.$$.$((DMP_NLOADS++)) pids=()
	local base=${DMP_LOAD_BASE:-0}
	local -a args=(-L "${DMP_LOAD_MAX_LAT_MS:-5000}" -T "${DMP_LOAD_PASS_S:-180}"
		-b 4k-64k -q 8)
	shift 4

	if ! [[ $cycles =~ ^[1-9][0-9]*$ ]]; then
		echo "# $desc: '$cycles' cycles"
		ktap_test_fail "$desc under polled load ($rings rings): no number of cycles"
		return
	fi

	# shellcheck disable=SC2206 # options, split on purpose
	args+=(${DMP_LOAD_ARGS:-})
	[ -z "${DMP_LOAD_ALLOW_ERRNO:-}" ] ||
		args+=(-E "$DMP_LOAD_ALLOW_ERRNO")
	slice=$((($(dmp_sectors "$dev") * 512 - base) / rings))
	[ "$slice" -le $((32 << 20)) ] || slice=$((32 << 20))
	rm -f "$tmp.stop"
	reaped=$(dmp_poll_reaped)
	for ((r = 0; r < rings; r++)); do
		rm -f "$tmp.$r.ready"
		dmp_load_ring "$tmp.stop" "$dev" $((121 + r)) "${args[@]}" \
			-o $((base + r * slice)) -s "$slice" -R "$tmp.$r.ready" >"$tmp.$r" 2>&1 &
		pids+=($!)
		DMP_LOAD_PIDS+=($!)
	done
	# On a slow machine a ring takes a while to start: CMD is to run under
	# the load of every ring, however few its cycles.
	i=0
	for ((r = 0; r < rings; r++)); do
		while [ ! -e "$tmp.$r.ready" ] && kill -0 "${pids[$r]}" 2>/dev/null &&
			[ $((i++)) -lt 300 ]; do
			sleep 0.1
		done
	done
	suspends=$DMP_SUSPENDS busy=$DMP_SUSPENDS_BUSY
	for ((i = 1; i <= cycles; i++)); do
		"$@" || { echo "# $desc: '$*' failed ($i)"; rc=1; break; }
	done
	suspends=$((DMP_SUSPENDS - suspends)) busy=$((DMP_SUSPENDS_BUSY - busy))
	if [ "$suspends" -gt 0 ]; then
		echo "# $desc: I/O in flight around $busy of $suspends suspends"
		[ "$busy" -gt 0 ] || { echo "# $desc: no suspend met the load"; rc=1; }
	else
		echo "# $desc: no suspend noted (dmp_note_inflight), none checked"
	fi
	touch "$tmp.stop"
	for ((r = 0; r < rings; r++)); do
		wait "${pids[$r]}" || rc=1
		sed -n "s/^# /# ring $r: /p" "$tmp.$r"
		rm -f "$tmp.$r" "$tmp.$r.ready"
		dmp_load_ended "${pids[$r]}"
	done
	rm -f "$tmp.stop"
	# The test's end fails it for any reap; this says which load met it.
	echo "# $desc: $rings rings, $cycles cycles, the reaper's polls" \
		"completed polled requests $(($(dmp_poll_reaped) - reaped)) times"
	desc="$desc under polled load ($rings rings)"
	if [ "$rc" = 0 ]; then
		ktap_test_pass "$desc: all I/O done and verified"
	else
		ktap_test_fail "$desc"
	fi
}

# dmp_verify_ios_through OUTPUT: the I/Os of an iopoll_verify run that did
# not fail with an errno -E allows, from its "writes W reads R errors E/A".
dmp_verify_ios_through()
{
	echo "$1" | awk '$1 == "#" && / writes [0-9]+ reads [0-9]+ errors / {
		for (i = 1; i < NF; i++) {
			if ($i == "writes") w = $(i + 1)
			if ($i == "reads") r = $(i + 1)
			if ($i == "errors") { split($(i + 1), e, "/"); a = e[2] }
		}
	}
	END { print w + r - a }'
}

# dmp_load_ended PID: forget load PID, already reaped: not for dmp_kill_loads.
dmp_load_ended()
{
	local i

	for i in "${!DMP_LOAD_PIDS[@]}"; do
		[ "${DMP_LOAD_PIDS[$i]}" != "$1" ] || unset "DMP_LOAD_PIDS[$i]"
	done
	DMP_LOAD_PIDS=("${DMP_LOAD_PIDS[@]}")
}

# dmp_load_ring STOPFILE DEV SEED ARGS...: iopoll_verify ARGS on DEV until
# STOPFILE exists, at least once; each pass writes a new pattern, so that
# a lost write shows.  Fails if no I/O of any pass got through (every one
# failed with an errno -E allows).
dmp_load_ring()
{
	local stop=$1 dev=$2 seed=$3 pass=0 out done=0 n
	shift 3

	while [ "$pass" = 0 ] || [ ! -e "$stop" ]; do
		if ! out=$("$DMP_VERIFY" "$@" -S $((seed + pass * 64)) "$dev" 2>&1); then
			echo "$out"
			echo "# failed in pass $((pass + 1))"
			return 1
		fi
		n=$(dmp_verify_ios_through "$out")
		done=$((done + ${n:-0}))
		pass=$((pass + 1))
	done
	echo "# $pass passes, $done I/Os through, the last: ${out#\# }"
	[ "$done" -gt 0 ] || { echo "# no I/O got through"; return 1; }
}

# dmp_under_load DESC DEV CMD...: run CMD five times, 0.3 s apart, under
# one ring of polled load; see dmp_rings_under_load.
dmp_under_load()
{
	local desc=$1 dev=$2
	shift 2

	dmp_rings_under_load "$desc" "$dev" 1 5 dmp_after_pause 0.3 "$@"
}

# dmp_freeze_queue NODE: one freeze and unfreeze of NODE's queue: every
# store to a queue attribute freezes it; this one writes iostats back.
dmp_freeze_queue()
{
	local f v

	f=$(dmp_sysfs "$1")/queue/iostats
	v=$(cat "$f") && echo "$v" >"$f"
}

# dmp_reap_off DEV...: blk-mq's reaper off on the queues of DEV..., so that
# nothing but their pollers and the code under test polls them; back at
# exit to what it was.
dmp_reap_off()
{
	local d f

	for d in "$@"; do
		f=$(dmp_sysfs "$d")/queue/io_poll_reap_ms
		[ -e "$f" ] || { echo "# $d has no io_poll_reap_ms"; return 1; }
		dmp_on_exit "[ ! -e $f ] || echo $(cat "$f") >$f"
		echo 0 >"$f"
	done
}

# dmp_hold_start DIR DEV SEED [ARG...]: a thread that keeps 8 polled reads
# of 4 KiB in flight on DEV and, once they are, stops polling until DIR/go
# exists (iopoll_verify -H); then it writes with a blocking pwrite() and
# goes on, its data verified.  ARGs go to iopoll_verify after the
# defaults.  Output in DIR/out; DMP_HOLD_PID is the thread's process.
# Fails if the reads were never in flight.
dmp_hold_start()
{
	local dir=$1 dev=$2 seed=$3 t=0

	shift 3
	rm -f "$dir/ready" "$dir/go"
	"$DMP_VERIFY" -m rw -s 8M -b 4k -q 8 -S "$seed" -w 1000 -L 5000 -T 120 \
		"$@" -H "$dir/ready,$dir/go" "$dev" >"$dir/out" 2>&1 &
	DMP_HOLD_PID=$!
	while [ ! -e "$dir/ready" ] && kill -0 "$DMP_HOLD_PID" 2>/dev/null &&
		[ "$t" -lt 600 ]; do
		sleep 0.1
		t=$((t + 1))
	done
	[ -e "$dir/ready" ] && return 0
	kill "$DMP_HOLD_PID" 2>/dev/null
	wait "$DMP_HOLD_PID"
	sed 's/^/# /' "$dir/out"
	echo "# iopoll_verify never had its reads in flight on $dev"
	return 1
}

# dmp_hold_end DIR: let the thread of dmp_hold_start go on; fails if it
# failed, whose output it shows.
dmp_hold_end()
{
	local rc=0

	touch "$1/go"
	wait "$DMP_HOLD_PID" || rc=1
	sed 's/^/# /' "$1/out"
	return "$rc"
}

# dmp_done_within PID SECONDS: whether PID, a child, ended within SECONDS.
dmp_done_within()
{
	local t=0

	while kill -0 "$1" 2>/dev/null; do
		[ "$t" -lt $(($2 * 10)) ] || return 1
		sleep 0.1
		t=$((t + 1))
	done
}

# dmp_scaled N: how many cycles (or seconds) of a stress loop to run: N
# with DMP_FULL=1 (make check FULL=1), a quarter of N, at least 1, in
# the default run, which has to fit CI's time.
dmp_scaled()
{
	if [ "${DMP_FULL:-0}" = 1 ]; then
		echo "$1"
	else
		echo $(($1 / 4 > 0 ? $1 / 4 : 1))
	fi
}

# dmp_after_pause SECONDS CMD...
dmp_after_pause()
{
	sleep "$1"
	shift
	"$@"
}

# dmp_check_eopnotsupp DESC DEV: polled I/O to DEV, which cannot poll,
# fails at once with EOPNOTSUPP.  One KTAP result.
dmp_check_eopnotsupp()
{
	if "$DMP_VERIFY" -s 1M -b 4k -q 4 -e 95 -L 1000 "$2"; then
		ktap_test_pass "$1: polled I/O fails with EOPNOTSUPP within 1 s"
	else
		ktap_test_fail "$1: polled I/O did not fail with EOPNOTSUPP promptly"
	fi
}

# dmp_require_slub_stats: the bio slabs' allocation counters, or skip.
dmp_require_slub_stats()
{
	ls /sys/kernel/slab/bio-*/alloc_fastpath >/dev/null 2>&1 ||
		dmp_skip_all "needs CONFIG_SLUB_STATS (/sys/kernel/slab/bio-*/alloc_fastpath)"
}

# dmp_bio_slab_allocs: allocations from every bio slab so far.
dmp_bio_slab_allocs()
{
	cat /sys/kernel/slab/bio-*/alloc_fastpath /sys/kernel/slab/bio-*/alloc_slowpath |
		awk '{ sum += $1 } END { print sum + 0 }'
}

# dmp_check_bio_cache DESC DEV [VERIFY-ARGS...]: polled 4 KiB I/Os on DEV
# (a write and a read of 8 MiB, or what VERIFY-ARGS say) cost fewer than
# one bio slab allocation per 8: the bios come from the per-cpu bio cache.
# One KTAP result.
dmp_check_bio_cache()
{
	local desc=$1 dev=$2 before allocs out ios
	shift 2

	before=$(dmp_bio_slab_allocs)
	if ! out=$("$DMP_VERIFY" -s 8M -b 4k -q 8 -S 131 "$@" "$dev"); then
		echo "$out"
		ktap_test_fail "$desc: polled I/O failed"
		return
	fi
	allocs=$(($(dmp_bio_slab_allocs) - before))
	ios=$(sed -n 's/.*: writes \([0-9]*\) reads \([0-9]*\) .*/\1 + \2/p' <<<"$out")
	ios=$((ios))
	echo "# $desc: $allocs bio slab allocations for $ios polled I/Os"
	if [ "$allocs" -lt $((ios / 8)) ]; then
		ktap_test_pass "$desc: under one bio slab allocation per 8 polled I/Os"
	else
		echo "# $desc: no bio cache"
		ktap_test_fail "$desc: under one bio slab allocation per 8 polled I/Os"
	fi
}

# dmp_check_io_poll DESC DEV EXPECTED
dmp_check_io_poll()
{
	local got

	got=$(dmp_io_poll "$2")
	if [ "$got" = "$3" ]; then
		ktap_test_pass "$1: queue/io_poll is $3"
	else
		echo "# $1: queue/io_poll is $got"
		ktap_test_fail "$1: queue/io_poll is not $3"
	fi
}
