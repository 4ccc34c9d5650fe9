#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Summarize the TAP of make check: the failures, the skips, and a line
# "N passed, N failed, N skipped".  Counts the test cases of every
# kselftest ("# ok N ..." one level down), a kselftest that failed or
# skipped as a whole when it has no test case of its own to show for it,
# and the host and VM lines ("ok - ...").  Before them, the last
# diagnostic lines each failure followed, so that a log's tail says why.
#
# Usage: tap-summary.sh [--no-skips] TAP
# Exit status 1 when something failed, or with --no-skips skipped (but
# for the known issues of scripts/known-issues, which say why).
set -eu

no_skips=''
[ "${1:-}" = --no-skips ] && { no_skips=1; shift; }
tap=${1:?usage: tap-summary.sh [--no-skips] TAP}
[ -r "$tap" ] || { echo "tap-summary: cannot read $tap" >&2; exit 2; }

summary=$(awk '
	function result(line,   s) {
		if (line ~ /# SKIP/) s = "skip"
		else if (line ~ /^not ok/) s = "fail"
		else s = "pass"
		return s
	}
	# why: the last 6 diagnostic lines, for the failure they come before
	function why(   i, s) {
		for (i = nd - 6; i < nd; i++)
			if (i >= 0) s = s "\n    " d[i % 6]
		nd = 0
		return s
	}
	/^# (not )?ok [0-9]+ / {
		r = result(substr($0, 3)); n[r]++; sub_n[r]++
		if (r == "fail") { fails = fails "\n  " substr($0, 3); details = details "\n  " substr($0, 3) why() }
		nd = 0
		next
	}
	/^# / { d[nd++ % 6] = substr($0, 3); next }
	/^(not )?ok [0-9]+ selftests: / {
		r = result($0)
		if (sub_n["pass"] + sub_n["fail"] + sub_n["skip"] == 0 || (r == "fail" && !sub_n["fail"])) {
			n[r]++
			if (r == "fail") { fails = fails "\n  " $0; details = details "\n  " $0 why() }
		}
		delete sub_n
		nd = 0
		next
	}
	/^(not )?ok - / { r = result($0); n[r]++; if (r == "fail") fails = fails "\n  " $0 }
	END {
		if (details != "") printf "why (the last lines before each failure):%s\n", details
		if (fails != "") printf "failed:%s\n", fails
		printf "%d passed, %d failed, %d skipped\n", n["pass"], n["fail"], n["skip"]
	}' "$tap")
skips=$(grep -E '^# (ok|not ok) .*# SKIP|^# 1\.\.0 # SKIP|selftests: .*# SKIP|^ok - .*# SKIP' "$tap" || true)
[ -z "$skips" ] || printf 'skipped:\n%s\n' "$skips"
echo "$summary"
case $summary in
*" 0 failed,"*) ;;
*) exit 1 ;;
esac
# A known issue (scripts/known-issues) skips with its reason, by design.
if [ -n "$no_skips" ] && echo "$skips" | grep -qv -e '^ok - known issue: ' -e '^$'; then
	echo "a test skipped in the harness's VM, where every device polls: that is a failure"
	exit 1
fi
exit 0
