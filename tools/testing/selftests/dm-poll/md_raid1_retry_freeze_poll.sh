#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# raid1d retries a read that failed on one mirror with the r1bio still
# counted in nr_pending: handle_read_error() drops that count only after
# the retry.  A freeze_array(conf, 0) that starts meanwhile waits for the
# count, so the retry must not wait for the freeze to end; raid10 lets
# its own thread through, raid1 did not.  The freezer here is the quiesce
# before a recovery (md_sync_position() with a bitmap), which no suspend
# precedes when the recovering member has I/O in flight
# (md_spares_need_change() leaves it be): it runs with I/O in flight.
#
# A raid1 of three legs: A failfast, whose reads take 3 s and fail on one
# block (dm-delay over dm-dust); B write-mostly; C a new member whose
# recovery is frozen and whose writes take 6 s.  With a write and a read
# of the bad block in flight, the recovery resumes: its freeze waits for
# the write, the read fails on A meanwhile and raid1d retries it on B.
# On Linux 6.12 the retry sleeps in wait_read_barrier() and the freeze
# waits for it: the array hangs for ever.  Not polled I/O: the bug is
# raid1's.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup mdadm dd
# Where the recovery waits is read from its stack.
cat /proc/self/stack >/dev/null 2>&1 ||
	dmp_skip_all "no /proc/PID/stack (CONFIG_STACKTRACE)"
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}
size=131072
# The array sector read, far from where the frozen recovery stopped.
bad_sector=98304
# The write takes 6 s, or 12 s if its bitmap page is written first; the
# hang is for ever.
limit=40

# delay_table DEV START DATA READ_MS WRITE_MS: a table of the $size
# sectors of DEV from START whose reads and writes from sector DATA on
# (md's data) are delayed; md's superblock and bitmap, and flushes, which
# DM sends to every target, stay fast, or raid1d would wait for them.
delay_table()
{
	local d="$1 $(($2 + $3))"

	echo "0 $3 linear $1 $2"
	echo "$3 $((size - $3)) delay $d $4 $d $5 $d 0"
}

# reload NAME TABLE: give the DM device NAME a new table.
reload()
{
	dmsetup reload "$1" --table "$2" && dmsetup resume "$1"
}

# md_dev NODE: NODE's name in md's sysfs directory (dev-NAME).
md_dev()
{
	basename "$(readlink -f "$(dmp_sysfs "$1")")"
}

# task_named COMM: the pid of a task named COMM, if one runs.
task_named()
{
	grep -lx "$1" /proc/[0-9]*/comm 2>/dev/null | head -n 1 | cut -d/ -f3
}

# resync_thread MD: the pid of MD's sync thread, if one runs.
resync_thread()
{
	task_named "${1#/dev/}_resync"
}

# start_frozen_recovery MD SYS SPARE: add SPARE as a new device, let the
# recovery start at 1 KiB/s, and freeze it with SPARE in its slot.
start_frozen_recovery()
{
	local md=$1 sys=$2 spare=$3 i

	echo 1 >"$sys/sync_speed_min" && echo 1 >"$sys/sync_speed_max" || return 1
	mdadm "$md" --add "$spare" >/dev/null 2>&1 || return 1
	for ((i = 0; i < 100; i++)); do
		[ "$(cat "$sys/sync_action")" = recover ] && break
		sleep 0.1
	done
	[ "$(cat "$sys/sync_action")" = recover ] ||
		{ echo "# no recovery started"; return 1; }
	echo frozen >"$sys/sync_action"
	for ((i = 0; i < 100; i++)); do
		[ -z "$(resync_thread "$md")" ] && break
		sleep 0.1
	done
	[ -z "$(resync_thread "$md")" ] || { echo "# the recovery did not stop"; return 1; }
	# raid1d may still hand the spare to md_start_sync() once more.
	sleep 1
}

# delayed NAME READS WRITES: wait up to 2 s until the dm-delay segment of
# NAME holds at least READS reads and WRITES writes.
delayed()
{
	local i r w

	for ((i = 0; i < 20; i++)); do
		read -r _ _ _ r w _ < <(dmsetup status "$1" | grep ' delay ')
		[ "${r:-0}" -ge "$2" ] && [ "${w:-0}" -ge "$3" ] && return 0
		sleep 0.1
	done
	echo "# $1 holds $r reads and $w writes, not $2 and $3"
	return 1
}

