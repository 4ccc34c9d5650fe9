# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers of the real-time poller tests (sched_fifo_poll.sh,
# sched_fifo_isolated_poll.sh): a SCHED_FIFO reader pinned to the last
# online CPU, RT throttling off, unbound work kept off that CPU, and
# devices below with one tag.  Source lib.sh first, then call
# fifo_setup before the plan's first test.

rt=/proc/sys/kernel/sched_rt_runtime_us
wq_mask=/sys/devices/virtual/workqueue/cpumask
wq_event=workqueue/workqueue_queue_work
# The workqueues DM and md retry from; crypt's kcryptd_io, which may stay
# bound (polled-io.rst), is not asserted on: no read here lacks memory.
wq_names='(workqueue ~ "kdmflush*" || workqueue ~ "md*")'

# list_cpus FILE: the CPUs of the CPU list in FILE ("0-2,5" as
# /sys/devices/system/cpu/online prints it), one a line.
list_cpus()
{
	local r

	tr ',' '\n' <"$1" | while read -r r; do
		[ -n "$r" ] && seq "${r%-*}" "${r#*-}"
	done
}

# mask_without MASK CPU: the cpumask MASK (hex, in 32-bit groups split by
# commas, as sysfs prints it) without CPU.
mask_without()
{
	local -a groups
	local i n

	IFS=, read -ra groups <<<"$1"
	n=${#groups[@]}
	i=$((n - 1 - $2 / 32))
	[ "$i" -ge 0 ] || { echo "$1"; return; }
	groups[i]=$(printf %08x $((0x${groups[i]} & ~(1 << ($2 % 32)))))
	(IFS=,; echo "${groups[*]}")
}


# onetag NAME POLLED: a memory-backed null_blk of 64 MiB with one tag on
# each hardware queue, the poll queue too when POLLED is 1, no I/O
# scheduler, and no merges (a round's reads are adjacent: merged in the
# plug, they would need one tag); DMP_NODE.
onetag()
{
	local args=(size=64 memory_backed=1 queue_mode=2 submit_queues=1 hw_queue_depth=1)
	local q

	[ "$2" = 1 ] && args+=(poll_queues=1)
	dmp_nullb_create "$1" "${args[@]}" || return 1
	q=$(dmp_sysfs "$DMP_NODE")/queue
	echo none >"$q/scheduler" && echo 2 >"$q/nomerges"
}

# queued_on CPU: how many works the histogram of wq_trigger counted on
# CPU, or on any CPU with "all".  Its key is the workqueue and the pool's
# CPU, which is -1 for an unbound workqueue.
queued_on()
{
	awk -v cpu="$1" '/ hitcount: / {
		match($0, /cpu: *-?[0-9]+/)
		c = substr($0, RSTART, RLENGTH); sub(/cpu: */, "", c)
		if (cpu == "all" || c == cpu) n += $NF
	} END { print n + 0 }' "$DMP_TRACE/events/$wq_event/hist"
}

# fifo_read DESC BELOW DEV ARGS...: write DEV's pattern as a normal task,
# then read it back in rounds (-Q) as a SCHED_FIFO task pinned to $cpu
# (iopoll_verify -r, with ARGS).  No I/O may take 100 ms; some bios to
# BELOW, the one-tag devices (a word list), must end with BLK_STS_AGAIN;
# none of the work queued for the stacks meanwhile may be bound to $cpu.
# One KTAP result.
fifo_read()
{
	local desc=$1 below=$2 dev=$3 out filter again all mine rc=0
	local wq_trigger="hist:keys=workqueue,cpu if $wq_names"
	shift 3

	out=$(mktemp)
	if ! "$DMP_VERIFY" -m write -S 61 "$@" "$dev" >"$out" 2>&1; then
		sed 's/^/# /' "$out"
		rm -f "$out"
		ktap_test_fail "$desc: writing the pattern"
		return
	fi
	# shellcheck disable=SC2086 # a word list
	if ! filter=$(dmp_again_filter $below) ||
		! dmp_count_start block/block_bio_complete dev "$filter" ||
		! echo "$wq_trigger" >"$DMP_TRACE/events/$wq_event/trigger"; then
		rm -f "$out"
		ktap_test_fail "$desc: cannot trace"
		return
	fi
	taskset -c "$cpu" "$DMP_VERIFY" -m read -S 61 -Q -r 50 -L 100 -T 120 \
		"$@" "$dev" >"$out" 2>&1 || rc=$?
	again=$(dmp_count_stop block/block_bio_complete dev "$filter")
	all=$(queued_on all)
	mine=$(queued_on "$cpu")
	echo "!$wq_trigger" >"$DMP_TRACE/events/$wq_event/trigger"
	sed 's/^/# /' "$out"
	rm -f "$out"
	echo "# $desc: $again bios to $below ended with BLK_STS_AGAIN;" \
		"$all works queued for DM and md, $mine of them bound to CPU $cpu"
	if [ "$rc" != 0 ]; then
		ktap_test_fail "$desc: iopoll_verify failed (an I/O of 100 ms or more?)"
	elif [ "$again" = 0 ]; then
		ktap_test_fail "$desc: no bio below ended with BLK_STS_AGAIN"
	elif [ "$mine" != 0 ]; then
		ktap_test_fail "$desc: work for the stack queued on the poller's CPU"
	else
		ktap_test_pass "$desc: no I/O waited 100 ms, no work on the poller's CPU"
	fi
}

# fifo_setup: the poller's CPU in $cpu (the last online one) and the
# others in $others_list (comma separated); RT throttling off and unbound
# workqueues kept off $cpu until the test exits.
fifo_setup()
{
	local cpus mask

	mapfile -t cpus < <(list_cpus /sys/devices/system/cpu/online)
	[ "${#cpus[@]}" -ge 2 ] ||
		dmp_skip_all "needs 2 CPUs: one for the poller, one for the rest"
	cpu=${cpus[-1]}
	# shellcheck disable=SC2034 # for the caller
	others_list=$(IFS=,; echo "${cpus[*]:0:${#cpus[@]}-1}")
	dmp_on_exit "echo $(cat "$rt") >$rt"
	echo -1 >"$rt" || ktap_exit_fail_msg "cannot turn RT throttling off"
	dmp_on_exit "echo $(cat "$wq_mask") >$wq_mask"
	mask=$(mask_without "$(cat "$wq_mask")" "$cpu")
	echo "$mask" >"$wq_mask" ||
		ktap_exit_fail_msg "cannot keep unbound workqueues off CPU $cpu"
}
