#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest job "bench": the benchmark matrix on null_blk poll queues, meant to
# run under QEMU's -icount, where a guest second is 1e9 guest instructions
# and IOPS therefore measure instructions per I/O.
#
# Stacks: raw null_blk, dm-linear, dm-striped, dm-linear over dm-striped,
# md linear, raid0, raid1 and raid10 (reads), each polled (fio --hipri=1)
# and interrupt driven; workloads: io_uring 4k random reads at QD 1, 16
# and 128, 64k random reads, 4k random writes, and two jobs; dm-striped
# and md raid0 also over 4 and 8 devices (4k random reads, QD16).
#
# Those devices complete each request at once (irqmode=0): the rows
# measure CPU cost alone.  The latency model follows: every 2-wide stack,
# dm-crypt (reads decrypted in the poller, writes encrypted in the
# submitter: also 4k-randwrite-qd16-lat*us), dm-thin (provisioned
# blocks, reads and writes), dm-raid raid1 reads, dm-cache hits and
# snapshot-origin (reads, and writes to copied chunks), over null_blk
# devices with irqmode=2 and completion_nsec 0 or 10000
# (workloads 4k-randread-qd{1,16}-lat{0,10}us), where an interrupt queue
# completes from a timer once the latency has passed and a poll queue
# completes at the first poll after it, so that the poller spins for it.
# Idle time still counts as guest time under sleep=off: vIOPS there are
# I/Os per guest second, the latency included.
#
# Arguments: [matrix|smoke] [RUNTIME] [REPS]
#   matrix   everything above (default); smoke: one point, once
#   RUNTIME  fio seconds of guest time per point, whole seconds (default 1);
#            no ramp: under -icount the first I/O costs what the others do
#   REPS     runs of each point (default 2)
#
# Output, one line each:
#   POINT|stack|workload|hipri|rep|IOPS|I/Os|usr%|sys%   (or a word for
#        IOPS: EOPNOTSUPP, or "failed: why")
#   ALLOC|stack|hipri|I/Os|bio slab allocations          (per-cpu bio cache)
#   CACHE|stack|bio objects|bytes   held by the stack's bio caches after
#        polled I/O, with the stack still up
#   SLAB|when|Slab kB|bio objects|cached   guest-wide, before the matrix
#        and after the last stacked device is gone; "cached": the objects
#        of the slabs of the raw device's direct I/O bio set, whose per-cpu
#        caches outlive every stack and hold what they hold
set -u
# shellcheck source=/dev/null
. /kselftest/dm-poll/lib.sh
dmp_load_stack || exit 1

mode=${1:-matrix}
runtime=${2:-1}
reps=${3:-2}
ndev=8
[ "$mode" = smoke ] && { reps=1; ndev=2; }

