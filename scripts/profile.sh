#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "make profile": the kernel functions an I/O runs through, in guest
# instructions per I/O, raw null_blk and a stack side by side.
#
# Boots the bench kernel (BASE=1: the base) under QEMU's -icount
# shift=0,sleep=off, where a nanosecond of guest time is one guest
# instruction, and samples fio with perf's cpu-clock
# (scripts/guest/job-profile.sh): polled, on the CPU fio runs on;
# interrupt driven, on every CPU, each sample weighed by the CPUs
# running beside it (io-wq workers and a target's workqueues run on
# either).  scripts/profile-report.py turns the samples into
# instructions per I/O.
#
#   STACK=S      null_blk, dm-linear (default), dm-striped-2,
#                dm-linear/dm-striped-2, md-linear-2, md-raid0-2,
#                md-raid1-2, md-raid10-2, dm-integrity (make bench's
#                no-regression setup: journal mode, crc32c)
#   WORKLOAD=W   polled: 4k-randread-qd16 (default) or 4k-randread-qd1;
#                interrupt driven (io_uring without hipri, as make
#                bench's no-regression section): 4k-randread-qd16-irq or
#                4k-randread-qd1-irq (with tables by task, by module and
#                of events per I/O: context switches, wakeups, work items)
#   RUNTIME=N    guest seconds of fio per run (default 2; interrupt
#                driven: 10)
#   PERIOD=N     ns of guest time between samples (default 20000;
#                interrupt driven, every CPU sampled: 500000)
#   TOP=N        functions shown (default 40; 25 with COMPARE=1)
#   RESULTS=1    put the tables into the profile section of doc/results.md
#                (README=1, the old name, does the same); with COMPARE=1,
#                into the profile-compare section
#   COMPARE=1    profile the base kernel and ours (two VMs side by side,
#                slots SP_VM_SLOT-base and -patched) and compare the
#                stack on both: totals, by task, module, rough category,
#                events and functions (build/profile/STACK-WORKLOAD-compare.md)
#   NR_REPS=N    with COMPARE=1: also run make bench's no-regression rows
#                of the stack N times on each kernel (guest job bench
#                noregress 1 N) and compare the runs of every point;
#                NR_BOOTS=M: in M boots of each kernel (default 1)
#   CPUS=N       the guest's CPUs left online (default 2, all): with 1,
#                whatever the kernel hands to other tasks runs on fio's
#                CPU too
#   NICE=N       fio's nice value (default 0): the scheduler's wakeup
#                preemption between fio and the tasks it hands I/O to
#   CONFIGS="CPUS:NICE..."  several of those, a run (a comparison) each
#                (default "$CPUS:$NICE"); the comparisons after the first
#                are brief: totals, tasks, events, wakeups, summary
#   NOBUILD=1    take the kernels (build/kernel/{base,patched}/obj) and
#                the initramfs as they are built: no build, no deps
# STACK may name several stacks, each run in a boot of its own.  Each
# table goes to stdout and build/profile/STACK-WORKLOAD.md; the guest's
# output to build/logs/profile-STACK-WORKLOAD-TREE.out.
set -eu
. "$(dirname "$0")/lib.sh"

stacks=${STACK:-dm-linear}
workload=${WORKLOAD:-4k-randread-qd16}
runtime=${RUNTIME:-}
period=${PERIOD:-}
compare=${COMPARE:-}
nr_reps=${NR_REPS:-0}
nr_boots=${NR_BOOTS:-1}
configs=${CONFIGS:-${CPUS:-2}:${NICE:-0}}
top=${TOP:-40}
[ -z "$compare" ] || top=${TOP:-25}
scripts=$SP_TOP/scripts
for stack in $stacks; do
	case $stack in
	null_blk | dm-linear | dm-striped-2 | dm-linear/dm-striped-2 | md-linear-2 | \
		md-raid0-2 | md-raid1-2 | md-raid10-2 | dm-integrity) ;;
	*) die "profile: unknown STACK=$stack (see scripts/profile.sh)" ;;
	esac
done
case $workload in
4k-randread-qd1 | 4k-randread-qd16) how=polled ;;
4k-randread-qd1-irq | 4k-randread-qd16-irq) how="interrupt driven" ;;
*) die "profile: unknown WORKLOAD=$workload (4k-randread-qd1, 4k-randread-qd16 or the same with -irq)" ;;
esac
for n in "$nr_reps" "$nr_boots"; do
	case $n in
	'' | *[!0-9]*) die "profile: NR_REPS and NR_BOOTS take numbers, not '$n'" ;;
	esac
done
for c in $configs; do
	case $c in
	[0-9]*:[0-9]* | [0-9]*:-[0-9]*) ;;
	*) die "profile: CONFIGS takes CPUS:NICE pairs of numbers, not '$c'" ;;
	esac
done

[ -n "$runtime" ] || { runtime=2; [ "$how" = polled ] || runtime=10; }

trees=$(sp_tree)
[ -z "$compare" ] || trees="base patched"
if [ "${NOBUILD:-}" = 1 ]; then
	need_cmds python3
