#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Self-test of the VM runner: a guest job's exit status comes back, and a
# guest whose kernel crashes fails the run even though the job never got
# to report (the runner does not guess from console text); a kernel
# warning during a kselftest fails that test.
# Usage: test-harness.sh KERNEL
set -eu
. "$(dirname "$0")/lib.sh"

kernel=$1
vm_run() { bash "$SP_TOP/scripts/vm-run.sh" --timeout 300 --name "harness-$1" "$kernel" exec "$2"; }

rc=0
vm_run status 'echo job output; exit 3' || rc=$?
[ "$rc" = 3 ] || die "job exit status 3 came back as $rc"
grep -q '^job output' "$SP_LOGS/harness-status.out" || die "job output did not come back"

rc=0
vm_run crash 'echo c >/proc/sysrq-trigger; sleep 5' || rc=$?
[ "$rc" != 0 ] || die "a guest kernel crash passed"
grep -q 'died before reporting' "$SP_LOGS/harness-crash.trouble" ||
	die "a guest kernel crash was not reported as such"
grep -q 'Kernel panic' "$SP_LOGS/harness-crash.trouble" ||
	die "the crash was not found in the guest kernel log"
# A test whose run logs a kernel warning fails, even though every one of
# its cases passed: lib.sh reads the kernel log from the test's start.
vm_run warn 'bash -c ". /kselftest/dm-poll/lib.sh; echo \"WARNING: dm-poll harness self-test\" >/dev/kmsg; exit 0"; echo "test exit $?"' || true
grep -q '^test exit 1' "$SP_LOGS/harness-warn.out" ||
	die "a kernel warning during a test did not fail it"
grep -q '^# kernel log during' "$SP_LOGS/harness-warn.out" ||
	die "a kernel warning during a test was not shown"
say "harness: self-test passed"
