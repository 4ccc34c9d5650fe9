#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A polled ring goes away while its bios are linked in the stack's poll
# lists: through dm-striped and md raid0 with 4 KiB chunks, 32 writes of
# 256 KiB (64 linked parts each) are submitted and then the ring is closed
# without reaping them (iopoll_verify -K close), or the task is killed
# with SIGKILL right after submitting (-K kill), or while it polls (kill
# -9 from here).  io_uring's exit work must then poll or cancel what is
# left: within 10 s nothing is in flight on the stack or the namespaces
# below (a bio nobody polls would wait for NVMe's timeout, 30 s), a fresh
# ring's polled I/O works, verified, 0 interrupts, and the device can be
# removed or stopped.  A hang, a WARN or an NVMe timeout fails the test
# (lib.sh checks the kernel log).
# What a closed or killed ring left, io_uring's exit work polls, a request
# at a time from the head of its list, starting again whenever one
# completes: under QEMU's TCG a poll queue whose requests sit at the tail
# may wait longer than the 1 s lib.sh allows.  Exit work that did not poll
# still shows: the reaper would take the requests at 5 s.
DMP_REAP_MS=${DMP_REAP_MS-5000}
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup mdadm
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

CYCLES=5
burst=(-s 16M -b 256k -q 32 -T 60)

# close_inflight SYSDIR: I/Os in flight on a block device and on every
# device below it.
close_inflight()
{
	local sys=$1 lower n

	n=$(awk '{ print $1 + $2 }' "$sys/inflight")
	for lower in "$sys"/slaves/*; do
		[ -e "$lower" ] || continue
		n=$((n + $(close_inflight "$(readlink -f "$lower")")))
	done
	echo "$n"
}

# close_drained DEV: within 10 s nothing is in flight on DEV or below it,
# and a dm device is open no more; says what is left otherwise.
close_drained()
{
	local dev=$1 sys n open=0 i

	sys=$(readlink -f "$(dmp_sysfs "$dev")")
	for ((i = 0; i < 100; i++)); do
		n=$(close_inflight "$sys")
		[ "${dev#/dev/mapper/}" = "$dev" ] ||
			open=$(dmsetup info -c --noheadings -o open "${dev#/dev/mapper/}" |
				tr -d ' ')
		[ "$n" = 0 ] && [ "$open" = 0 ] && return 0
		sleep 0.1
	done
	echo "# $dev: after 10 s, $n I/Os in flight on it and below, open count $open"
	return 1
}

# close_cycles DESC DEV KIND: CYCLES times, a burst of polled writes to
# DEV and then KIND: "close" the ring, "kill" the task after submitting,
# or "kill9" it from here while it polls.  One KTAP result.
close_cycles()
{
	local desc=$1 dev=$2 kind=$3 i rc out pid ready=/tmp/close-ready.$$ want=0

	[ "$kind" = close ] || want=137
	for ((i = 1; i <= CYCLES; i++)); do
		rc=0
		case $kind in
		kill9)
			rm -f "$ready"
			"$DMP_VERIFY" "${burst[@]}" -s 64M -S $((90 + i)) -R "$ready" "$dev" \
				>/tmp/close-out.$$ 2>&1 &
			pid=$!
			while [ ! -e "$ready" ] && kill -0 "$pid" 2>/dev/null; do
				sleep 0.05
			done
			sleep 0.2
			kill -KILL "$pid" 2>/dev/null
			# Not a word from bash about the job it killed.
			wait "$pid" 2>/dev/null || rc=$?
			out="$(cat /tmp/close-out.$$)
# killed once its first I/O had completed"
			;;
		*)
			out=$("$DMP_VERIFY" "${burst[@]}" -K "$kind" -S $((90 + i)) "$dev") || rc=$?
			;;
		esac
		if [ "$rc" != "$want" ]; then
			echo "$out"
			echo "# $desc: cycle $i: exit status $rc, not $want"
			ktap_test_fail "$desc: unexpected exit status"
			return
		fi
		if [ "$kind" != kill9 ] &&
			! grep -qE 'with [1-9][0-9]* of [0-9]+ I/Os outstanding' <<<"$out"; then
			echo "$out"
			echo "# $desc: cycle $i: no I/O was outstanding"
			ktap_test_fail "$desc: no I/O was outstanding"
			return
		fi
		if ! close_drained "$dev"; then
			echo "# $desc: cycle $i: I/O left behind"
			ktap_test_fail "$desc: I/O left behind"
			return
		fi
	done
	rm -f "$ready" /tmp/close-out.$$
	echo "# $desc: $CYCLES cycles, the last: ${out##*$'\n'# }"
	ktap_test_pass "$desc: nothing left in flight"
}

# close_cases STACK DEV: the three ways to lose a ring, then a fresh ring
# and its interrupt-driven control; five KTAP results.
close_cases()
{
	local stack=$1 dev=$2

	close_cycles "$stack: ring closed with polled bios linked" "$dev" close
	close_cycles "$stack: task killed (SIGKILL) with polled bios linked" "$dev" kill
	close_cycles "$stack: task killed (SIGKILL) while it polls" "$dev" kill9
	dmp_check_polled "$stack: a fresh ring afterwards" "$dev" -s 8M -b 4k-256k -q 16 -S 97
	dmp_check_irq "$stack: a fresh ring afterwards, interrupt driven" "$dev" \
		-s 4M -b 4k-256k -q 16 -S 98
}

ktap_print_header
ktap_set_plan 12
dmp_dm_create close-striped "0 131072 striped 2 8 $a 0 $b 0" ||
	ktap_exit_fail_msg "cannot create dm-striped"
close_cases dm-striped "$DMP_NODE"
if dmp_dm_remove close-striped; then
	ktap_test_pass "dm-striped: dmsetup remove succeeds afterwards"
else
	ktap_test_fail "dm-striped: dmsetup remove fails afterwards"
fi

dmp_md_create 0 --chunk=4 -- "$a" "$b" || ktap_exit_fail_msg "cannot create md raid0"
close_cases "md raid0" "$DMP_NODE"
if dmp_md_stop "$DMP_NODE"; then
	ktap_test_pass "md raid0: mdadm --stop succeeds afterwards"
else
	ktap_test_fail "md raid0: mdadm --stop fails afterwards"
fi
ktap_finished
