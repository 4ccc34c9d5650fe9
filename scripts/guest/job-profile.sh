#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest job "profile": where a stacked I/O spends its instructions.  Meant
# to run under QEMU's -icount shift=0,sleep=off, where a nanosecond of
# guest time is one guest instruction: perf's cpu-clock, sampled every
# PERIOD ns, then counts PERIOD instructions per sample.  The same fio
# point runs on raw null_blk and on the stack.
#
# Arguments: STACK [WORKLOAD] [RUNTIME] [PERIOD] [CPUS] [NICE]
#   STACK     null_blk, dm-linear, dm-striped-2, dm-linear/dm-striped-2,
#             md-linear-2, md-raid0-2, md-raid1-2, md-raid10-2 or
#             dm-integrity (the bench's no-regression setup, nr_integrity
#             in job-bench.sh: journal mode, crc32c tags, 64 KiB interleave
#             areas over a memory-backed null_blk, its first 64 MiB
#             written; fio within those, the journal written out before
#             each run)
#   WORKLOAD  polled, fio on CPU 1 and perf on CPU 1 alone:
#               4k-randread-qd1, 4k-randread-qd16 (default)
#             interrupt driven (io_uring without hipri, fio on any CPU, as
#             the no-regression bench runs it):
#               4k-randread-qd1-irq, 4k-randread-qd16-irq
#   RUNTIME   guest seconds of fio per run (default 2; interrupt driven
#             10, a window in a longer run)
#   PERIOD    ns of guest time between samples (0 or nothing: 20000 polled,
#             500000 interrupt driven: with every CPU sampled, a shorter
#             one perturbs the run, the halted CPU's sampling interrupts
#             most)
#   CPUS      CPUs left online (the others are taken offline first;
#             0 or nothing: all, 2); polled runs take the last
#   NICE      fio's nice value (fio --nice; default 0)
#
# The interrupt-driven workloads hand I/O to other tasks on either CPU
# (io-wq workers where the device does not take REQ_NOWAIT, a target's
# workqueues), so perf samples every CPU (perf record -a), its events
# enabled for RUNTIME seconds in the middle of a fio run of RUNTIME + 2
# (perf's start and exit, fio's start and exit are outside).
# Single-threaded TCG runs the vCPUs in turn, each for a share of the
# time to the next timer: a CPU's sample every PERIOD ns of guest time
# is PERIOD instructions only while no other CPU runs a task.  So a
# task's sample counts 1 / (1 + the other CPUs running a task at its
# time, as their nearest samples show); a sample of the idle task, halted
# or in an interrupt, 1 / NCPUS when no CPU runs a task (guest time that
# passes with few or no instructions run), else nothing.  (A CPU woken
# from its halt by an interrupt, perf's own above all, runs its handler
# with interrupts off in slices between the other CPU's: its samples
# fall where the handler ends, for the other CPU's time, hence nothing.)
# The weights sum to the guest time sampled (WINDOW shows both).  The
# I/Os of the samples' span are the device's completed reads (its stat
# file) at the rate measured around it.  Besides, a run without perf
# counts context switches, IPIs and each CPU's busy time over RUNTIME
# seconds, and one under perf stat tracepoints (wakeups, work items,
# io-wq hand-offs).
#
# Output, one line each:
#   VIOPS|device|IOPS                    per device, a run without perf
#                                        (interrupt driven: its window)
#   PROFILE|device|I/Os|samples|period   per run under perf (interrupt
#                                        driven: samples weighted, a
#                                        decimal)
#   FUNC|device|function|samples         kernel functions of the run,
#                                        "(user space)", "(idle)"
#   TASK|device|task|cpu|samples         (interrupt driven) by task: fio,
#                                        io-wq, kworker, idle...
#   TFUNC|device|task|function|samples   (interrupt driven) by both
#   COUNT|device|what|count|I/Os         (interrupt driven) events and
#                                        the I/Os they were counted over
#   BUSY|device|cpuN|percent             (interrupt driven) each CPU's
#                                        time not idle, same window
#   MODULE|device|module|samples         (interrupt driven) by module:
#                                        kernel, dm_integrity, dm_bufio...
#   WAKE|device|waker → wakee|count|I/Os (interrupt driven) sched_wakeup
#                                        by task kind (fio, kworker,
#                                        io-wq worker, idle...)
#   SWITCH|device|prev → next|count|I/Os (interrupt driven) sched_switch
#   WINDOW|device|ns|weighted ns         (interrupt driven) the samples'
#                                        span and what their weights sum to
set -u
# blk-mq's reaper at the kernel's own bound, not the tests' (lib.sh)
export DMP_REAP_MS=
# shellcheck source=/dev/null
. /kselftest/dm-poll/lib.sh
# shellcheck source=scripts/guest/stacks.sh
. /jobs/stacks.sh
dmp_load_stack || exit 1