# fio_point STACK DEV WORKLOAD HIPRI REP: one POINT line.  Registered
# buffers (--fixedbufs): pinning user pages for each I/O costs a number of
# instructions that varies from run to run by up to 20% for 64k I/O, and is
# the same whatever the stack below.
fio_point()
{
	local stack=$1 dev=$2 workload=$3 hipri=$4 rep=$5 args sums rw=read

	args=(--rw=randread --bs=4k --iodepth=16)
	case ${workload%-lat*us} in
	4k-randread-qd1) args=(--rw=randread --bs=4k --iodepth=1) ;;
	4k-randread-qd16) ;;
	4k-randread-qd128) args=(--rw=randread --bs=4k --iodepth=128) ;;
	64k-randread-qd16) args=(--rw=randread --bs=64k --iodepth=16) ;;
	# 128 KiB at 128 KiB offsets: two 64 KiB chunks of dm-striped each,
	# every bio split
	128k-randread-qd16) args=(--rw=randread --bs=128k --iodepth=16) ;;
	4k-randwrite-qd16) args=(--rw=randwrite --bs=4k --iodepth=16) rw=write ;;
	4k-randread-qd16-2jobs) args+=(--numjobs=2) ;;
	*) echo "# bench: unknown workload $workload"; return 1 ;;
	esac
	# The latency model runs fio on CPU 1: single-threaded TCG runs the
	# vCPUs in turn, so a task woken on the other vCPU waits for the next
	# timer event of a vCPU that spins polling, a delay no hardware has.
	case $workload in
	*-lat*us) args+=(--cpus_allowed=1) ;;
	esac
	fio --name=bench --filename="$dev" --ioengine=io_uring --direct=1 \
		--hipri="$hipri" --fixedbufs "${args[@]}" \
		--time_based --runtime="$runtime" \
		--norandommap --randrepeat=1 --output-format=terse \
		--terse-version=3 >/tmp/fio.terse 2>/tmp/fio.err
	if grep -q 'err=95' /tmp/fio.terse /tmp/fio.err; then
		echo "POINT|$stack|$workload|$hipri|$rep|EOPNOTSUPP"
		return
	fi
	# One terse line per job, summed (a group's IOPS would divide by the
	# longest job's runtime).  Terse v3: read IOPS 8, runtime (ms) 9;
	# write IOPS 49, runtime 50; CPU usr 88, sys 89; error 5.
	sums=$(awk -F';' -v rw="$rw" '
		$1 == 3 {
			n++; err += $5
			if (rw == "write") { iops += $49; ios += $49 * $50 / 1000 }
			else { iops += $8; ios += $8 * $9 / 1000 }
			usr += $88; sys += $89
		}
		END { if (n && !err) printf "%d|%d|%.1f%%|%.1f%%", iops, ios, usr / n, sys / n }' \
		/tmp/fio.terse)
	if [ -z "$sums" ]; then
		echo "POINT|$stack|$workload|$hipri|$rep|failed: $(head -c 200 /tmp/fio.err | tr '\n|' '  ')"
		return
	fi
	echo "POINT|$stack|$workload|$hipri|$rep|$sums"
}

# bio_net [SLAB...]: bio objects allocated and not yet freed, over the
# SLABs (default every bio slab), and their bytes (CONFIG_SLUB_STATS
# counters, exact where the slabs' "objects" counts are not).
bio_net()
{
	local s v objs=0 bytes=0 slabs=("$@")

	[ $# -gt 0 ] || slabs=(/sys/kernel/slab/bio-*)
	for s in "${slabs[@]}"; do
		# A slab of a bio set just freed may be going away: skip it.
		v=$(cd "$s" 2>/dev/null && cat alloc_fastpath alloc_slowpath \
			free_fastpath free_slowpath slab_size 2>/dev/null | cut -d' ' -f1)
		# shellcheck disable=SC2086 # five numbers
		set -- $v
		[ $# = 5 ] || continue
		objs=$((objs + $1 + $2 - $3 - $4))
		bytes=$((bytes + ($1 + $2 - $3 - $4) * $5))
	done
	echo "$objs $bytes"
}

# slab_line WHEN: guest-wide slab usage and live bio objects, with the
# page cache and dentries dropped and the empty slabs freed.
slab_line()
{
	local net cached shrink

	sync
	# Let the slabs of bio sets just freed go (kmem_cache_destroy()).
	sleep 1
	echo 3 >/proc/sys/vm/drop_caches
	for shrink in /sys/kernel/slab/*/shrink; do
		echo 1 >"$shrink" 2>/dev/null
	done
	for shrink in /sys/kernel/slab/bio-*; do
		net=$(bio_net "$shrink")
		echo "# slab ${shrink##*/}: ${net%% *} live bio objects"
	done
	net=$(bio_net)
	cached=$(bio_net "${cache_slabs[@]}")
	echo "SLAB|$1|$(awk '$1 == "Slab:" { print $2 }' /proc/meminfo)|${net%% *}|${cached%% *}"
}

# slab_allocs: "slab allocations" for each bio slab.
slab_allocs()
{
	local s

	for s in /sys/kernel/slab/bio-*; do
		echo "$s $(cat "$s/alloc_fastpath" "$s/alloc_slowpath" 2>/dev/null |
			awk '{ n += $1 } END { print n + 0 }')"
	done
}

