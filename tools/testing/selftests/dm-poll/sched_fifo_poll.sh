#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A real-time poller: a SCHED_FIFO reader pinned to one CPU that spins on
# its completion queue and never sleeps, with RT throttling off
# (sched_rt_runtime_us=-1), as IOPOLL is deployed.  Nothing that runs as
# a normal task on its CPU runs while it spins, but for the fair server's
# 50 ms a second: work that its I/O waits for must not be queued there.
# As on such a deployment, unbound workqueues (the workqueue cpumask) and
# md's threads are kept off the poller's CPU: the scheduler would
# otherwise wake them there, next to the task that woke them.
#
# Each case has a device below with one tag, so that REQ_NOWAIT clones
# fail with BLK_STS_AGAIN and the stacking driver retries them from its
# worker: DM from kdmflush (polled clones, crypt's too, and the parts of
# split interrupt-driven bios), md from raid1d and its unbound workers.
# Asserted: the retry path ran (bios below ended with BLK_STS_AGAIN),
# none of the work for DM or md was queued bound to the poller's CPU,
# and no I/O took 100 ms or more, its data verified.  When DM queued
# its retries on the CPU that saw the BLK_STS_AGAIN, as Linux 6.12 does,
# each waited for the fair server, about a second; and so did a request
# waiting in mq-deadline for a tag, whose queue run blk-mq queued to
# kblockd on the poller's CPU.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup mdadm taskset
dmp_require_nullb
KEY=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
rt=/proc/sys/kernel/sched_rt_runtime_us
wq_mask=/sys/devices/virtual/workqueue/cpumask
wq_event=workqueue/workqueue_queue_work
# The workqueues DM and md retry from; crypt's kcryptd_io, which may stay
# bound (polled-io.rst), is not asserted on: no read here lacks memory.
wq_names='(workqueue ~ "kdmflush*" || workqueue ~ "md*")'

# online_cpus: the online CPUs, one a line.
online_cpus()
{
	local r

	tr ',' '\n' </sys/devices/system/cpu/online | while read -r r; do
		seq "${r%-*}" "${r#*-}"
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

mapfile -t cpus < <(online_cpus)
[ "${#cpus[@]}" -ge 2 ] || dmp_skip_all "needs 2 CPUs: one for the poller, one for the rest"
# The poller's CPU: the last online one; the rest run everything else.
cpu=${cpus[-1]}
others_list=$(IFS=,; echo "${cpus[*]:0:${#cpus[@]}-1}")

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

ktap_print_header
ktap_set_plan 5
dmp_on_exit "echo $(cat "$rt") >$rt"
echo -1 >"$rt" || ktap_exit_fail_msg "cannot turn RT throttling off"
dmp_on_exit "echo $(cat "$wq_mask") >$wq_mask"
mask=$(mask_without "$(cat "$wq_mask")" "$cpu")
echo "$mask" >"$wq_mask" ||
	ktap_exit_fail_msg "cannot keep unbound workqueues off CPU $cpu"

onetag fifoa 0 || ktap_exit_fail_msg "cannot create null_blk with one tag"
a=$DMP_NODE
dmp_nullb_create fifob size=64 memory_backed=1 queue_mode=2 ||
	ktap_exit_fail_msg "cannot create null_blk"
b=$DMP_NODE
# 128 KiB from 32 KiB on: every read crosses two 64 KiB chunks, a part
# on the leg with one tag.
dmp_dm_create fifo-striped "0 131072 striped 2 128 $a 0 $b 0" ||
	ktap_exit_fail_msg "cannot create dm-striped"
fifo_read "dm-striped, one leg with one tag, interrupt driven, 128 KiB" \
	"$a" "$DMP_NODE" -I -o 32k -s 16M -b 128k -q 4

onetag fifoc 1 || ktap_exit_fail_msg "cannot create null_blk with one tag"
c=$DMP_NODE
dmp_dm_create fifo-linear "0 65536 linear $c 0" ||
	ktap_exit_fail_msg "cannot create dm-linear"
fifo_read "dm-linear over one tag, polled" "$c" "$DMP_NODE" -s 16M -b 4k -q 4
# With an I/O scheduler, a request that finds the tag taken waits in the
# scheduler for a queue run, which the completion that frees the tag
# queues to kblockd (blk_mq_sched_restart()).
echo mq-deadline >"$(dmp_sysfs "$c")/queue/scheduler" ||
	ktap_exit_fail_msg "cannot set mq-deadline"
fifo_read "dm-linear over one tag with mq-deadline, polled" "$c" "$DMP_NODE" \
	-s 16M -b 4k -q 4
echo none >"$(dmp_sysfs "$c")/queue/scheduler" ||
	ktap_exit_fail_msg "cannot set scheduler none"
dmp_dm_remove fifo-linear

dmp_dm_create fifo-crypt "0 65536 crypt aes-xts-plain64 $KEY 0 $c 0" ||
	ktap_exit_fail_msg "cannot create dm-crypt"
fifo_read "dm-crypt over one tag, polled" "$c" "$DMP_NODE" -s 16M -b 4k -q 4
dmp_dm_remove fifo-crypt

onetag fifod 1 || ktap_exit_fail_msg "cannot create null_blk with one tag"
d=$DMP_NODE
dmp_md_create 1 --assume-clean --bitmap=none -- "$c" "$d" ||
	ktap_exit_fail_msg "cannot create md raid1"
taskset -p -c "$others_list" "$(pidof "${DMP_NODE#/dev/}_raid1")" >/dev/null ||
	ktap_exit_fail_msg "cannot keep raid1d off CPU $cpu"
fifo_read "md raid1 over one tag, polled" "$c $d" "$DMP_NODE" -s 16M -b 4k -q 4
ktap_finished