stack=${1:?stack}
workload=${2:-4k-randread-qd16}
runtime=${3:-}
ncpus=${5:-0}
nice=${6:-0}
if [ "$ncpus" != 0 ]; then
	for c in /sys/devices/system/cpu/cpu[0-9]*; do
		[ "${c##*cpu}" -ge "$ncpus" ] || continue
		echo 0 >"$c/online" || { echo "# profile: cannot take ${c##*/} offline"; exit 1; }
	done
fi
cpu=$(($(nproc) - 1))
[ "$cpu" -le 1 ] || cpu=1
echo "# profile: $(nproc) CPUs online"

case $workload in
4k-randread-qd1) qd=1 irq= ;;
4k-randread-qd16) qd=16 irq= ;;
4k-randread-qd1-irq) qd=1 irq=1 ;;
4k-randread-qd16-irq) qd=16 irq=1 ;;
*) echo "# profile: unknown workload $workload"; exit 1 ;;
esac
# Every CPU sampled costs more, each sample's interrupt waking a halted
# CPU: fewer samples, over a longer RUNTIME.
period=20000
[ -z "$irq" ] || period=500000
[ "${4:-0}" = 0 ] || period=$4
if [ -z "$runtime" ]; then
	runtime=2
	[ -z "$irq" ] || runtime=10
fi
# Every wakeup and switch recorded: a shorter window.
sched_window=$(((runtime + 4) / 5))
command -v perf >/dev/null || { echo "# profile: no perf in the guest"; exit 1; }

# Before each run of the stack, when set: a function (dm-integrity's
# journal written out).
PROFILE_PREP=

# fio_prep: before each run: PROFILE_PREP (the stack's), and for the
# interrupt-driven workloads the page cache and slabs dropped, as the
# no-regression bench's nr_fio does.
fio_prep()
{
	[ -z "$PROFILE_PREP" ] || "$PROFILE_PREP" || return 1
	[ -n "$irq" ] || return 0
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# fio_run DEV REGION SECONDS [COMMAND...]: one fio run on DEV (REGION:
# fio's --offset and --size, or nothing), under COMMAND (or "exec").  Polled: on CPU
# 1; interrupt driven: as nr_fio runs io_uring (hipri=0, registered
# buffers, any CPU).
fio_run()
{
	local dev=$1 where mode
	read -r -a where <<<"$2"
	local seconds=$3

	shift 3
	if [ -n "$irq" ]; then
		mode=(--hipri=0)
	else
		mode=(--hipri=1 --cpus_allowed="$cpu")
	fi
	"$@" fio --name=profile --filename="$dev" --ioengine=io_uring --direct=1 \
		--nice="$nice" "${mode[@]}" --fixedbufs --rw=randread --bs=4k --iodepth="$qd" \
		"${where[@]}" --time_based --runtime="$seconds" \
		--norandommap --randrepeat=1 --output-format=terse --terse-version=3 \
		>/tmp/fio.terse 2>/tmp/fio.err
}

# reads_done DEV: reads DEV completed so far (its stat file).
reads_done()
{
	awk '{ print $1 }' "$(dmp_sysfs "$1")/stat"
}

# counters: "name value" lines of the COUNT and BUSY lines: context
# switches, interrupts by kind (every CPU), each CPU's idle time
# (USER_HZ ticks, which the kernel keeps from its precise idle time).
counters()
{
	awk '$1 == "ctxt" { print "context-switches", $2 }' /proc/stat
	awk 'NR > 1 && ($1 == "RES:" || $1 == "CAL:" || $1 == "LOC:" || $1 == "TLB:") {
		n = 0
		for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++)
			n += $i
		print "irq-" substr($1, 1, length($1) - 1), n
	}' /proc/interrupts
	awk '/^cpu[0-9]/ { print $1 "-idle-ticks", $5 + $6 }' /proc/stat
}

