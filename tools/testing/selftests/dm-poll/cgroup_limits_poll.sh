#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Polled I/O through dm-striped and md raid0 from a cgroup whose I/O to one
# NVMe member is limited: by blk-throttle (io.max riops/wiops), which
# queues the clones over the limit and submits them later from a work
# item, still REQ_POLLED, to the member's poll queue, where the submitter's
# poll through the stack finds them; and by iocost (io.cost.qos on the
# member, a cost model of few IOPS, the cgroup's io.weight), which makes
# the submitter wait.  Polled end to end either way: data verified, 0
# interrupts, no I/O over DMP_MAX_LAT_MS and the time the limit lets 16
# I/Os wait (a polled bio that nobody polls any more waits for the NVMe
# timeout, 30 s).  Each limit is a third of
# the rate the member served the cgroup without one, and must have held
# the I/O back: twice as long as without it, and at least 7/10 of what it
# allows for the bios the cgroup sent the member (io.stat; for iocost,
# the requests the member completed); iocost counts the wait in io.stat.
# The test shell joins the cgroup for the I/O and leaves it after; the
# cgroup and the limits go on every path out, and cgroup2 is unmounted if
# the test mounted it.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup mdadm
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}
member=$(cat "$(dmp_sysfs "$a")/dev")
root=/sys/fs/cgroup
cg=$root/dmpoll-$$
mounted='' io_on='' qos_on='' debug_stats=''

# The guest's init mounts no cgroup hierarchy: mount cgroup2 if need be.
if ! awk -v r="$root" '$2 == r && $3 == "cgroup2" { f = 1 } END { exit !f }' /proc/mounts; then
	mount -t cgroup2 cgroup2 "$root" || dmp_skip_all "cannot mount cgroup2 on $root"
	mounted=1
fi

# cg_teardown: out of the cgroup, the limits off, the cgroup gone, io
# control off and cgroup2 unmounted if this test turned them on.
cg_teardown()
{
	echo $$ >"$root/cgroup.procs"
	if [ -d "$cg" ]; then
		echo "$member riops=max wiops=max" >"$cg/io.max" 2>/dev/null
		rmdir "$cg" || echo "# cleanup: cannot remove $cg"
	fi
	if [ -n "$qos_on" ]; then
		echo "$member enable=0" >"$root/io.cost.qos"
		echo "$member ctrl=auto" >"$root/io.cost.model"
	fi
	[ -z "$debug_stats" ] || echo N >"$debug_stats"
	[ -z "$io_on" ] || echo -io >"$root/cgroup.subtree_control"
	[ -z "$mounted" ] || umount "$root" || echo "# cleanup: cannot unmount $root"
}
dmp_on_exit cg_teardown

grep -qw io "$root/cgroup.controllers" || dmp_skip_all "no io controller in cgroup2"
if ! grep -qw io "$root/cgroup.subtree_control"; then
	echo +io >"$root/cgroup.subtree_control" || dmp_skip_all "cannot enable the io controller"
	io_on=1
fi
mkdir "$cg" || dmp_skip_all "cannot create cgroup $cg"
[ -e "$cg/io.max" ] || dmp_skip_all "no io.max (CONFIG_BLK_DEV_THROTTLING)"
[ -e "$root/io.cost.qos" ] || dmp_skip_all "no io.cost.qos (CONFIG_BLK_CGROUP_IOCOST)"
# iocost's wait time in io.stat (cost.wait) needs blk-cgroup's debug stats.
debug_stats=/sys/module/blk_cgroup/parameters/blkcg_debug_stats
if [ "$(cat "$debug_stats" 2>/dev/null)" = N ] && echo Y >"$debug_stats"; then
	:
else
	debug_stats=''
fi

# cg_bios: the bios the cgroup has sent to the member, reads and writes
# (io.stat counts bios, before the member merges them into requests).
cg_bios()
{
	awk -v m="$member" '$1 == m {
		for (i = 2; i <= NF; i++) {
			split($i, kv, "=")
			v[kv[1]] = kv[2]
		}
	}
	END { print v["rios"] + 0, v["wios"] + 0 }' "$cg/io.stat"
}

