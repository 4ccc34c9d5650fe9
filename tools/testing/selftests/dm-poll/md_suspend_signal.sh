#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A suspend through sysfs (suspend_lo here; every attribute that suspends
# the array does the same) waits interruptibly for the I/O in flight.  A
# signal ends the wait and mddev_suspend() gives active_io back, but the
# bios that came in the meantime sleep in md_handle_request() until
# sb_wait is woken.  On Linux 6.12 nothing woke it: they slept until the
# array's next superblock update or suspend, for ever on an array that
# only reads.  Not polled I/O: the bug is md's.
#
# A raid1 whose legs hold reads of md's data for 3 s (dm-delay): read A
# holds active_io, a write to suspend_lo waits for it, read B waits for
# the suspend, and the writer is killed.  B must end once A did.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup mdadm dd
# Where the writer and B wait is read from their stacks.
cat /proc/self/stack >/dev/null 2>&1 ||
	dmp_skip_all "no /proc/PID/stack (CONFIG_STACKTRACE)"
dmp_get_nvme_devs 2
size=131072
# A's read takes 3 s, B's as long once it runs; B waits for ever if the
# bug is there.
limit=15

# delay_table DEV DATA: DEV's first $size sectors with the reads from
# sector DATA on (md's data) held 3 s; md's superblock stays fast.
delay_table()
{
	echo "0 $2 linear $1 0"
	echo "$2 $((size - $2)) delay $1 $2 3000 $1 $2 0"
}

# held_reads NAME...: how many reads the dm-delay segments of NAME... hold.
held_reads()
{
	local n=0 r name

	for name in "$@"; do
		read -r _ _ _ r _ < <(dmsetup status "$name" | grep ' delay ')
		n=$((n + ${r:-0}))
	done
	echo "$n"
}

# waits_in PID FUNCTION: wait up to 2 s until PID's stack shows FUNCTION.
waits_in()
{
	local i

	for ((i = 0; i < 20; i++)); do
		grep -q "$2" "/proc/$1/stack" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "# pid $1 does not wait in $2:"
	sed 's/^/#   /' "/proc/$1/stack" 2>/dev/null | head -n 8
	return 1
}

# read_at MD BLOCK: one 4 KiB O_DIRECT read of MD's 4 KiB block BLOCK,
# for the background: the job's pid is the reader's.
read_at()
{
	exec dd if="$1" of=/dev/null bs=4k count=1 skip="$2" iflag=direct \
		status=none 2>/dev/null
}

# killed_suspend: one KTAP result.
killed_suspend()
{
	local a b md sys off na apid bpid spid t rc=0

	dmp_dm_create a "0 $size linear ${DMP_NVME[0]} 0" || return 1
	a=${DMP_NODE#/dev/mapper/}
	dmp_dm_create b "0 $size linear ${DMP_NVME[1]} 0" || return 1
	b=${DMP_NODE#/dev/mapper/}
	dmp_md_create 1 --assume-clean --bitmap=none -- \
		"/dev/mapper/$a" "/dev/mapper/$b" || return 1
	md=$DMP_NODE
	sys=$(dmp_sysfs "$md")/md
	# Both legs the same size, so md's data starts at the same offset.
	off=$(cat "$sys/dev-$(basename "$(readlink -f "$(dmp_sysfs "/dev/mapper/$a")")")/offset") ||
		return 1
	dmsetup reload "$a" --table "$(delay_table "${DMP_NVME[0]}" "$off")" &&
		dmsetup resume "$a" &&
		dmsetup reload "$b" --table "$(delay_table "${DMP_NVME[1]}" "$off")" &&
		dmsetup resume "$b" || return 1
	na=$(held_reads "$a" "$b")

	read_at "$md" 4096 &
	apid=$!
	for ((t = 0; t < 20; t++)); do
		[ "$(held_reads "$a" "$b")" -gt "$na" ] && break
		sleep 0.1
	done
	[ "$(held_reads "$a" "$b")" -gt "$na" ] ||
		{ echo "# read A is not held by a leg"; return 1; }
	# A subshell writes, so that only it takes the signal.
	(echo 0 >"$sys/suspend_lo") 2>/dev/null &
	spid=$!
	waits_in "$spid" mddev_suspend || rc=1
	read_at "$md" 8192 &
	bpid=$!
	waits_in "$bpid" md_handle_request || rc=1
	# Only a kill while A holds the suspend back tests the error path: a
	# suspend that completed would wake B itself.
	if ! kill -0 "$apid" 2>/dev/null ||
		! grep -q mddev_suspend "/proc/$spid/stack" 2>/dev/null; then
		echo "# read A ended, or the suspend returned, before the kill"
		rc=1
	fi
	kill -KILL "$spid"
	wait "$spid" 2>/dev/null
	t=$?
	[ "$t" = 137 ] ||
		{ echo "# the suspend's writer ended with $t, not killed in the wait"; rc=1; }
	for ((t = 0; t < limit * 10; t++)); do
		kill -0 "$bpid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$bpid" 2>/dev/null; then
		echo "# read B still waits $limit s after the suspend was killed" \
			"(A $(dmp_proc_state "$apid" || echo over)):"
		sed 's/^/#   /' "/proc/$bpid/stack" | head -n 6
		# A suspend that completes wakes B, for the teardown.
		echo 0 >"$sys/suspend_lo"
		rc=1
	else
		echo "# read B done $((t / 10)).$((t % 10)) s after the suspend was killed"
	fi
	wait "$apid" || { echo "# read A failed"; rc=1; }
	wait "$bpid" || { echo "# read B failed"; rc=1; }
	return "$rc"
}

ktap_print_header
ktap_set_plan 1
if killed_suspend; then
	ktap_test_pass "raid1: reads that waited for a suspend run once a signal ends it"
else
	ktap_test_fail "raid1: reads that waited for a suspend run once a signal ends it"
fi
ktap_finished