# now_us: the guest's clock, in microseconds.
now_us()
{
	echo "${EPOCHREALTIME/./}"
}

# perf_start ARGS...: perf ARGS (record or stat) on every CPU in the
# background, its events disabled until window enables them: perf's
# start and exit stay out of the window.  Started after fio, it knows
# fio's threads and maps from /proc (it records none while disabled).
perf_start()
{
	rm -f /tmp/perf.ctl /tmp/perf.ack
	mkfifo /tmp/perf.ctl /tmp/perf.ack || return 1
	# Read-write: opening a fifo so does not wait for perf.
	exec 7<>/tmp/perf.ctl 8<>/tmp/perf.ack
	perf "$@" -a -D -1 --control fifo:/tmp/perf.ctl,/tmp/perf.ack >/tmp/perf.log 2>&1 &
	perf_pid=$!
	# perf answers once it has set up (which takes a while): then fio.
	perf_ctl disable
}

# perf_ctl enable|disable: and wait for perf's ack.
perf_ctl()
{
	local ack=

	echo "$1" >&7
	read -r -t 300 ack <&8
	[ "$ack" = ack ] || { echo "# profile: perf: no ack to $1: $(head -c 300 /tmp/perf.log)"; return 1; }
}

# perf_stop: perf_start's perf ends (SIGINT) and writes its output.
perf_stop()
{
	kill -INT "$perf_pid" 2>/dev/null
	wait "$perf_pid"
	exec 7>&- 8>&-
}

# window DEV SECONDS [perf]: with fio_bg's fio running on DEV, SECONDS
# between two looks at DEV's reads and the clock, perf_start's events
# enabled in them with "perf"; sets win_reads and win_ns (DEV's reads
# and the guest time between the looks), win_ios (the reads over
# SECONDS at that rate) and win_end (DEV's reads at the end).  Fails if
# fio had not started or perf failed.
window()
{
	local dev=$1 seconds=$2 r0 r1 t0 ta tb t1 rc=0

	r0=$(reads_done "$dev")
	t0=$(now_us)
	[ -z "${3:-}" ] || perf_ctl enable || rc=1
	ta=$(now_us)
	sleep "$seconds"
	tb=$(now_us)
	[ -z "${3:-}" ] || perf_ctl disable || rc=1
	t1=$(now_us)
	r1=$(reads_done "$dev")
	win_ns=$(((t1 - t0) * 1000))
	win_reads=$((r1 - r0))
	win_end=$r1
	win_ios=$(awk -v r="$win_reads" -v t="$win_ns" -v s="$seconds" \
		'BEGIN { printf "%.0f", r * s * 1e9 / t }')
	[ "$r0" -gt "$fio_start" ] || { echo "# profile: fio had not started"; rc=1; }
	echo "# profile: window at $(((t0 - fio_t0) / 1000)) ms of fio's run: $win_reads reads in" \
		"$((win_ns / 1000000)) ms (enable $(((ta - t0) / 1000)), sleep $(((tb - ta) / 1000))," \
		"disable $(((t1 - tb) / 1000)))"
	return "$rc"
}

# fio_bg DEV REGION SECONDS: fio in the background for SECONDS (ended
# sooner by fio_bg_end ... stop), the window one second after its start.
fio_bg()
{
	fio_start=$(reads_done "$1")
	fio_t0=$(now_us)
	fio_run "$1" "$2" "$3" exec &
	fio_pid=$!
	sleep 1
}

# fio_bg_end NAME DEV [stop]: wait for fio_bg's fio, or with "stop" end
# it (SIGINT) first: under perf, the window may last longer than asked
# (perf answers late); fails if fio failed, or had ended before the
# window did (no read since).
fio_bg_end()
{
	local r

	r=$(reads_done "$2")
	[ -z "${3:-}" ] || kill -INT "$fio_pid"
	if ! wait "$fio_pid" && [ -z "${3:-}" ]; then
		echo "# profile: $1: $(head -c 300 /tmp/fio.err)"
		return 1
	fi
	[ "$r" -gt "$win_end" ] || {
		echo "# profile: $1: fio ended before the window did ($((r - fio_start)) reads" \
			"in $((($(now_us) - fio_t0) / 1000)) ms)"
		return 1
	}
}

