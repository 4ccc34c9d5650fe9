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
# The runner's own exit status does not reflect failures: read its TAP.
./run_kselftest.sh "${sel[@]}" | tee /tmp/ksft.tap
! grep -q '^not ok' /tmp/ksft.tap