# alloc_cache STACK DEV NET0: bio slab allocations for 4096 4k reads,
# polled and interrupt driven, and what the bio caches hold afterwards
# against NET0, the live bio objects before the stack's first I/O.
alloc_cache()
{
	local stack=$1 dev=$2 net0=$3 hipri before net1

	for hipri in 1 0; do
		before=$(dmp_bio_slab_allocs)
		fio --name=alloc --filename="$dev" --ioengine=io_uring --direct=1 \
			--hipri="$hipri" --fixedbufs --rw=randread --bs=4k --iodepth=16 \
			--number_ios=4096 --norandommap --randrepeat=1 \
			--output-format=terse --terse-version=3 >/tmp/fio.terse 2>/tmp/fio.err
		if grep -q 'err=95' /tmp/fio.terse /tmp/fio.err; then
			echo "ALLOC|$stack|$hipri|EOPNOTSUPP"
		else
			echo "ALLOC|$stack|$hipri|4096|$(($(dmp_bio_slab_allocs) - before))"
		fi
		if [ "$hipri" = 1 ]; then
			net1=$(bio_net)
			echo "CACHE|$stack|$((${net1%% *} - ${net0%% *}))|$((${net1##* } - ${net0##* }))"
		fi
	done
}

# run_stack STACK DEV WORKLOAD...: every workload, polled and not, REPS
# times, then the allocation and cache counts.
run_stack()
{
	local stack=$1 dev=$2 workload hipri rep net0

	shift 2
	echo "# bench: $stack ($dev)" >&2
	net0=$(bio_net)
	for workload in "$@"; do
		for hipri in 1 0; do
			for ((rep = 1; rep <= reps; rep++)); do
				if [ "$hipri" = 1 ] && [ -n "${SKIP_POLLED:-}" ]; then
					echo "POINT|$stack|$workload|1|$rep|$SKIP_POLLED"
					continue
				fi
				fio_point "$stack" "$dev" "$workload" "$hipri" "$rep"
			done
		done
	done
	[ -z "$alloc" ] || alloc_cache "$stack" "$dev" "$net0"
}

# md_build NAME LEVEL WIDTH MDADM-OPTION...: an md array without a
# superblock (null_blk keeps no data) over the first WIDTH devices; set
# DMP_NODE.  stack_down takes it down again.
md_build()
{
	local node=/dev/md$((90 + DMP_NMD++)) level=$2 width=$3
	shift 3

	mdadm --build "$node" --level="$level" --raid-devices="$width" "$@" \
		"${nulls[@]:0:$width}" >/tmp/mdadm.log 2>&1 ||
		{ echo "# mdadm --build $level: $(cat /tmp/mdadm.log)"; return 1; }
	DMP_TEARDOWN+=("md $node")
	DMP_NODE=$node
}