# cost_wait: microseconds the cgroup's I/O to the member waited in iocost.
cost_wait()
{
	awk -v m="$member" '$1 == m {
		for (i = 2; i <= NF; i++)
			if ($i ~ /^cost\.wait=/) { sub(/.*=/, "", $i); print $i }
	}' "$cg/io.stat"
}

# timed_verify DEV VERIFY-ARGS...: dmp_verify_counted, and RUN_MS its time.
timed_verify()
{
	local t0=${EPOCHREALTIME/./} rc=0

	dmp_verify_counted "$@" || rc=$?
	RUN_MS=$(((${EPOCHREALTIME/./} - t0) / 1000))
	return "$rc"
}

# member_requests: the requests the member has completed, reads and
# writes.
member_requests()
{
	awk '{ print $1, $5 }' "$(dmp_sysfs "$a")/stat"
}

# cg_run DEV VERIFY-ARGS...: timed_verify from the cgroup; BIOS gets the
# bios the cgroup sent the member (blk-throttle counts these; io.stat),
# REQUESTS the requests the member completed (iocost charges a bio merged
# into a request for its size only).
cg_run()
{
	local rc=0 b0 b1 r0 r1

	read -r -a b0 <<<"$(cg_bios)"
	read -r -a r0 <<<"$(member_requests)"
	echo $$ >"$cg/cgroup.procs"
	timed_verify "$@" || rc=$?
	echo $$ >"$root/cgroup.procs"
	read -r -a b1 <<<"$(cg_bios)"
	read -r -a r1 <<<"$(member_requests)"
	BIOS=$((b1[0] - b0[0] + b1[1] - b0[1])) REQUESTS=$((r1[0] - r0[0] + r1[1] - r0[1]))
	return "$rc"
}

# check_polled_run DESC RC: the cg_run that returned RC polled end to
# end.  One KTAP result.
check_polled_run()
{
	if [ "$2" != 0 ]; then
		ktap_test_fail "$1: polled I/O failed or was slow"
	elif [ "$DMP_IRQS" -ne 0 ]; then
		echo "# $1: $DMP_IRQS interrupts (${DMP_IRQ_RE})"
		ktap_test_fail "$1: interrupts during polled I/O"
	else
		ktap_test_pass "$1: polled, data verified, 0 interrupts"
	fi
}

# limited_run DESC DEV UNIT IOPS VERIFY-ARGS...: cg_run under a limit of
# IOPS on the member; two KTAP results: the I/O polled end to end, and the
# limit held it back: the run took twice as long as without it (BASE_MS)
# and at least 7/10 (a first slice's allowance, iocost's margin) of what
# IOPS allows for the UNITs ("BIOS" or "REQUESTS") it counted.
limited_run()
{
	local desc=$1 dev=$2 unit=$3 iops=$4 rc=0 n min_ms
	shift 4

	# An I/O may wait for the limit to let the 8 queued before it go.
	DMP_MAX_LAT_MS=$((DMP_MAX_LAT_MS + 2 * 8 * 1000 / iops)) cg_run "$dev" "$@" || rc=$?
	check_polled_run "$desc" "$rc"
	n=${!unit}
	min_ms=$((n * 1000 * 7 / 10 / iops))
	echo "# $desc: $RUN_MS ms, $BASE_MS ms without the limit, at least $min_ms ms" \
		"for $iops IOPS; to $a: $BIOS bios, $REQUESTS requests"
	if [ "$RUN_MS" -ge "$min_ms" ] && [ "$RUN_MS" -ge $((BASE_MS * 2)) ]; then
		ktap_test_pass "$desc: held back by the limit"
	else
		ktap_test_fail "$desc: not held back by the limit"
	fi
}