# retry_during_freeze: one KTAP result.
retry_during_freeze()
{
	local dust slowa c md sys spare off bad t rc=0 wpid rpid sync stack

	dmp_dm_create dust "0 $size dust $a 0 512" || return 1
	dust=$DMP_NODE
	dmp_dm_create slowa "0 $size linear $dust 0" || return 1
	slowa=$DMP_NODE
	dmp_dm_create spare "0 $size linear $a $size" || return 1
	c=$DMP_NODE
	dmp_md_create 1 --assume-clean --bitmap=internal -- \
		--failfast "$slowa" --write-mostly "$b" "$c" ||
		return 1
	md=$DMP_NODE
	sys=$(dmp_sysfs "$md")/md
	spare=$(md_dev "$c")
	mdadm "$md" --fail "$c" --remove "$c" >/dev/null 2>&1 &&
		mdadm --zero-superblock "$c" || return 1
	start_frozen_recovery "$md" "$sys" "$c" || return 1
	echo "# the spare: slot $(cat "$sys/dev-$spare/slot"), recovery at" \
		"$(cat "$sys/dev-$spare/recovery_start"), state $(cat "$sys/dev-$spare/state")"
	[ "$(cat "$sys/dev-$spare/recovery_start")" != none ] ||
		{ echo "# the spare recovered already"; return 1; }
	# The array dirty and staying so: the write below must reach raid1,
	# not wait in md_write_start() for a superblock update.
	echo 600 >"$sys/safe_mode_delay"
	dd if=/dev/zero of="$md" bs=4k count=1 seek=32 oflag=direct status=none ||
		return 1

	off=$(cat "$sys/dev-$(md_dev "$slowa")/offset") || return 1
	bad=$((off + bad_sector))
	dmsetup message "${dust#/dev/mapper/}" 0 addbadblock "$bad" >/dev/null &&
		dmsetup message "${dust#/dev/mapper/}" 0 enable >/dev/null || return 1
	reload "${slowa#/dev/mapper/}" "$(delay_table "$dust" 0 "$off" 3000 0)" &&
		reload "${c#/dev/mapper/}" "$(delay_table "$a" "$size" "$off" 0 6000)" ||
		return 1

	# Neither holds this test's output open should it hang.
	dd if=/dev/zero of="$md" bs=4k count=1 seek=64 oflag=direct status=none \
		>/dev/null 2>&1 &
	wpid=$!
	dd if="$md" of=/dev/null bs=4k count=1 skip=$((bad_sector / 8)) \
		iflag=direct status=none 2>/dev/null &
	rpid=$!
	# Both at the legs that hold them, and so C busy, which spares the
	# recovery a suspend: the read on A (3 s), the write on C (6 s).
	delayed "${slowa#/dev/mapper/}" 1 0 && delayed "${c#/dev/mapper/}" 0 1 ||
		rc=1
	# A subshell: a signal to this shell (a child's end) would interrupt
	# the write while it waits for md's lock.
	(echo idle >"$sys/sync_action") || rc=1
	# The recovery's quiesce waits for both, before the read fails (3 s).
	for ((t = 0; t < 20; t++)); do
		sync=$(resync_thread "$md")
		stack=$( [ -n "$sync" ] && cat "/proc/$sync/stack" 2>/dev/null)
		grep -q freeze_array <<<"$stack" && break
		sleep 0.1
	done
	if ! grep -q freeze_array <<<"$stack"; then
		echo "# the recovery is not in freeze_array() with I/O in flight:"
		printf "%s\n" "${stack:-no sync thread}" | head -n 8 | sed "s/^/#   /"
		rc=1
	elif ! delayed "${slowa#/dev/mapper/}" 1 0; then
		echo "# the read left A before the freeze began: raid1d retried it unfrozen"
		rc=1
	fi
	for ((t = 20; t < limit * 10; t++)); do
		kill -0 "$rpid" 2>/dev/null || kill -0 "$wpid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$rpid" 2>/dev/null || kill -0 "$wpid" 2>/dev/null; then
		echo "# after $limit s: the read is $(dmp_proc_state "$rpid" || echo over)," \
			"the write $(dmp_proc_state "$wpid" || echo over)"
		for t in $(task_named "${md#/dev/}_raid1") $(resync_thread "$md"); do
			echo "# $(cat "/proc/$t/comm"):"
			sed 's/^/#   /' "/proc/$t/stack" | head -n 6
		done
		echo "# the array hangs: left as it is, with its members"
		DMP_TEARDOWN=()
		return 1
	fi
	# The recovery's writes to C wait 6 s each: end that for the teardown
	# (dm-delay sends what it holds when suspended).
	echo frozen >"$sys/sync_action"
	reload "${c#/dev/mapper/}" "0 $size linear $a $size" || rc=1
	wait "$rpid" || { echo "# the read of the bad block failed"; rc=1; }
	wait "$wpid" || { echo "# the write failed"; rc=1; }
	echo "# read and write done in $((t / 10)).$((t % 10)) s"
	grep -q "redirecting sector" <(dmp_kernel_log) ||
		{ echo "# raid1d did not retry the read on another leg"; rc=1; }
	return "$rc"
}

ktap_print_header
ktap_set_plan 1
if retry_during_freeze; then
	ktap_test_pass "raid1: a read raid1d retries while a recovery's quiesce waits"
else
	ktap_test_fail "raid1: a read raid1d retries while a recovery's quiesce waits"
fi
ktap_finished