# stack_down: take down the last device set up (dm or md).
stack_down()
{
	local last=$((${#DMP_TEARDOWN[@]} - 1))

	# shellcheck disable=SC2086 # a word list
	dmp_teardown_one ${DMP_TEARDOWN[$last]}
	unset 'DMP_TEARDOWN[$last]'
}

# striped_table WIDTH: a dm-striped table over the first WIDTH devices.
striped_table()
{
	local width=$1 i table

	table="0 $((width * 2097152)) striped $width 128"
	for ((i = 0; i < width; i++)); do
		table="$table ${nulls[$i]} 0"
	done
	echo "$table"
}

# thin_stack LATENCY_US: a 64 MiB thin device, every block provisioned,
# in a pool over the first latency-model device, its metadata on a
# memory-backed null_blk; reads at QD1 and QD16, writes at QD16.
thin_stack()
{
	local pool

	dmp_nullb_create "lat$1-tmeta" size=64 queue_mode=2 submit_queues=1 \
		irqmode=0 memory_backed=1 blocksize=512 ||
		{ echo "# bench: cannot create null_blk lat$1-tmeta"; return 1; }
	dd if=/dev/zero of="$DMP_NODE" bs=1M count=1 oflag=direct status=none
	dmp_dm_create "lat$1-pool" \
		"0 2097152 thin-pool $DMP_NODE ${nulls[0]} 128 0 1 skip_block_zeroing" ||
		return 1
	pool=${DMP_NODE#/dev/mapper/}
	dmsetup message "$pool" 0 "create_thin 0" || return 1
	dmp_dm_create "lat$1-thin" "0 131072 thin /dev/mapper/$pool 0" || return 1
	dd if=/dev/zero of="$DMP_NODE" bs=1M count=64 oflag=direct status=none
	run_stack dm-thin "$DMP_NODE" "4k-randread-qd1-lat$1us" \
		"4k-randread-qd16-lat$1us" "4k-randwrite-qd16-lat$1us"
	stack_down
	stack_down
	stack_down
}

# raid_stack LATENCY_US: dm-raid raid1 (LVM's raid1 LV; no metadata, in
# sync) over both latency-model devices; reads at QD1 and QD16.  6.12
# (the base kernel) times polled reads out below and md retries them
# for ever: its polled points are not run.
raid_stack()
{
	dmp_dm_create "lat$1-raid1" \
		"0 2097152 raid raid1 2 0 nosync 2 - ${nulls[0]} - ${nulls[1]}" || return 1
	SKIP_POLLED=${on_base:+not run: 6.12 retries them for ever} \
		run_stack dm-raid1 "$DMP_NODE" "4k-randread-qd1-lat$1us" "4k-randread-qd16-lat$1us"
	stack_down
}

# cache_stack LATENCY_US: a 64 MiB dm-cache (lvmcache) with every block in
# the cache, the second latency-model device, over the first; metadata on
# a memory-backed null_blk.  Reads, all hits, at QD1 and QD16.
cache_stack()
{
	local table name i

	dmp_nullb_create "lat$1-cmeta" size=64 queue_mode=2 submit_queues=1 \
		irqmode=0 memory_backed=1 blocksize=512 ||
		{ echo "# bench: cannot create null_blk lat$1-cmeta"; return 1; }
	dd if=/dev/zero of="$DMP_NODE" bs=1M count=1 oflag=direct status=none
	table="0 131072 cache $DMP_NODE ${nulls[1]} ${nulls[0]} 128 1 writeback"
	dmp_dm_create "lat$1-cache" "$table smq 0" || return 1
	# Whole-block writes promote at once; the cleaner policy then writes
	# the dirty blocks back and promotes nothing more.
	dd if=/dev/zero of="$DMP_NODE" bs=64k count=1024 oflag=direct status=none
	name=${DMP_NODE#/dev/mapper/}
	dmsetup reload "$name" --table "$table cleaner 0" &&
		dmp_dm_suspend_resume "$name" || return 1
	for ((i = 0; i < 60; i++)); do
		[ "$(dmsetup status "$name" | awk '{ print $14 }')" = 0 ] && break
		sleep 1
	done
	run_stack dm-cache "$DMP_NODE" "4k-randread-qd1-lat$1us" "4k-randread-qd16-lat$1us"
	stack_down
	stack_down
}

# snapshot_stack LATENCY_US: a 64 MiB snapshot-origin (an LVM origin with
# a snapshot) over the first latency-model device, the snapshot's COW on
# the second, every chunk copied; reads at QD1 and QD16, writes at QD16.
snapshot_stack()
{
	dmp_dm_create "lat$1-snap" "0 131072 snapshot ${nulls[0]} ${nulls[1]} N 16" ||
		return 1
	dmp_dm_create "lat$1-origin" "0 131072 snapshot-origin ${nulls[0]}" || return 1
	dd if=/dev/zero of="$DMP_NODE" bs=1M count=64 oflag=direct status=none
	run_stack dm-snapshot-origin "$DMP_NODE" "4k-randread-qd1-lat$1us" \
		"4k-randread-qd16-lat$1us" "4k-randwrite-qd16-lat$1us"
	stack_down
	stack_down
}

# latency_stacks LATENCY_US: raw, dm and md, each 2 wide, over two
# latency-model null_blk devices; 4k random reads at QD1 and QD16.
latency_stacks()
{
	local w=("4k-randread-qd1-lat$1us" "4k-randread-qd16-lat$1us") i

	nulls=()
	for i in 0 1; do
		dmp_nullb_create "lat$1-$i" size=1024 queue_mode=2 poll_queues=1 \
			submit_queues=1 irqmode=2 completion_nsec=$(($1 * 1000)) \
			memory_backed=0 blocksize=512 hw_queue_depth=256 ||
			{ echo "# bench: cannot create null_blk lat$1-$i"; return 1; }
		nulls+=("$DMP_NODE")
	done
	run_stack null_blk "${nulls[0]}" "${w[@]}"
	dmp_dm_create "lat$1-linear" "0 2097152 linear ${nulls[0]} 0" || return 1
	run_stack dm-linear "$DMP_NODE" "${w[@]}"
	stack_down
	dmp_dm_create "lat$1-striped" "$(striped_table 2)" || return 1
	run_stack dm-striped-2 "$DMP_NODE" "${w[@]}"
	if [ "$mode" != smoke ]; then
		dmp_dm_create "lat$1-linear-striped" "0 4194304 linear $DMP_NODE 0" || return 1
		run_stack dm-linear/dm-striped-2 "$DMP_NODE" "${w[@]}"
		stack_down
	fi
	stack_down
	# Polled I/O must not cost more than interrupt-driven I/O here either.
	# 6.12 (the base kernel) leaves crypt's polled bios on poll queues
	# that nobody polls: each waits for the timeout, a run of 1 s takes
	# minutes, and fails.
	dmp_dm_create "lat$1-crypt" "0 2097152 crypt aes-xts-plain64 $crypt_key 0 ${nulls[0]} 0" ||
		return 1
	SKIP_POLLED=${on_base:+not run: 6.12 times them out} run_stack dm-crypt "$DMP_NODE" "${w[@]}" \
		"4k-randwrite-qd16-lat$1us"
	stack_down
	thin_stack "$1" || return 1
	raid_stack "$1" || return 1
	cache_stack "$1" || return 1
	snapshot_stack "$1" || return 1
	if [ "$mode" != smoke ]; then
		md_build md-linear linear 2 || return 1
		run_stack md-linear-2 "$DMP_NODE" "${w[@]}"
		stack_down
		md_build md-raid0 0 2 --chunk=64 || return 1
		run_stack md-raid0-2 "$DMP_NODE" "${w[@]}"
		stack_down
		md_build md-raid1 1 2 --assume-clean || return 1
		run_stack md-raid1-2 "$DMP_NODE" "${w[@]}"
		stack_down
		md_build md-raid10 10 2 --assume-clean --chunk=64 || return 1
		run_stack md-raid10-2 "$DMP_NODE" "${w[@]}"
		stack_down
	fi
	# The devices go too: each holds bios in its queue's split bio set.
	stack_down
	stack_down
}

dmp_require_slub_stats
crypt_key=$(printf '%064d' 0)
# On the base kernel (build-kernel.sh base), whose polled dm-crypt and
# dm-raid1 points cannot complete.
on_base=
case $(uname -r) in
*-spbase) on_base=1 ;;
esac
alloc=1
[ "$mode" = smoke ] && alloc=
nulls=()
for ((i = 0; i < ndev; i++)); do
	dmp_nullb_create "b$i" size=1024 queue_mode=2 poll_queues=1 submit_queues=1 \
		irqmode=0 memory_backed=0 blocksize=512 hw_queue_depth=256 ||
		{ echo "# bench: cannot create null_blk b$i"; exit 1; }
	nulls+=("$DMP_NODE")
done

# Fill the per-cpu caches of the raw device's direct I/O bio set, which
# outlive every stack, as deep as the matrix will (QD128, polled and not)
# on both CPUs, before the starting point of the slab accounting.  The
# slabs that served those I/Os are the ones whose objects those caches hold.
slab_allocs >/tmp/slab.before
for cpu in 0 1; do
	for hipri in 1 0; do
		fio --name=warm --filename="${nulls[0]}" --ioengine=io_uring --direct=1 \
			--hipri="$hipri" --fixedbufs --rw=randread --bs=4k --iodepth=128 \
			--number_ios=8192 --cpus_allowed="$cpu" >/dev/null 2>&1
	done
done
mapfile -t cache_slabs < <(slab_allocs | awk 'NR == FNR { n[$1] = $2; next }
	$2 != n[$1] { print $1 }' /tmp/slab.before -)
[ "${#cache_slabs[@]}" -gt 0 ] ||
	{ echo "# bench: no bio slab served the raw device's direct I/O"; exit 1; }
slab_line start

if [ "$mode" = smoke ]; then
	dmp_dm_create striped "$(striped_table 2)" || exit 1
	run_stack dm-striped-2 "$DMP_NODE" 4k-randread-qd16 128k-randread-qd16
	stack_down
	latency_stacks 10 || exit 1
	slab_line end
	dmp_cleanup
	exit 0
fi

all=(4k-randread-qd1 4k-randread-qd16 4k-randread-qd128 64k-randread-qd16
	4k-randwrite-qd16 4k-randread-qd16-2jobs)
reads=(4k-randread-qd1 4k-randread-qd16 4k-randread-qd128 64k-randread-qd16
	4k-randread-qd16-2jobs)


run_stack null_blk "${nulls[0]}" "${all[@]}"

dmp_dm_create linear "0 2097152 linear ${nulls[0]} 0" || exit 1
run_stack dm-linear "$DMP_NODE" "${all[@]}"
stack_down

for width in 2 4 8; do
	dmp_dm_create "striped$width" "$(striped_table "$width")" || exit 1
	if [ "$width" = 2 ]; then
		run_stack dm-striped-2 "$DMP_NODE" "${all[@]}" 128k-randread-qd16
		dmp_dm_create linear-striped "0 4194304 linear $DMP_NODE 0" || exit 1
		run_stack dm-linear/dm-striped-2 "$DMP_NODE" "${all[@]}"
		stack_down
	else
		run_stack "dm-striped-$width" "$DMP_NODE" 4k-randread-qd16
	fi
	stack_down
done

# The base kernel fails polled I/O on md with EOPNOTSUPP, which the
# points report.
md_build md-linear linear 2 || exit 1
run_stack md-linear-2 "$DMP_NODE" "${all[@]}"
stack_down
for width in 2 4 8; do
	md_build md-raid0 0 "$width" --chunk=64 || exit 1
	if [ "$width" = 2 ]; then
		run_stack md-raid0-2 "$DMP_NODE" "${all[@]}"
	else
		run_stack "md-raid0-$width" "$DMP_NODE" 4k-randread-qd16
	fi
	stack_down
done
# raid1 and raid10 poll reads only: writes go to every mirror by
# interrupt, by design, so they are not in the matrix.
md_build md-raid1 1 2 --assume-clean || exit 1
run_stack md-raid1-2 "$DMP_NODE" "${reads[@]}"
stack_down
md_build md-raid10 10 2 --assume-clean --chunk=64 || exit 1
run_stack md-raid10-2 "$DMP_NODE" "${reads[@]}"
stack_down

alloc=
latency_stacks 0 || exit 1
latency_stacks 10 || exit 1

slab_line end
dmp_cleanup