# iocost_on IOPS: iocost on the member, modelled as a device of IOPS, its
# rate pinned at 100% of the model; the cgroup alone on it, at a weight
# of its own.
iocost_on()
{
	qos_on=1
	echo "$member ctrl=user model=linear rbps=4000000000 rseqiops=$1" \
		"rrandiops=$1 wbps=4000000000 wseqiops=$1 wrandiops=$1" \
		>"$root/io.cost.model" &&
		echo "$member enable=1 ctrl=user min=100.00 max=100.00" >"$root/io.cost.qos" &&
		echo "default 200" >"$cg/io.weight"
}

iocost_off()
{
	echo "$member enable=0" >"$root/io.cost.qos"
}

# stack_cases STACK DEV SEED: 4k polled I/O on DEV from the cgroup without
# a limit, then with io.max and with iocost on the member, each set to a
# third of the rate the member served without it, so that the limit, not
# the machine, sets the pace.  Six KTAP results.
stack_cases()
{
	local stack=$1 dev=$2 seed=$3 args=(-s 1M -b 4k -q 8) wait0 rc=0 iops

	cg_run "$dev" "${args[@]}" -S "$seed" || rc=$?
	check_polled_run "$stack, no limit" "$rc"
	BASE_MS=$((RUN_MS > 0 ? RUN_MS : 1))
	if [ "$BIOS" -lt 100 ] || [ "$REQUESTS" -lt 30 ]; then
		ktap_exit_fail_msg "$stack: only $BIOS bios, $REQUESTS requests to $a"
	fi

	iops=$((BIOS * 1000 / BASE_MS / 3 + 1))
	if echo "$member riops=$iops wiops=$iops" >"$cg/io.max"; then
		limited_run "$stack, io.max" "$dev" BIOS "$iops" \
			"${args[@]}" -S $((seed + 1))
	else
		echo "# $stack, io.max: cannot set riops=wiops=$iops on $member"
		ktap_test_fail "$stack, io.max: cannot set the limit"
		ktap_test_fail "$stack, io.max: not held back by the limit"
	fi
	echo "$member riops=max wiops=max" >"$cg/io.max"

	iops=$((REQUESTS * 1000 / BASE_MS / 3 + 1))
	if iocost_on "$iops"; then
		wait0=$(cost_wait)
		limited_run "$stack, io.cost" "$dev" REQUESTS "$iops" \
			"${args[@]}" -S $((seed + 2))
		check_cost_wait "$stack, io.cost" "${wait0:-0}"
	else
		echo "# $stack, io.cost: cannot enable iocost of $iops IOPS on $member"
		ktap_test_fail "$stack, io.cost: cannot enable iocost"
		ktap_test_fail "$stack, io.cost: not held back by the limit"
		ktap_test_fail "$stack, io.cost: io.stat counts no wait"
	fi
	iocost_off
}

# check_cost_wait DESC BEFORE: io.stat's cost.wait of the cgroup on the
# member grew from BEFORE: iocost made its I/O wait.  iocost folds it in
# on its timer: wait up to 5 s for it.  One KTAP result.
check_cost_wait()
{
	local i w

	for ((i = 0; i < 50; i++)); do
		w=$(cost_wait)
		[ "${w:-0}" -le "$2" ] || break
		sleep 0.1
	done
	echo "# $1: io.stat's cost.wait ${w:-none}, $2 before"
	if [ "${w:-0}" -gt "$2" ]; then
		ktap_test_pass "$1: io.stat counts a wait"
	else
		ktap_test_fail "$1: io.stat counts no wait"
	fi
}

ktap_print_header
ktap_set_plan 12
# 4 KiB chunks: half the 4 KiB bios go to the limited member.
dmp_dm_create cg-striped "0 131072 striped 2 8 $a 0 $b 0" ||
	ktap_exit_fail_msg "cannot create dm-striped"
stack_cases dm-striped "$DMP_NODE" 91
dmp_cleanup
dmp_md_create 0 --chunk=4 -- "$a" "$b" || ktap_exit_fail_msg "cannot create md raid0"
stack_cases "md raid0" "$DMP_NODE" 94
ktap_finished
