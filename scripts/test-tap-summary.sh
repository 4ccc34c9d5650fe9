#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Self-test of scripts/tap-summary.sh: in the harness's VM a skipped test
# case, or a kselftest skipped whole, fails make check; a known issue,
# which says why it skips, and a clean run pass; a failure always fails.
set -eu
. "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
summary=$SP_TOP/scripts/tap-summary.sh

# expect RC NAME LINE...: tap-summary.sh --no-skips on a TAP of LINEs
# exits with RC.
expect() {
	local want=$1 name=$2 rc=0
	shift 2
	printf '%s\n' "ok - host: something" "$@" >"$tmp/$name.tap"
	bash "$summary" --no-skips "$tmp/$name.tap" >"$tmp/$name.out" || rc=$?
	[ "$rc" = "$want" ] || die "tap-summary: $name: exit $rc, expected $want: $(cat "$tmp/$name.out")"
}

expect 0 clean '# ok 1 dm-linear: polled' 'ok 1 selftests: dm-poll: a.sh'
expect 1 case-skip '# ok 1 dm-linear: polled # SKIP no poll queues' \
	'ok 1 selftests: dm-poll: a.sh'
expect 1 whole-skip '# 1..0 # SKIP io_poll is 0' 'ok 1 selftests: dm-poll: a.sh # SKIP'
expect 0 known-issue 'ok - known issue: b.sh # SKIP bug 42 open'
expect 1 failure '# not ok 1 dm-linear: polled' 'not ok 1 selftests: dm-poll: a.sh'
# The diagnostics before a failure are shown with it, those of the case
# before it not.
expect 1 why '# # a fine line' '# ok 1 first' '# # ring 0: write took 6 s' \
	'# not ok 2 second' 'not ok 1 selftests: dm-poll: a.sh'
if ! grep -qx '    # ring 0: write took 6 s' "$tmp/why.out" || grep -q 'a fine line' "$tmp/why.out"; then
	die "tap-summary: the diagnostics before a failure: $(cat "$tmp/why.out")"
fi
rc=0
bash "$summary" "$tmp/case-skip.tap" >/dev/null || rc=$?
[ "$rc" = 0 ] || die "tap-summary: a skip failed without --no-skips (the base kernel's run)"
say "tap-summary: self-test passed"
