#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DM statistics count a split bio's parts in the areas each part covers,
# and a bio whose first part its target fails with BLK_STS_AGAIN in ->map
# (a REQ_NOWAIT write across chunks of a snapshot-origin that must copy
# them first) fails whole: its accounting must end in the areas it
# started in.  Otherwise @stats_print shows in_flight -1 in the areas past
# the first part, those areas stay busy for ever, and removing the device
# warns of a leaked in-flight counter.  8 KiB chunks, 4 KiB stats areas,
# writes of 12-64 KiB: every write crosses a chunk and several areas.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup dd
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

# check_in_flight DESC NAME ID: every area of NAME's stats region ID has no
# I/O in flight now that nothing is in flight.  One KTAP result.
check_in_flight()
{
	local desc=$1 out bad areas

	if ! out=$(dmsetup message "$2" 0 "@stats_print $3"); then
		ktap_test_fail "$desc: @stats_print failed"
		return
	fi
	# "START+LEN reads ... writes ... in_flight io_ticks ...": field 10.
	areas=$(awk 'NF >= 10 { n++ } END { print n + 0 }' <<<"$out")
	bad=$(awk 'NF >= 10 && $10 != 0 { print $1 " in_flight " $10 }' <<<"$out" |
		head -n 3)
	echo "# $desc: $areas areas${bad:+, $(tr '\n' ' ' <<<"$bad")}"
	if [ "$areas" -eq 0 ]; then
		ktap_test_fail "$desc: no stats areas printed"
	elif [ -n "$bad" ]; then
		ktap_test_fail "$desc: in-flight counters left non-zero"
	else
		ktap_test_pass "$desc: no in-flight counter left"
	fi
}

# stats_case DESC CHECK VERIFY-ARGS...: a stats region of 4 KiB areas on
# the origin, CHECK (a dmp_check_* function) of a write load, and the
# region's in-flight counters after it; the region goes again.  Two KTAP
# results.
stats_case()
{
	local desc=$1 check=$2 id
	shift 2

	if ! id=$(dmsetup message "$name" 0 "@stats_create - 8"); then
		ktap_test_fail "$desc: cannot create a stats region"
		ktap_test_fail "$desc: stats"
		return
	fi
	"$check" "$desc" "$origin" "$@"
	check_in_flight "$desc: stats" "$name" "$id"
	dmsetup message "$name" 0 "@stats_delete $id" >/dev/null
}

ktap_print_header
ktap_set_plan 7

dmp_dm_create base "0 65536 linear $b 2048" || ktap_exit_fail_msg "cannot create base"
base=$DMP_NODE
dmp_dm_zeroed cow "$a" 600000 32768 || ktap_exit_fail_msg "cannot create cow"
dmp_dm_create snap "0 65536 snapshot $base $DMP_NODE N 16" ||
	ktap_exit_fail_msg "cannot create snapshot"
dmp_dm_create origin "0 65536 snapshot-origin $base" ||
	ktap_exit_fail_msg "cannot create origin"
origin=$DMP_NODE
name=${origin#/dev/mapper/}

# io_uring issues these inline with REQ_NOWAIT: the origin fails the first
# part, which needs a copy, and DM the whole write; io-wq sends it again.
stats_case "origin: interrupt-driven writes across chunks that copy, retried whole" \
	dmp_check_iowq -I -o 1M -s 1M -b 12k-64k -q 8 -S 301
# Polled: DM retries the part itself, the rest goes on.
stats_case "origin: polled writes across chunks that copy" \
	dmp_check_verified -o 2M -s 1M -b 12k-64k -q 8 -S 302
# From io-wq, without REQ_NOWAIT: nothing fails, the reference case.
stats_case "origin: writes across chunks that copy, from io-wq" \
	dmp_check_verified -I -A -o 3M -s 1M -b 12k-64k -q 8 -S 303

# The origin goes with a stats region, and the devices under it:
# dm_stats_cleanup() checks every area's in-flight counter.
dmsetup message "$name" 0 "@stats_create - 8" >/dev/null ||
	ktap_exit_fail_msg "cannot create a stats region on the origin"
"$DMP_VERIFY" -I -o 4M -s 1M -b 12k-64k -q 8 -S 304 "$origin" >/dev/null ||
	echo "# origin: writes before the removal failed"
# The whole kernel log: a WARN for each leaked area can push this test's
# start out of the log buffer.
leaked_after_removal()
{
	dmesg | grep "leaked in-flight counter"
}
if ! dmp_dm_remove origin || ! dmp_dm_remove snap || ! dmp_dm_remove cow ||
	! dmp_dm_remove base; then
	ktap_test_fail "origin: cannot remove the devices"
elif leaked=$(leaked_after_removal); then
	head -n 2 <<<"$leaked" | sed 's/^/# /'
	ktap_test_fail "origin: removal found a leaked in-flight counter"
else
	ktap_test_pass "origin: removed with its stats region, no leaked counter"
fi
ktap_finished
