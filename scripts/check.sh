#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "make check": build everything, check the series on the host, run the
# dm-poll kselftests in the VM and count the results.
#
#   BASE=1      run against the unpatched base kernel instead
#   TESTS="a.sh b.sh"  run only these kselftests (default: all but those
#                      in scripts/known-issues, which are reported skipped)
#                      Those that scripts/vm-machines assigns to another VM
#                      machine run after the rest, in a VM of that machine.
#
#   FULL=1      the stress loops of the tests at full length (DMP_FULL=1 in
#               the guest; the default runs a quarter), and then, on the
#               patched series, the debug kernel (scripts/debug.config:
#               KASAN, lockdep, DEBUG_ATOMIC_SLEEP, DEBUG_LIST, debug
#               objects, kmemleak; booted with panic_on_warn=1 and
#               preempt=full) runs the kselftests of scripts/debug-tests,
#               and kmemleak is scanned after them.  Its cold build and
#               its run do not fit make check's 60 minutes.
#   DEBUG=1     the debug kernel only, with every kselftest (or TESTS)
#   DEBUG=0     no debug kernel, also with FULL=1
#   QUICK=1     the inner loop: the kselftests (TESTS) in the VM only, no
#               host checks, no debug kernel, no bench smoke
#
# Ends with "N passed, N failed, N skipped" (every KTAP test case, plus
# the host checks and the VM's own health) and fails on any failure.
set -eu
. "$(dirname "$0")/lib.sh"

tree=$(sp_tree)
debug=${DEBUG:-}
scripts=$SP_TOP/scripts
start=$(date +%s)
quick=${QUICK:-}
full=${FULL:-}
case $full in
'' | 0) full='' ;;
1) ;;
*) die "FULL=$full: 1 (full-length stress loops) or unset" ;;
esac
[ -z "$quick" ] || debug=0
case $tree:$debug in
base:1) die "DEBUG=1 is the patched series' debug kernel: not with BASE=1" ;;
base:*) debug=0 ;;
*:1) tree=debug ;;
*:0 | *:) ;;
*) die "DEBUG=$debug: 1 (only the debug kernel), 0 (none) or unset" ;;
esac
tap=$SP_LOGS/check-$tree.tap

bash "$scripts/deps.sh"
bash "$scripts/base-tree.sh"
bash "$scripts/apply-series.sh"
kernel=$(bash "$scripts/build-kernel.sh" "$tree")
bash "$scripts/initramfs.sh" >/dev/null

: >"$tap"
# host_check DESC CMD...: one host-side result line.
host_check() {
	local desc=$1 log
	shift
	log=$SP_LOGS/check-host-$(echo "$desc" | tr -c 'a-z0-9\n' '-').log
	if "$@" >"$log" 2>&1; then
		echo "ok - host: $desc" >>"$tap"
	else
		echo "not ok - host: $desc (log: $log)" >>"$tap"
		tail -n 20 "$log" >&2
	fi
}

# The fault-injection module needs the series' poll list: patched only.
if [ "$tree" != base ]; then
	if [ -n "$quick" ]; then
		bash "$scripts/build-module.sh" "$tree" >/dev/null
	else
		host_check "dmp_fault test module builds with W=1, no warnings" \
			bash "$scripts/build-module.sh" "$tree"
	fi