else
	bash "$scripts/deps.sh"
	need_cmds python3 perf
	bash "$scripts/base-tree.sh"
	bash "$scripts/apply-series.sh"
	for tree in $trees; do
		bash "$scripts/build-kernel.sh" "$tree" >/dev/null
	done
	bash "$scripts/initramfs.sh" >/dev/null
fi

# nr_stack STACK: the no-regression bench's name of STACK (its nr_
# function in job-bench.sh), nothing for a stack it does not run.
nr_stack()
{
	case $1 in
	dm-linear) echo dm_linear ;;
	dm-striped-2 | dm-linear/dm-striped-2) echo dm_striped ;;
	md-raid0-2) echo md_raid0 ;;
	md-raid1-2) echo md_raid1 ;;
	md-raid10-2) echo md_raid10 ;;
	dm-integrity) echo dm_integrity ;;
	esac
}

# vm_runs NAME JOB...: the job on each kernel of $trees, side by side
# with COMPARE=1 (each in a VM slot of its own), its output in
# build/logs/NAME-TREE.out.
vm_runs()
{
	local name=$1 tree pids=() rc=0 pid slot

	shift
	for tree in $trees; do
		slot=${SP_VM_SLOT:-}
		[ -z "$compare" ] || slot=${SP_VM_SLOT:-profile}-$tree
		SP_VM_SLOT=$slot bash "$scripts/vm-run.sh" --icount --timeout 3000 \
			--name "$name-$tree" "$(sp_obj "$tree")/arch/x86/boot/bzImage" "$@" &
		pids+=($!)
		[ -n "$compare" ] || wait "${pids[-1]}" || rc=1
	done
	for pid in "${pids[@]}"; do
		wait "$pid" || rc=1
	done
	return "$rc"
}

for tree in $trees; do
	[ -f "$(sp_obj "$tree")/arch/x86/boot/bzImage" ] || die "profile: no $tree kernel"
done
out=$SP_BUILD/profile
mkdir -p "$out"
reports=()
for stack in $stacks; do
	slug=$(echo "$stack" | tr / _)
	for config in $configs; do
		ncpus=${config%%:*} nice=${config#*:}
		name=profile-$slug-$workload what=''
		[ "$ncpus" = 2 ] || name=$name-cpus$ncpus what=", $ncpus CPU(s)"
		[ "$nice" = 0 ] || name=$name-nice$nice what="$what, fio at nice $nice"
		vm_runs "$name" profile "$stack" "$workload" "$runtime" "${period:-0}" \
			"$ncpus" "$nice" ||
			die "profile: a guest run failed (build/logs/$name-*.out, .console)"
		if [ -z "$compare" ]; then
			tree=$(sp_tree)
			report=$out/${name#profile-}.md
			python3 "$scripts/profile-report.py" --top "$top" \
				--title "$stack, $workload $how$what, $(cat "$(sp_obj "$tree")/include/config/kernel.release")" \
				"$SP_LOGS/$name-$tree.out" >"$report" ||
				die "profile: no profile in build/logs/$name-$tree.out"
			cat "$report"
			say "profile: $report"
			reports+=("$report")
			continue
		fi

		# make bench's points, as the bench runs them only (all CPUs,
		# nice 0).
		points=()
		nr=$(nr_stack "$stack")
		if [ "$nr_reps" -gt 0 ] && [ -n "$nr" ] && [ "$ncpus" = 2 ] && [ "$nice" = 0 ]; then
			for ((boot = 1; boot <= nr_boots; boot++)); do
				vm_runs "profile-nr-$nr-$boot" bench noregress 1 "$nr_reps" "$nr" ||
					die "profile: a bench run failed (build/logs/profile-nr-$nr-$boot-*.out)"
				points+=(--points "$SP_LOGS/profile-nr-$nr-$boot-base.out"
					"$SP_LOGS/profile-nr-$nr-$boot-patched.out")
			done
		fi
		report=$out/${name#profile-}-compare.md
		# The first configuration in full, the others in brief.
		brief=()
		[ "$config" = "${configs%% *}" ] || brief=(--brief)
		python3 "$scripts/profile-report.py" --top "$top" --stack "$stack" "${brief[@]}" \
			--workload "io_uring/${workload%-irq}" "${points[@]}" \
			--title "Profile: $stack, $workload $how$what, base against ours" \
			--compare "$SP_LOGS/$name-base.out" "$SP_LOGS/$name-patched.out" >"$report" ||
			die "profile: no profile to compare in build/logs/$name-{base,patched}.out"
		cat "$report"
		say "profile: $report"
		reports+=("$report")
	done
done
if [ "${RESULTS:-}" = 1 ] || [ "${README:-}" = 1 ]; then
	splice=--splice section=profile
	[ -z "$compare" ] || splice=--splice-compare section=profile-compare
	python3 "$scripts/profile-report.py" "$splice" "$SP_TOP/doc/results.md" "${reports[@]}" ||
		die "profile: cannot update doc/results.md"
	say "profile: the $section section of doc/results.md is updated"
fi