# counts_run NAME DEV REGION: VIOPS, COUNT, BUSY, WAKE and SWITCH lines
# (interrupt driven): a fio run without perf, its counters over a window
# of RUNTIME seconds; one under perf stat for the tracepoints; one
# recording the scheduler's wakeups and switches.
counts_run()
{
	local name=$1 dev=$2 region=$3 events=cpu-clock ev rc=0

	fio_prep || return 1
	fio_bg "$dev" "$region" "$((runtime + 60))"
	counters >/tmp/count.0
	window "$dev" "$runtime" || rc=1
	counters >/tmp/count.1
	fio_bg_end "$name" "$dev" stop || rc=1
	[ "$rc" = 0 ] || return 1
	# fio's own runtime is off by its clock's calibration (TSC) under
	# TCG: the reads and the guest clock over the window instead.
	echo "VIOPS|$name|$(awk -v r="$win_reads" -v t="$win_ns" 'BEGIN { printf "%.0f", r * 1e9 / t }')"
	awk -v n="$name" -v ios="$win_ios" -v ns="$win_ns" '
		NR == FNR { v[$1] = $2; next }
		$1 ~ /-idle-ticks$/ {
			# USER_HZ 100: 10 ms a tick
			cpu = $1; sub(/-idle-ticks$/, "", cpu)
			printf "BUSY|%s|%s|%.1f\n", n, cpu, 100 - ($2 - v[$1]) * 1e9 / ns
			next
		}
		{ print "COUNT|" n "|" $1 "|" $2 - v[$1] "|" ios }
	' /tmp/count.0 /tmp/count.1
	# Tracepoints, in a run of their own (counting them costs), with
	# cpu-clock for the time they were counted.
	for ev in sched:sched_switch sched:sched_wakeup sched:sched_migrate_task \
		workqueue:workqueue_execute_start io_uring:io_uring_queue_async_work \
		io_uring:io_uring_submit_req io_uring:io_uring_complete \
		io_uring:io_uring_cqring_wait io_uring:io_uring_task_work_run \
		irq_vectors:reschedule_entry irq_vectors:call_function_single_entry; do
		[ ! -d "/sys/kernel/debug/tracing/events/${ev%%:*}/${ev#*:}" ] ||
			events=$events,$ev
	done
	fio_prep || return 1
	fio_bg "$dev" "$region" "$((runtime + 60))"
	perf_start stat -x, -o /tmp/stat.txt -e "$events" || rc=1
	[ "$rc" != 0 ] || window "$dev" "$runtime" perf || rc=1
	perf_stop
	fio_bg_end "$name" "$dev" stop || rc=1
	[ "$rc" = 0 ] || return 1
	# The reads while counting: at the window's rate, for the time
	# cpu-clock counted (msec, on every CPU).
	awk -F, -v n="$name" -v r="$win_reads" -v t="$win_ns" -v ncpu="$(nproc)" '
		$3 == "cpu-clock" { ios = r * $1 / ncpu * 1e6 / t }
		$1 ~ /^[0-9]+$/ && $3 != "" { c[$3] = $1 }
		END {
			for (e in c)
				printf "COUNT|%s|%s|%s|%.0f\n", n, e, c[e], ios
		}
	' /tmp/stat.txt
	# Who wakes whom, and who runs after whom: every sched_wakeup and
	# sched_switch over a window of its own.
	fio_prep || return 1
	fio_bg "$dev" "$region" "$((runtime + 60))"
	perf_start record -q -B -m 1024 -o /tmp/sched.data -e sched:sched_wakeup \
		-e sched:sched_switch || rc=1
	[ "$rc" != 0 ] || window "$dev" "$sched_window" perf || rc=1
	comms_snapshot
	perf_stop
	fio_bg_end "$name" "$dev" stop || rc=1
	[ "$rc" = 0 ] || return 1
	perf script -i /tmp/sched.data -F comm,tid,event,trace 2>/dev/null |
		awk -v n="$name" -v ios="$win_ios" '
		function who(c) {
			if (c ~ /^:[0-9]+$/ && (substr(c, 2) in known))
				c = known[substr(c, 2)]
			if (c ~ /^kworker\//) return "kworker"
			if (c ~ /^iou-wrk-/) return "io-wq worker"
			if (c ~ /^swapper/) return "idle"
			if (c ~ /^ksoftirqd/) return "ksoftirqd"
			if (c ~ /^(perf|sleep)$/) return "perf"
			return c
		}
		FILENAME == comms { known[$1] = $2; next }
		{
			for (k = 1; k <= NF; k++)
				if ($k ~ /^sched:sched_(wakeup|switch):$/)
					break
			if (k > NF)
				next
			cur = $1
			if ($(k - 1) in known && cur ~ /^:/) cur = ":" $(k - 1)
			for (i = k + 1; i <= NF; i++) {
				split($i, kv, "=")
				v[kv[1]] = kv[2]
			}
			if ($k == "sched:sched_wakeup:")
				W[who(cur) " → " who(v["comm"])]++
			else
				S[who(v["prev_comm"]) " → " who(v["next_comm"])]++
		}
		END {
			for (e in W)
				print "WAKE|" n "|" e "|" W[e] "|" ios
			for (e in S)
				print "SWITCH|" n "|" e "|" S[e] "|" ios
		}' comms=/tmp/comms.txt /tmp/comms.txt -
}

# comms_snapshot: the names of the threads alive, "tid comm" lines in
# /tmp/comms.txt, for those perf met while its events were off (fio and
# its io-wq workers record no comm event then).
comms_snapshot()
{
	local t

	for t in /proc/[0-9]*/task/[0-9]*; do
		echo "${t##*/} $(cat "$t/comm" 2>/dev/null)"
	done >/tmp/comms.txt
}

# weigh NAME: perf script's samples (/tmp/perf.txt) weighted as the
# header says; FUNC, MODULE, TASK, WINDOW lines, and on stdout's last
# line the weights' sum (for PROFILE) and the samples' span (ns).
weigh()
{
	awk -v n="$1" -v period="$period" '
	function parse(   k, i) {
		for (k = 1; k <= NF; k++)
			if ($k ~ /^\[[0-9]+\]$/)
				break
		if (k > NF || k < 3)
			return 0
		comm = $1
		for (i = 2; i < k - 1; i++)
			comm = comm " " $i
		tid = $(k - 1)
		if (comm ~ /^:[0-9]+$/ && (tid in known))
			comm = known[tid]
		c = substr($k, 2, length($k) - 2) + 0
		t = $(k + 1); sub(/:$/, "", t); t += 0
		ip = $(k + 2)
		sym = (k + 3 <= NF) ? $(k + 3) : "[unknown]"
		mod = $NF
		if (mod ~ /^\(\[.*\]\)$/) {
			mod = substr(mod, 3, length(mod) - 4)
			if (mod == "kernel.kallsyms") mod = "kernel"
		} else
			mod = "user space"
		kernel = length(ip) == 16 && ip ~ /^ffff/
		# halted: the idle task where it halts (the rest of the idle
		# loop runs instructions)
		idle = tid == 0 && sym ~ /^(default_idle|arch_cpu_idle|pv_native_safe_halt|native_safe_halt|acpi_safe_halt|acpi_idle_do_entry|mwait_idle|mwait_idle_with_hints|intel_idle)$/
		return 1
	}
	FILENAME == comms {
		# tid comm: the threads perf met while its events were off
		# (fio and its io-wq workers: no comm event recorded)
		c = $2
		for (i = 3; i <= NF; i++)
			c = c " " $i
		known[$1] = c
		next
	}
	FNR == 1 { pass++ }
	pass == 1 {
		if (!parse())
			next
		if (!(c in ns)) { ns[c] = 0; cpus[++ncpu] = c }
		ns[c]++
		if (ns[c] > 1 && t - T[c, ns[c] - 1] > gap[c]) {
			gap[c] = t - T[c, ns[c] - 1]
			gapat[c] = t
		}
		T[c, ns[c]] = t
		B[c, ns[c]] = tid != 0
		if (first == "" || t < first) first = t
		if (last == "" || t > last) last = t
		next
	}
	{
		if (!parse())
			next
		busy = 0
		for (j = 1; j <= ncpu; j++) {
			d = cpus[j]
			if (d == c)
				continue
			# the nearest sample of CPU d
			if (!(d in p)) p[d] = 1
			while (p[d] < ns[d] && T[d, p[d] + 1] <= t)
				p[d]++
			q = p[d]
			if (q < ns[d] && T[d, q + 1] - t < t - T[d, q])
				q++
			busy += B[d, q]
		}
		nsamples++
		if (comm ~ /^:[0-9]+$/)
			unknown++
		if (idle) {
			w = busy ? 0 : 1 / ncpu
			fn = "(idle)"
			task = "(idle)"
		} else {
			w = tid == 0 ? (busy ? 0 : 1 / ncpu) : 1 / (1 + busy)
			fn = !kernel ? "(user space)" : mod == "kernel" ? sym : sym " [" mod "]"
			if (tid == 0) task = "interrupts in idle"
			else if (comm == "fio") task = "fio"
			else if (comm ~ /^iou-wrk-/) task = "io-wq workers"
			else if (comm ~ /^iou-sqp-/) task = "io_uring sqpoll"
			else if (comm ~ /^kworker\//) task = "kworkers"
			else if (comm ~ /^ksoftirqd\//) task = "ksoftirqd"
			else if (comm == "perf" || comm == "sleep" || comm == "perf-exec") task = "perf"
			else task = "other tasks"
		}
		f[fn] += w
		tf[task, fn] += w
		if (!idle) md[kernel ? mod : "user space"] += w
		tk[task, c] += w
		sum += w
	}
	END {
		for (fn in f)
			printf "FUNC|%s|%s|%.2f\n", n, fn, f[fn]
		for (key in tf) {
			split(key, a, SUBSEP)
			if (tf[key] > 0)
				printf "TFUNC|%s|%s|%s|%.2f\n", n, a[1], a[2], tf[key]
		}
		for (m in md)
			printf "MODULE|%s|%s|%.2f\n", n, m, md[m]
		for (key in tk) {
			split(key, a, SUBSEP)
			printf "TASK|%s|%s|%s|%.2f\n", n, a[1], a[2], tk[key]
		}
		printf "# profile: %s: %d samples, %d of threads not known\n", n, nsamples, unknown
		for (j = 1; j <= ncpu; j++)
			printf "# profile: %s: cpu%s: %d samples, longest gap %.3f ms, at %.3f s\n",
				n, cpus[j], ns[cpus[j]], gap[cpus[j]] * 1e3, gapat[cpus[j]] - first
		span = (last - first) * 1e9 + period
		printf "WINDOW|%s|%.0f|%.0f\n", n, span, sum * period
		printf "%.2f %.0f\n", sum, span
	}' comms=/tmp/comms.txt /tmp/comms.txt /tmp/perf.txt /tmp/perf.txt
}

# profile_run NAME DEV [REGION]: a fio run on DEV without perf, for its
# vIOPS (sampling costs about 5%), then one under perf.
profile_run()
{
	local name=$1 dev=$2 region=${3:-} ios samples span rc=0

	if [ -n "$irq" ]; then
		counts_run "$name" "$dev" "$region" || return 1
		fio_prep || return 1
		# Buffers for every sample of the window: perf need not run in
		# it (and lose none).
		fio_bg "$dev" "$region" "$((runtime + 60))"
		perf_start record -q -B -m 1024 -o /tmp/perf.data -e cpu-clock \
			-c "$period" || rc=1
		[ "$rc" != 0 ] || window "$dev" "$runtime" perf || rc=1
		comms_snapshot
		perf_stop
		fio_bg_end "$name" "$dev" stop || rc=1
		[ "$rc" = 0 ] || return 1
		perf report -i /tmp/perf.data --stats 2>/dev/null | grep -i lost |
			sed "s/^ */# profile: $name: perf /"
		perf script -i /tmp/perf.data -F comm,tid,cpu,time,ip,sym,dso --ns \
			2>/dev/null >/tmp/perf.txt
		weigh "$name" >/tmp/weigh.txt
		sed '$d' /tmp/weigh.txt
		# The reads in the samples' span, at the window's rate.
		read -r samples span < <(tail -n 1 /tmp/weigh.txt)
		ios=$(awk -v r="$win_reads" -v t="$win_ns" -v s="$span" \
			'BEGIN { printf "%.0f", r * s / t }')
		[ "${ios:-0}" -gt 0 ] || { echo "# profile: $name: no I/O"; return 1; }
		echo "PROFILE|$name|$ios|$samples|$period"
		return 0
	fi
	fio_prep || return 1
	fio_run "$dev" "$region" "$runtime" ||
		{ echo "# profile: $name: $(head -c 300 /tmp/fio.err)"; return 1; }
	echo "VIOPS|$name|$(awk -F';' '$1 == 3 { print $8 }' /tmp/fio.terse)"
	fio_prep || return 1
	fio_run "$dev" "$region" "$runtime" \
		perf record -q -o /tmp/perf.data -e cpu-clock -c "$period" -C "$cpu" -- ||
		{ echo "# profile: $name: $(head -c 300 /tmp/fio.err)"; return 1; }
	# Terse v3: read IOPS 8, runtime (ms) 9.
	ios=$(awk -F';' '$1 == 3 { printf "%d", $8 * $9 / 1000 }' /tmp/fio.terse)
	[ "${ios:-0}" -gt 0 ] || { echo "# profile: $name: no I/O"; return 1; }
	perf report -q -i /tmp/perf.data --stdio --sort sym -F sample,sym \
		2>/dev/null >/tmp/perf.txt
	awk -v n="$name" '
		$2 == "[k]" { print "FUNC|" n "|" $3 "|" $1; total += $1 }
		$2 == "[.]" { user += $1 }
		END { print "FUNC|" n "|(user space)|" user + 0 }
	' /tmp/perf.txt
	echo "PROFILE|$name|$ios|$(awk '$2 == "[k]" || $2 == "[.]" { n += $1 } END { print n + 0 }' /tmp/perf.txt)|$period"
}

# md_build LEVEL MDADM-OPTION...: an md array without superblocks over
# both devices (null_blk keeps no data), as the bench builds them.
md_build()
{
	local node=/dev/md$((90 + DMP_NMD++)) level=$1
	shift

	mdadm --build "$node" --level="$level" --raid-devices=2 "$@" \
		"${nulls[@]}" >/tmp/mdadm.log 2>&1 ||
		{ echo "# mdadm --build $level: $(cat /tmp/mdadm.log)"; return 1; }
	DMP_TEARDOWN+=("md $node")
	dmp_md_settle "$node"
	DMP_NODE=$node
}

# integrity_build: stacks.sh's dm-integrity, as job-bench.sh's
# nr_integrity builds it; set DMP_NODE.
integrity_build()
{
	integrity_create profile
}

# integrity_flush: dm-integrity suspended and resumed, which writes its
# journal out (job-bench.sh's nr_integrity_flush).
integrity_flush()
{
	dmp_dm_suspend_resume "$DMP_PREFIX-nr-integ"
}

# Fixed addresses, as the no-regression bench (nr_buffers).
[ -z "$irq" ] || echo 0 >/proc/sys/kernel/randomize_va_space

nulls=()
for i in 0 1; do
	dmp_nullb_create "p$i" size=1024 queue_mode=2 poll_queues=1 submit_queues=1 \
		irqmode=0 memory_backed=0 blocksize=512 hw_queue_depth=256 ||
		{ echo "# profile: cannot create null_blk p$i"; exit 1; }
	nulls+=("$DMP_NODE")
done
striped="0 4194304 striped 2 128 ${nulls[0]} 0 ${nulls[1]} 0"

profile_run null_blk "${nulls[0]}" || exit 1
region=
case $stack in
null_blk) exit 0 ;;
dm-linear) dmp_dm_create linear "0 2097152 linear ${nulls[0]} 0" ;;
dm-striped-2) dmp_dm_create striped "$striped" ;;
dm-linear/dm-striped-2)
	dmp_dm_create striped "$striped" &&
		dmp_dm_create linear-striped "0 4194304 linear $DMP_NODE 0" ;;
md-linear-2) md_build linear ;;
md-raid0-2) md_build 0 --chunk=64 ;;
md-raid1-2) md_build 1 --assume-clean ;;
md-raid10-2) md_build 10 --assume-clean --chunk=64 ;;
dm-integrity)
	integrity_build && PROFILE_PREP=integrity_flush region=--size=64M ;;
*) echo "# profile: unknown stack $stack"; exit 1 ;;
esac || { echo "# profile: cannot build $stack"; exit 1; }
profile_run "$stack" "$DMP_NODE" "$region" || exit 1
dmp_cleanup
