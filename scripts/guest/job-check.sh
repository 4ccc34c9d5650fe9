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
# The runner's own exit status does not reflect failures: read its TAP,
# which must hold as many results as its plan announced, and no failure.
./run_kselftest.sh "${sel[@]}" | tee /tmp/ksft.tap
plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' /tmp/ksft.tap)
results=$(grep -cE '^(not )?ok [0-9]+ selftests: ' /tmp/ksft.tap)
if [ -z "$plan" ] || [ "$plan" = 0 ] || [ "$plan" != "$results" ]; then
	echo "# job-check: plan ${plan:-missing}, $results results"
	exit 1
fi
! grep -q '^not ok' /tmp/ksft.tap
