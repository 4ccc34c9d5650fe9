#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# More CPUs than poll queues (in the harness, its multipath VM machine: 4
# CPUs, nvme.poll_queues=1): every CPU maps to the one poll queue of each
# controller, so rings on all CPUs submit to it and poll it at once, from
# dm-striped and md raid0 split across two controllers.  A ring pinned to
# each CPU: all data verified, 0 interrupts; the same rings interrupt
# driven raise some (the control).
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup mdadm taskset
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}
ncpu=$(nproc)

# poll_hctxs DEV: the numbers of DEV's poll hardware queues (debugfs).
poll_hctxs()
{
	local t h disk

	disk=$(basename "$(readlink -f "$(dmp_sysfs "$1")")")
	for t in /sys/kernel/debug/block/"$disk"/hctx*/type; do
		h=${t%/type}
		[ "$(cat "$t" 2>/dev/null)" != poll ] || echo "${h##*/hctx}"
	done
}
read -r -a polls_a <<<"$(poll_hctxs "$a" | paste -sd' ')"
[ "${#polls_a[@]}" -gt 0 ] || dmp_skip_all "no poll queue of $a in debugfs (hctx*/type)"
[ "${#polls_a[@]}" -lt "$ncpu" ] ||
	dmp_skip_all "$a has ${#polls_a[@]} poll queues for $ncpu CPUs: needs fewer"

# Four rings that all spin on one poll queue through a stack wait for
# seconds at times here (four TCG vCPUs on two busy host cores: 2-5 s
# through dm-striped and md raid0, 0.1-0.5 s on the raw namespace, 0.4 s
# interrupt driven): allow 15 s an I/O, which still tells them from a
# polled bio that nobody polls (it waits for the NVMe timeout, 30 s, and
# the timeout is in the kernel log).
few_lat_ms=${DMP_FEW_MAX_LAT_MS:-15000}

# rings_per_cpu DEV SEED [-I]: a write+verify ring on each CPU, polled (or
# interrupt driven with -I), each on a slice of its own; fails if any
# ring does.
rings_per_cpu()
{
	local dev=$1 seed=$2 cpu pids=() rc=0 slice=$((2 << 20)) out=/tmp/few-queues.$$
	shift 2

	for ((cpu = 0; cpu < ncpu; cpu++)); do
		taskset -c "$cpu" "$DMP_VERIFY" -L "$few_lat_ms" -o $((cpu * slice)) \
			-s "$slice" -b 4k-64k -q 8 -S $((seed + cpu)) "$@" "$dev" \
			>"$out.$cpu" 2>&1 &
		pids+=($!)
	done
	for ((cpu = 0; cpu < ncpu; cpu++)); do
		wait "${pids[$cpu]}" || rc=1
		sed "s/^# /# cpu $cpu: /" "$out.$cpu"
		rm -f "$out.$cpu"
	done
	return "$rc"
}

# check_per_cpu DESC DEV SEED: rings_per_cpu polled end to end, 0
# interrupts, and interrupt driven, some (the control).  Two KTAP results.
check_per_cpu()
{
	local desc="$1: a ring on each CPU"

	echo "# $desc: $ncpu CPUs"

	dmp_check_mode "$desc" polled "$2" rings_per_cpu "$2" "$3"
	dmp_check_mode "$desc, interrupt driven" irq "$2" rings_per_cpu "$2" $(($3 + 8)) -I
}

ktap_print_header
ktap_set_plan 5
# Every CPU maps to a poll queue: with fewer queues, some serve several.
cpus=$(cat "$(dmp_sysfs "$a")/mq/${polls_a[0]}/cpu_list" 2>/dev/null)
echo "# $a: ${#polls_a[@]} poll queue(s) for $ncpu CPUs, hctx ${polls_a[0]} serves CPUs '$cpus'"
if [ "$(wc -w <<<"${cpus//,/ }")" -gt 1 ]; then
	ktap_test_pass "$a: fewer poll queues than CPUs, one serves several CPUs"
else
	ktap_test_fail "$a: fewer poll queues than CPUs, one serves several CPUs: not so"
fi

dmp_dm_create few-striped "0 131072 striped 2 8 $a 0 $b 0" ||
	ktap_exit_fail_msg "cannot create dm-striped"
check_per_cpu dm-striped "$DMP_NODE" 141
dmp_cleanup

dmp_md_create 0 --chunk=4 -- "$a" "$b" || ktap_exit_fail_msg "cannot create md raid0"
check_per_cpu "md raid0" "$DMP_NODE" 151
ktap_finished
