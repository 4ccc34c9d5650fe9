#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest job "check": run the dm-poll kselftests with the kselftest runner.
# Arguments, if any, name the tests to run (default: all).
set -u
cd /kselftest || exit 1
sel=(-c dm-poll)
if [ $# -gt 0 ]; then
	sel=()
	for t in "$@"; do
		sel+=(-t "dm-poll:$t")
	done
fi
# On a kernel with kmemleak (make check DEBUG=1), forget what boot left
# behind, so that the scan after the tests reports only what they leaked.
kmemleak=/sys/kernel/debug/kmemleak
if [ -e "$kmemleak" ]; then
	echo clear >"$kmemleak"
	# KASAN and lockdep make every I/O slower, interrupt-driven writes
	# through three layers most: allow 5 s, which still catches a polled
	# bio left on a queue nobody polls (the NVMe timeout, 30 s).
	export DMP_MAX_LAT_MS=5000
fi
# The runner's own exit status does not reflect failures: read its TAP,
# which must hold as many results as its plan announced, and no failure.
# Each result is followed by the time since the start, for the timings
# in doc/harness.md (Measured here).
./run_kselftest.sh "${sel[@]}" | while IFS= read -r line; do
	printf '%s\n' "$line"
	case $line in
	"ok "* | "not ok "*) echo "# elapsed ${SECONDS} s" ;;
	esac
done | tee /tmp/ksft.tap
plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' /tmp/ksft.tap)
results=$(grep -cE '^(not )?ok [0-9]+ selftests: ' /tmp/ksft.tap)
if [ -z "$plan" ] || [ "$plan" = 0 ] || [ "$plan" != "$results" ]; then
	echo "# job-check: plan ${plan:-missing}, $results results"
	exit 1
fi
rc=0
grep -q '^not ok' /tmp/ksft.tap && rc=1
if [ -e "$kmemleak" ]; then
	# kmemleak reports an object only once it has stayed unreferenced
	# for five seconds and through a scan: scan, wait, scan again.
	echo scan >"$kmemleak"
	sleep 6
	echo scan >"$kmemleak"
	leaks=$(grep -c '^unreferenced object' "$kmemleak")
	if [ "$leaks" = 0 ]; then
		echo "ok - vm: kmemleak finds no leak after the tests"
	else
		echo "not ok - vm: kmemleak: $leaks unreferenced objects after the tests"
		sed 's/^/# /' "$kmemleak" | head -n 200
		rc=1
	fi
fi
exit "$rc"