fi
say "check: host checks${quick:+ skipped (QUICK=1)}"
if [ -z "$quick" ]; then
	host_check "the test kernel's block stack is configured as Debian's" \
		bash "$scripts/check-config.sh"
	host_check "series exports with format-patch and passes checkpatch --strict" \
		bash "$scripts/export-series.sh"
	host_check "git am of the exported series onto the base gives the applied tree" \
		bash "$scripts/verify-series.sh"
	host_check "every file the series adds is here as at the end of the series" \
		bash "$scripts/check-added-files.sh"
	host_check "series machinery round trip (edit, add, Kconfig splice, drifted added file)" \
		bash "$scripts/test-series.sh"
	host_check "a test that skips in the VM fails make check; a known issue does not" \
		bash "$scripts/test-tap-summary.sh"
	host_check "shellcheck of scripts and selftests" \
		shellcheck "$scripts"/*.sh "$scripts"/guest/*.sh "$scripts/guest/init" \
		"$SP_TOP"/tools/testing/selftests/dm-poll/*.sh
	host_check "VM runner returns the job's status and fails on a guest crash" \
		bash "$scripts/test-harness.sh" "$kernel"
fi

# bench_smoke: a few points of make bench under -icount, on the kernel
# built above, and its no-regression rows on the base kernel too (built
# below).  It runs one host thread, whose guest time does not depend on
# the host's load: it runs beside the debug kernel's build, after the
# timed VM tests.
bench_smoke() {
	host_check "make bench smoke: a few points under -icount, base against ours, JSON, table, plot" \
		bash "$scripts/bench.sh" --smoke --built
}

# all_tests: every installed dm-poll test but the known issues, each of
# which is reported as skipped with its reason.
all_tests() {
	local t why list=''

	while read -r t; do
		why=$(awk -v t="$t" '$1 == t { $1 = ""; sub(/^ /, ""); print }' "$scripts/known-issues")
		if [ -n "$why" ]; then
			echo "ok - known issue: $t # SKIP $why" >>"$tap"
		else
			list="$list $t"
		fi
	done < <(sed -n 's/^dm-poll://p' "$SP_BUILD/initramfs/kselftest/kselftest-list.txt")
	echo "$list"
}

# vm_suite NAME KERNEL TIMEOUT TESTS [VM-RUN-OPTION...]: the kselftests in
# one VM, their TAP into $tap, and two lines of the VM's own health.
vm_rc=0
vm_suite() {
	local name=$1 kernel=$2 timeout=$3 tests=$4 out plan results
	shift 4

	say "check: dm-poll kselftests in the VM ($name)"
	# shellcheck disable=SC2086 # a word list
	bash "$scripts/vm-run.sh" --name "$name" --timeout "$timeout" "$@" \
		"$kernel" check $tests || vm_rc=1
	out=$SP_LOGS/$name.out
	tr -d '\r' <"$out" >>"$tap"
	plan=$(tr -d '\r' <"$out" | sed -n 's/^1\.\.\([0-9]*\)$/\1/p')
	results=$(tr -d '\r' <"$out" | grep -cE '^(not )?ok [0-9]+ selftests: ' || true)
	if [ -n "$plan" ] && [ "$plan" != 0 ] && [ "$plan" = "$results" ]; then
		echo "ok - $name: kselftest runner reported all $plan tests it planned" >>"$tap"
	else
		echo "not ok - $name: kselftest plan ${plan:-missing}, $results results" >>"$tap"
	fi
	if grep -q '^STACKPOLL-EXIT' "$out" && [ ! -s "$SP_LOGS/$name.trouble" ]; then
		echo "ok - $name: guest ran to completion, kernel log clean" >>"$tap"
	else
		echo "not ok - $name: guest died, timed out, or logged an oops/WARN/KASAN/lockdep/hang/NVMe timeout" >>"$tap"
	fi
}

# vm_machine TEST: the VM machine TEST needs (scripts/vm-machines).
vm_machine() {
	awk -v t="$1" '$1 == t { m = $2 } END { print m ? m : "default" }' \
		"$scripts/vm-machines"
}

# vm_suites NAME KERNEL TIMEOUT TESTS [VM-RUN-OPTION...]: vm_suite for the
# TESTS of each VM machine: the default one's in NAME, another's in
# NAME-MACHINE.  SUITES gets the names of those that ran.
SUITES=()
vm_suites() {
	local name=$1 kernel=$2 timeout=$3 tests=$4 m t list
	shift 4

	SUITES=()
	for m in default $(grep -v '^#' "$scripts/vm-machines" | awk '{ print $2 }' | sort -u); do
		list=''
		for t in $tests; do
			[ "$(vm_machine "$t")" != "$m" ] || list="$list $t"
		done
		[ -n "$list" ] || continue
		if [ "$m" = default ]; then
			SUITES+=("$name")
			vm_suite "$name" "$kernel" "$timeout" "$list" "$@"
		else
			SUITES+=("$name-$m")
			vm_suite "$name-$m" "$kernel" "$timeout" "$list" --machine "$m" "$@"
		fi
	done
}

# The debug kernel runs several times slower under TCG: its soft lockup
# and RCU stall detectors fire on the emulation's own stalls, not the
# guest's; hung tasks are still reported, after 5 minutes.
debug_append="panic_on_warn=1 nowatchdog rcupdate.rcu_cpu_stall_timeout=300"
debug_append="$debug_append sysctl.kernel.hung_task_timeout_secs=300"
# PCI interrupt routing from the MP table: the debug kernel's ACPI
# interpreter runs QEMU's _PRT loop into its 30 s timeout (debug.config).
debug_append="$debug_append acpi=noirq"
# Full preemption on the debug kernel (PREEMPT_DYNAMIC): io_uring's
# iopoll loop and the poll callbacks run preemptible there, as on a
# preempt=full distribution boot.  The patched kernel runs Debian's
# default, voluntary.
debug_append="$debug_append preempt=full"

# debug_preempt_full: the debug VMs booted with full preemption.
debug_preempt_full()
{
	local s

	for s in "${SUITES[@]}"; do
		if grep -q '^# guest: Dynamic Preempt: full' "$SP_LOGS/$s.out"; then
			echo "ok - $s: booted with full preemption (preempt=full)" >>"$tap"
		else
			echo "not ok - $s: the guest reports no 'Dynamic Preempt: full'" >>"$tap"
		fi
	done
}

# debug_tests: the tests of scripts/debug-tests.
debug_tests() {
	grep -v '^#' "$scripts/debug-tests" | tr '\n' ' '
}

tests=${TESTS:-$(all_tests)}
if [ "$tree" = debug ]; then
	vm_suites check-debug "$kernel" $((full ? 14400 : 5400)) "$tests" \
		--append "$debug_append${full:+ sp.full=1}"
	debug_preempt_full
else
	vm_suites "check-$tree" "$kernel" $((full ? 3600 : 2700)) "$tests" \
		${full:+--append sp.full=1}
fi

# The debug kernel after the patched one: with FULL=1, unless DEBUG=0.
after_debug=''
[ "$tree" != patched ] || [ -z "$full" ] || [ "$debug" = 0 ] || after_debug=1
smoke_pid=''
if [ "$tree" = patched ] && [ -z "$quick" ]; then
	say "check: the base kernel for the bench smoke (log: $SP_LOGS/kernel-base.log)"
	sp_ticker "check: base kernel" "$SP_LOGS/kernel-base.log" &
	ticker=$!
	desc="the base kernel builds (6.12 and the null_blk patches: the bench smoke's base)"
	# After the timed VM tests, not beside them (a full build: the series
	# edits include/linux/blkdev.h, so ccache serves the base tree little).
	if bash "$scripts/build-kernel.sh" base >"$SP_LOGS/check-base-kernel.log" 2>&1; then
		echo "ok - host: $desc" >>"$tap"
	else
		echo "not ok - host: $desc (log: $SP_LOGS/check-base-kernel.log)" >>"$tap"
		tail -n 20 "$SP_LOGS/check-base-kernel.log" >&2
	fi
	kill "$ticker" 2>/dev/null || true
	if [ -n "$after_debug" ]; then
		# Its own process group, so that a failing make check ends it too.
		set -m
		bench_smoke &
		smoke_pid=$!
		set +m
		trap 'kill -- -$smoke_pid 2>/dev/null || true' EXIT
	else
		bench_smoke
	fi
fi

if [ -n "$after_debug" ]; then
	say "check: the debug kernel"
	# A failed build ends the smoke too (the EXIT trap).
	debug_kernel=$(bash "$scripts/build-kernel.sh" debug)
	if [ -n "$smoke_pid" ]; then
		wait "$smoke_pid" || true
		trap - EXIT
	fi
	host_check "dmp_fault test module builds against the debug kernel" \
		bash "$scripts/build-module.sh" debug
	vm_suites check-debug "$debug_kernel" 5400 "$(debug_tests)" \
		--append "$debug_append${full:+ sp.full=1}"
	debug_preempt_full
fi

# Inside the harness's VM every device polls: a test that skips there
# has lost what it tests (a kernel that stopped reporting io_poll would
# turn most tests into skips).  Only the base kernel may skip.
no_skips=--no-skips
[ "$tree" != base ] || no_skips=
echo "TAP: $tap; kernel: $kernel ($(cat "$(sp_obj "$tree")/include/config/kernel.release"));" \
	"$(($(date +%s) - start)) s"
bash "$scripts/tap-summary.sh" $no_skips "$tap" || exit 1
[ "$vm_rc" = 0 ] || exit 1
