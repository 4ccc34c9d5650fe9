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
# Arguments: [matrix|smoke|noregress|noregress-smoke] [RUNTIME] [REPS] [STACK...]
#   matrix   everything above (default); smoke: one point, once
#   noregress  the no-regression section (below): interrupt-driven I/O
#            through every stack, or the STACKs named (dm_linear,
#            md_raid0...: its nr_ functions; a name it does not know fails
#            the job before any stack); noregress-smoke: its few points of
#            make check, once
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
#   BOUNDARY|stack|what its 128k rows cross   (noregress)
#   NRSTACK|name   (noregress) the POINT lines up to the next NRSTACK are
#        those of nr_NAME (STACK as named to the job)
#   BUFFERS|vIOPS   the buffers' own cost (noregress: nr_buffers)
#   SLAB|when|Slab kB|bio objects|cached   guest-wide, before the matrix
#        and after the last stacked device is gone; "cached": the objects
#        of the slabs of the raw device's direct I/O bio set, whose per-cpu
#        caches outlive every stack and hold what they hold
set -u
# blk-mq's reaper at the kernel's own bound, not the tests' (lib.sh)
export DMP_REAP_MS=
# shellcheck source=/dev/null
. /kselftest/dm-poll/lib.sh
# shellcheck source=scripts/guest/stacks.sh
. /jobs/stacks.sh
dmp_load_stack || exit 1

mode=${1:-matrix}
runtime=${2:-1}
reps=${3:-2}
ndev=8
[ "$mode" = smoke ] && { reps=1; ndev=2; }
[ "$mode" = noregress-smoke ] && reps=1

# terse_sums read|write FILE: "IOPS|I/Os|usr%|sys%" of fio's terse output
# in FILE, nothing if a job failed.  One terse line per job, summed (a
# group's IOPS would divide by the longest job's runtime).  Terse v3: read
# IOPS 8, runtime (ms) 9; write IOPS 49, runtime 50; CPU usr 88, sys 89;
# error 5.
terse_sums()
{
	awk -F';' -v rw="$1" '
		$1 == 3 {
			n++; err += $5
			if (rw == "write") { iops += $49; ios += $49 * $50 / 1000 }
			else { iops += $8; ios += $8 * $9 / 1000 }
			usr += $88; sys += $89
		}
		END { if (n && !err) printf "%d|%d|%.1f%%|%.1f%%", iops, ios, usr / n, sys / n }' \
		"$2"
}

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
	sums=$(terse_sums "$rw" /tmp/fio.terse)
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

# ---------------------------------------------------------------------
# The no-regression section (modes noregress and noregress-smoke):
# interrupt-driven I/O only, never hipri, run on the base kernel and on
# ours and compared as instructions per I/O, ours to base: those who
# never poll must lose nothing.
#
# Workloads are ENGINE/BS-RW-qdN[-EXTRA]:
#   io_uring        fio io_uring, hipri=0, registered buffers: io_uring
#                   issues inline with REQ_NOWAIT (and from io-wq what
#                   fails with EAGAIN)
#   pvsync2+nowait  preadv2()/pwritev2() with RWF_NOWAIT (fio --nowait=1)
#   libaio          io_submit() of O_DIRECT I/O
#   psync           pread()/pwrite()
#   -2jobs          numjobs=2; -2jobs-dsync: and O_DSYNC (fio --sync=dsync:
#                   every write REQ_FUA); -4jobs: numjobs=4.  Two jobs or
#                   more on the 2 vCPUs are not deterministic under TCG (as
#                   the matrix's 2jobs)
#   -batch          the QD submitted at once, under one plug, and the next
#                   QD once all have completed (fio iodepth_batch_submit and
#                   iodepth_batch_complete_min of QD); without it, fio
#                   submits each I/O alone, and a device that completes in
#                   its submission (irqmode=0) never has two in flight
# The synchronous engines (pvsync2, psync) run at QD1 only: a QD16 of a
# synchronous engine takes 16 jobs, whose 16 threads on 2 vCPUs measure
# the scheduler and TCG's interleaving of the vCPUs (not deterministic
# here), not the stack.  QD16 is io_uring's and libaio's (iodepth=16).
#
# Every bio of a 128k row crosses a boundary where the stack splits it,
# stack by stack below (BOUNDARY lines say which); but md raid1, which
# has no chunk, and snapshot-origin reads, which origin sends down whole.
#
# Output: POINT lines as the matrix's (hipri 0), and
#   BOUNDARY|stack|what each bio of its 128k rows crosses
#   NRSTACK|name   before the lines of each stack function (nr_NAME)
#   # below: ...   comments: bios that reached the null_blk devices, and
#                  (NR_AGAIN) bios that ended with BLK_STS_AGAIN there

# nr_fio STACK DEV WORKLOAD REP REGION: one POINT line; REGION: fio's
# --offset and --size, or nothing for the whole device.  The first run of
# each point also prints the bios that reached the null_blk devices per
# I/O (a comment: 2.0 for a 128k read split once).  A fio that has not
# ended after nr_limit guest seconds is killed (I/O that never completes:
# the base kernel's with -batch over dm_striped_again's devices), its
# point "failed: hung", and nr_hung set: its jobs stay stuck in the
# kernel, holding the device.
nr_limit=$((runtime * 10 + 60))
nr_hung=
nr_fio()
{
	local stack=$1 dev=$2 workload=$3 rep=$4 where engine bs rwname qd extra
	local args rw=read sums below0 below1 ios tok rc=0

	read -r -a where <<<"$5"
	engine=${workload%%/*}
	IFS=- read -r bs rwname qd extra <<<"${workload#*/}"
	args=(--bs="$bs" --rw="$rwname" --iodepth="${qd#qd}")
	case $rwname in
	randread) ;;
	randwrite) rw="write" ;;
	*) echo "# bench: unknown workload $workload"; return 1 ;;
	esac
	case $engine in
	io_uring) args+=(--ioengine=io_uring --hipri=0 --fixedbufs) ;;
	libaio) args+=(--ioengine=libaio) ;;
	pvsync2+nowait) args+=(--ioengine=pvsync2 --nowait=1 --hipri=0) ;;
	psync) args+=(--ioengine=psync) ;;
	*) echo "# bench: unknown engine $engine"; return 1 ;;
	esac
	# The engines without registered buffers pin the user's pages for
	# every I/O, at a cost that depends on where those pages lie (a bio
	# takes physically contiguous pages as one segment): with fio's
	# anonymous buffers, 4% to 20% apart from one run or boot to the
	# next (measured: 128 KiB, libaio QD16 and pvsync2).  Their buffers
	# are the same pages in every run instead: those of a tmpfs file,
	# shared-mapped (nr_buffers).
	[ "$engine" = io_uring ] || args+=(--mem=mmapshared:/tmp/nr-buf)
	for tok in ${extra//-/ }; do
		case $tok in
		2jobs | 4jobs) args+=(--numjobs="${tok%jobs}") ;;
		dsync) args+=(--sync=dsync) ;;
		batch) args+=(--iodepth_batch_submit="${qd#qd}" \
			--iodepth_batch_complete_min="${qd#qd}") ;;
		*) echo "# bench: unknown workload $workload"; return 1 ;;
		esac
	done
	# Every run from the same page cache and slab state.
	sync
	echo 3 >/proc/sys/vm/drop_caches
	below0=$(nr_below)
	timeout -s KILL "$nr_limit" \
		fio --name=noregress --filename="$dev" --direct=1 "${args[@]}" "${where[@]}" \
		--time_based --runtime="$runtime" --norandommap --randrepeat=1 \
		--output-format=terse --terse-version=3 >/tmp/fio.terse 2>/tmp/fio.err || rc=$?
	below1=$(nr_below)
	if [ "$rc" = 137 ]; then
		nr_hung=1
		echo "POINT|$stack|$workload|0|$rep|failed: hung (no end in $nr_limit guest s)"
		return
	fi
	if grep -q 'err=95' /tmp/fio.terse /tmp/fio.err; then
		echo "POINT|$stack|$workload|0|$rep|EOPNOTSUPP"
		return
	fi
	# RWF_NOWAIT I/O that would block fails with EAGAIN (errno 11), as
	# preadv2(2) says it may: a result, the report compares it with base.
	if awk -F';' '$1 == 3 && $5 == 11 { e = 1 } END { exit !e }' /tmp/fio.terse; then
		echo "POINT|$stack|$workload|0|$rep|EAGAIN"
		return
	fi
	sums=$(terse_sums "$rw" /tmp/fio.terse)
	if [ -z "$sums" ]; then
		echo "POINT|$stack|$workload|0|$rep|failed: $(head -c 200 /tmp/fio.err | tr '\n|' '  ')"
		return
	fi
	echo "POINT|$stack|$workload|0|$rep|$sums"
	ios=$(echo "$sums" | cut -d'|' -f2)
	[ "$rep" != 1 ] || [ "${ios:-0}" = 0 ] ||
		echo "# below: $stack $workload: $((below1 - below0)) bios for $ios I/Os," \
			"$(((below1 - below0) * 100 / ios))/100 a I/O"
}

# nr_buffers: where fio's buffers lie, the same in every run and boot.
# Fixed addresses (no ASLR); and for the engines without registered
# buffers (nr_fio), the 4 MiB of /tmp/nr-buf (16 buffers of 128 KiB and
# more), which fio maps shared and keeps (it exists): the same pages in
# every run.  A bio takes physically adjacent pages as one segment, and
# pages allocated anew lie adjacent or not as the allocator's state has
# it, which differs from boot to boot, from kernel to kernel and from
# file to file: a 128 KiB I/O here costs up to 20% less where they do
# (measured; choosing among files by what they cost once left a QD1
# buffer 12% apart between the kernels).  So sp-bufmake writes the file
# with no page physically after the one before it, checked in the page
# tables: one segment a page, on both kernels.  BUFFERS|vIOPS: what
# libaio 128 KiB QD16 reads of the raw device cost on it, which should
# be the same on both kernels.
nr_buffers()
{
	local try v rc

	echo 0 >/proc/sys/kernel/randomize_va_space
	for try in 1 2 3 4 5 6 7 8; do
		sp-bufmake /tmp/nr-buf $((4 << 20)) >/tmp/bufmake.out 2>&1
		rc=$?
		sed 's/^/# buffers: /' /tmp/bufmake.out
		[ "$rc" = 0 ] && break
		[ "$rc" = 2 ] || { echo "# buffers: sp-bufmake failed"; return 1; }
		echo "# buffers: try $try left adjacent pages, again"
	done
	[ "$rc" = 0 ] || { echo "# buffers: no layout without adjacent pages in 8 tries"; return 1; }
	v=$(fio --name=buffers --filename="${nulls[0]}" --direct=1 --ioengine=libaio \
		--iodepth=16 --bs=128k --rw=randread --number_ios=8000 --norandommap \
		--randrepeat=1 --mem=mmapshared:/tmp/nr-buf --output-format=terse \
		--terse-version=3 2>/dev/null | awk -F';' '$1 == 3 { print $8 }')
	[ -n "$v" ] || { echo "# buffers: fio failed on /tmp/nr-buf"; return 1; }
	echo "# buffers: /tmp/nr-buf: $v vIOPS (libaio 128k random reads QD16, raw)"
	echo "BUFFERS|$v"
}

# nr_below: reads and writes completed so far by this job's null_blk
# devices (every one: data, metadata, cache).
nr_below()
{
	awk -v p="$DMP_PREFIX-nr" 'index($3, p) == 1 { n += $4 + $8 } END { print n + 0 }' \
		/proc/diskstats
}

# nr_again STACK DEV WORKLOAD REGION: one run more of WORKLOAD on DEV, not
# measured (no POINT line), counting the bios to the null_blk devices
# NR_AGAIN (nodes) that ended with BLK_STS_AGAIN (REQ_NOWAIT bios that
# found no tag: dmp_again_filter), and the requests io_uring sent to
# io-wq (io_uring_queue_async_work: its retries of what failed with
# EAGAIN, and what it issues there at once).  A run of its own: the hist
# triggers cost instructions for every event, more where more bios end
# with BLK_STS_AGAIN.  One comment line, "# below:" as nr_fio's.
NR_AGAIN=
nr_again()
{
	local stack=$1 dev=$2 workload=$3 region=$4 filter again iowq ios point
	local wq=io_uring/io_uring_queue_async_work wqf="opcode < 255"
	local -a lower

	read -r -a lower <<<"$NR_AGAIN"
	if ! filter=$(dmp_again_filter "${lower[@]}") ||
		! dmp_count_start block/block_bio_complete dev "$filter" ||
		! dmp_count_start "$wq" opcode "$wqf"; then
		echo "# below: $stack $workload: cannot count BLK_STS_AGAIN (trace hist triggers)"
		return 0
	fi
	point=$(nr_fio "$stack" "$dev" "$workload" again "$region")
	again=$(dmp_count_stop block/block_bio_complete dev "$filter")
	iowq=$(dmp_count_stop "$wq" opcode "$wqf")
	case $point in
	*'failed: hung'*) nr_hung=1 ;;
	esac
	ios=$(cut -d'|' -f7 <<<"$point")
	echo "# below: $stack $workload: $again bios ended with BLK_STS_AGAIN, $iowq requests" \
		"went to io-wq, for ${ios:-no} I/Os (a run of its own, traced)"
}

# nr_run STACK DEV REGION WORKLOAD...: each workload REPS times on DEV,
# in REGION (nr_fio), NR_PREP (a function) before each run when set;
# with NR_AGAIN set, then its BLK_STS_AGAIN count (nr_again).
NR_PREP=
nr_run()
{
	local stack=$1 dev=$2 region=$3 workload rep

	shift 3
	echo "# bench: noregress $stack ($dev${region:+ $region})" >&2
	for workload in "$@"; do
		for ((rep = 1; rep <= reps; rep++)); do
			if [ -n "$nr_hung" ]; then
				echo "POINT|$stack|$workload|0|$rep|failed: not run (a run before hung)"
				continue
			fi
			if [ -n "$NR_PREP" ] && ! "$NR_PREP"; then
				echo "POINT|$stack|$workload|0|$rep|failed: $NR_PREP"
				continue
			fi
			nr_fio "$stack" "$dev" "$workload" "$rep" "$region"
		done
		[ -z "$NR_AGAIN" ] || [ -n "$nr_hung" ] ||
			nr_again "$stack" "$dev" "$workload" "$region"
	done
}

# nr_targets N TARGET ARGS...: a table of N TARGETs of 128 KiB (256
# sectors), target i over sectors i * 256 of the device: the table of
# one target over the whole, cut at every 128 KiB.  In ARGS, @ stands for
# i * 256 (linear's device offset, crypt's IV offset and device offset).
nr_targets()
{
	local n=$1 target=$2 i
	shift 2

	for ((i = 0; i < n; i++)); do
		echo "$((i * 256)) 256 $target ${*//@/$((i * 256))}"
	done
}

# nr_meta NAME: a zeroed, memory-backed null_blk of 64 MiB for metadata;
# set DMP_NODE.
nr_meta()
{
	dmp_nullb_create "nr-$1" size=64 queue_mode=2 submit_queues=1 irqmode=0 \
		memory_backed=1 blocksize=512 max_sectors=1024 ||
		{ echo "# bench: cannot create null_blk nr-$1"; return 1; }
	dd if=/dev/zero of="$DMP_NODE" bs=1M count=1 oflag=direct status=none
}

# nr_thin_fresh: the provisioning pool and its thin device made anew in
# place of the last (same names), its metadata zeroed, nothing
# provisioned: every run of a provisioning point starts from the same
# state, and the pool's commit every second at the same time from the
# run's start (with a thin device made anew in the same pool, one run
# differed from the next by up to 15%: measured).
nr_thin_fresh()
{
	local name=$DMP_PREFIX-nr-tprov pool=$DMP_PREFIX-nr-pool

	dmsetup remove --retry "$name" && dmsetup remove --retry "$pool" || return 1
	dd if=/dev/zero of="$nr_tmeta" bs=1M count=1 oflag=direct status=none &&
		dmsetup create "$pool" --noudevsync --table "$nr_pool_table" &&
		dmsetup message "$pool" 0 "create_thin 1" &&
		dmsetup create "$name" --noudevsync \
			--table "0 $nr_tprov_sectors thin /dev/mapper/$pool 1" || return 1
	[ -b "/dev/mapper/$name" ] || dmsetup mknodes "$name"
}

# nr_cache_clean: the cache (NR_CACHE, in writeback) written back whole
# with the cleaner policy, then smq again: every run of a point that
# dirties blocks starts with none dirty (one run differed from the next
# by up to 26% without: measured).
nr_cache_clean()
{
	local i

	dmsetup reload "$NR_CACHE" --table "$nr_cache_table writeback cleaner 0" &&
		dmp_dm_suspend_resume "$NR_CACHE" || return 1
	for ((i = 0; i < 60; i++)); do
		[ "$(dmsetup status "$NR_CACHE" | awk '{ print $14 }')" = 0 ] && break
		sleep 1
	done
	dmsetup reload "$NR_CACHE" --table "$nr_cache_table writeback smq 0" &&
		dmp_dm_suspend_resume "$NR_CACHE"
}

# nr_integrity_flush: dm-integrity (NR_INTEGRITY) suspended and resumed,
# which writes its journal out: every run starts with the journal empty
# (the runs of a point differed by up to 7% without: measured).
nr_integrity_flush()
{
	dmp_dm_suspend_resume "$NR_INTEGRITY"
}

# nr_wc_anew NAME TABLE CACHE: dm-writecache NAME removed and created
# again with TABLE over CACHE, whose superblock is cleared first: formatted
# anew, nothing cached.
nr_wc_anew()
{
	local name=$DMP_PREFIX-$1

	dmsetup remove --retry "$name" || return 1
	dd if=/dev/zero of="$3" bs=1M count=1 oflag=direct status=none &&
		dmsetup create "$name" --noudevsync --table "$2" || return 1
	[ -b "/dev/mapper/$name" ] || dmsetup mknodes "$name"
}

# nr_wc_fresh: dm-writecache formatted anew in place of the last (same
# name), with every other 64 KiB extent of its 64 MiB written, O_DSYNC:
# cached and committed (its "flush" message would write them back and
# free them), the others not.
nr_wc_fresh()
{
	local name=$DMP_PREFIX-nr-wc

	nr_wc_anew nr-wc "$nr_wc_table" "$nr_wc_ssd" || return 1
	fio --name=prime --filename="/dev/mapper/$name" --direct=1 --ioengine=psync \
		--sync=dsync --rw=write:64k --bs=64k --size=64M >/dev/null 2>&1 || return 1
	# writecache <errors> <blocks> <free> <under writeback>...
	echo "# writecache: $(dmsetup status "$name" | cut -d' ' -f4-7)"
}

# nr_cache MODE: dm-cache in MODE (writethrough or writeback) with smq, 64
# MiB of the first device cached whole on the second, clean; metadata
# on a memory-backed null_blk.  Every I/O of the points hits.
nr_cache()
{
	local table name i

	nr_meta "cmeta-$1" || return 1
	table="0 131072 cache $DMP_NODE ${nulls[1]} ${nulls[0]} 128 1"
	nr_cache_table=$table
	dmp_dm_create "nr-cache-$1" "$table writeback smq 0" || return 1
	# Whole-block writes promote at once; the cleaner policy then writes
	# the dirty blocks back, and MODE with smq takes the cached blocks
	# from the metadata, where nothing is left to promote.
	dd if=/dev/zero of="$DMP_NODE" bs=64k count=1024 oflag=direct status=none
	name=${DMP_NODE#/dev/mapper/}
	dmsetup reload "$name" --table "$table writeback cleaner 0" &&
		dmp_dm_suspend_resume "$name" || return 1
	for ((i = 0; i < 60; i++)); do
		[ "$(dmsetup status "$name" | awk '{ print $14 }')" = 0 ] && break
		sleep 1
	done
	dmsetup reload "$name" --table "$table $1 smq 0" &&
		dmp_dm_suspend_resume "$name"
}

# nr_integrity: stacks.sh's dm-integrity, for the bench; set DMP_NODE.
nr_integrity()
{
	integrity_create bench
}

# noregress_smoke: make check's few points: dm-striped-2, 128 KiB
# random reads and writes at 128 KiB offsets, every bio across a 64 KiB
# chunk, each engine family.
noregress_smoke()
{
	dmp_dm_create nr-striped "$(striped_table 2)" || return 1
	echo "BOUNDARY|dm-striped-2|a 64 KiB chunk (I/O at 128 KiB offsets)"
	nr_run dm-striped-2 "$DMP_NODE" "" io_uring/128k-randread-qd16 \
		io_uring/128k-randwrite-qd16 pvsync2+nowait/128k-randread-qd1 \
		pvsync2+nowait/128k-randwrite-qd1 libaio/128k-randread-qd16 \
		libaio/128k-randwrite-qd16 psync/128k-randread-qd1 psync/128k-randwrite-qd1
	stack_down
}

# The workloads: io_uring on every stack, 4 KiB QD1 reads, QD16 reads
# and writes, 128 KiB QD16 reads and writes; the other engines on
# dm-striped, md raid0, crypt and thin, at QD1, and libaio at QD16 too.
nr_small=(io_uring/4k-randread-qd1 io_uring/4k-randread-qd16 io_uring/4k-randwrite-qd16)
nr_big=(io_uring/128k-randread-qd16 io_uring/128k-randwrite-qd16)
nr_esmall=() nr_ebig=()
for w in randread randwrite; do
	for e in pvsync2+nowait/BS-$w-qd1 libaio/BS-$w-qd1 libaio/BS-$w-qd16 psync/BS-$w-qd1; do
		nr_esmall+=("${e/BS/4k}")
		nr_ebig+=("${e/BS/128k}")
	done
done
# The tables of 16 targets of 128 KiB: I/O at 64 KiB + n x 128 KiB (fio
# --offset=64k: its random offsets are the offset plus multiples of the
# block size) straddles a target boundary, 64 KiB on each side; 15
# places in the 2 MiB.
nr_big_region="--offset=64k --size=1920k"

# Each stack below, in the order they run, and what its 128k rows cross
# (its BOUNDARY line says it too).

# dm-linear: 4k rows on one target over the whole device; 128k rows on
# a table of 16 linear targets of 128 KiB: every bio crosses a target
# boundary.
nr_dm_linear()
{
	dmp_dm_create nr-linear "0 2097152 linear ${nulls[0]} 0" || return 1
	nr_run dm-linear "$DMP_NODE" "" "${nr_small[@]}"
	stack_down
	dmp_dm_create nr-linear16 "$(nr_targets 16 linear "${nulls[0]}" @)" || return 1
	echo "BOUNDARY|dm-linear|a target boundary (16 linear targets of 128 KiB, I/O at 64 KiB + n x 128 KiB)"
	nr_run dm-linear "$DMP_NODE" "$nr_big_region" "${nr_big[@]}"
	stack_down
}

# dm-striped, 2 wide, 64 KiB chunks: 128 KiB at 128 KiB offsets crosses a
# chunk boundary, each half to the other device.  dm-linear over it
# passes the bio whole, striped splits it.
nr_dm_striped()
{
	dmp_dm_create nr-striped "$(striped_table 2)" || return 1
	echo "BOUNDARY|dm-striped-2|a 64 KiB chunk (I/O at 128 KiB offsets)"
	nr_run dm-striped-2 "$DMP_NODE" "" "${nr_small[@]}" "${nr_big[@]}" \
		"${nr_esmall[@]}" "${nr_ebig[@]}"
	dmp_dm_create nr-linear-striped "0 4194304 linear $DMP_NODE 0" || return 1
	echo "BOUNDARY|dm-linear/dm-striped-2|a 64 KiB chunk of the dm-striped below"
	nr_run dm-linear/dm-striped-2 "$DMP_NODE" "" "${nr_small[@]}" "${nr_big[@]}"
	stack_down
	stack_down
}

# md raid0, 2 wide, 64 KiB chunks: as dm-striped.
nr_md_raid0()
{
	md_build md-raid0 0 2 --chunk=64 || return 1
	echo "BOUNDARY|md-raid0-2|a 64 KiB chunk (I/O at 128 KiB offsets)"
	nr_run md-raid0-2 "$DMP_NODE" "" "${nr_small[@]}" "${nr_big[@]}" \
		"${nr_esmall[@]}" "${nr_ebig[@]}"
	stack_down
}

# md raid1 has no chunk: nothing to cross, 128 KiB plain (reads from one
# leg, writes to both).
nr_md_raid1()
{
	md_build md-raid1 1 2 --assume-clean || return 1
	echo "BOUNDARY|md-raid1-2|nothing: raid1 has no chunk (128 KiB plain)"
	nr_run md-raid1-2 "$DMP_NODE" "" "${nr_small[@]}" "${nr_big[@]}"
	stack_down
}

# md raid10, near 2 copies over 2 devices, 64 KiB chunks: a chunk.
nr_md_raid10()
{
	md_build md-raid10 10 2 --assume-clean --chunk=64 || return 1
	echo "BOUNDARY|md-raid10-2|a 64 KiB chunk (I/O at 128 KiB offsets)"
	nr_run md-raid10-2 "$DMP_NODE" "" "${nr_small[@]}" "${nr_big[@]}"
	stack_down
}

# md raid5 over three memory-backed null_blk of 256 MiB (mdadm --create
# reads its superblocks back), 64 KiB chunks, in sync, no bitmap: 128 KiB
# at 128 KiB offsets is a full stripe across a chunk.  Reads go to the
# members by the aligned read path, split at the chunk; writes fill a
# stripe.  4 KiB writes read, modify and write a stripe.
nr_md_raid5()
{
	local i members=()

	for i in 0 1 2; do
		dmp_nullb_create "nr-r5-$i" size=256 queue_mode=2 poll_queues=1 \
			submit_queues=1 irqmode=0 memory_backed=1 blocksize=512 \
			hw_queue_depth=256 max_sectors=1024 ||
			{ echo "# bench: cannot create null_blk nr-r5-$i"; return 1; }
		members+=("$DMP_NODE")
	done
	dmp_md_create 5 --assume-clean --bitmap=none --chunk=64 -- "${members[@]}" ||
		return 1
	echo "BOUNDARY|md-raid5-3|a 64 KiB chunk (I/O at 128 KiB offsets: a full stripe)"
	nr_run md-raid5-3 "$DMP_NODE" "" "${nr_small[@]}" "${nr_big[@]}"
	for i in 0 1 2 3; do
		stack_down
	done
}

# dm-crypt (aes-xts-plain64, kcryptd workers as by default): 4k rows on
# one target; 128k rows on 16 crypt targets of 128 KiB, each with the IV
# offset of its place (the sectors and IVs of one target): every bio
# crosses a target boundary.
nr_dm_crypt()
{
	dmp_dm_create nr-crypt "0 2097152 crypt aes-xts-plain64 $crypt_key 0 ${nulls[0]} 0" ||
		return 1
	nr_run dm-crypt "$DMP_NODE" "" "${nr_small[@]}" "${nr_esmall[@]}"
	stack_down
	dmp_dm_create nr-crypt16 "$(nr_targets 16 crypt aes-xts-plain64 "$crypt_key" @ \
		"${nulls[0]}" @)" || return 1
	echo "BOUNDARY|dm-crypt|a target boundary (16 crypt targets of 128 KiB, I/O at 64 KiB + n x 128 KiB)"
	nr_run dm-crypt "$DMP_NODE" "$nr_big_region" "${nr_big[@]}" "${nr_ebig[@]}"
	stack_down
}

# dm-thin: one pool, 64 KiB blocks, zeroing new blocks (LVM's default),
# data on a null_blk of 16 GiB, metadata on a memory-backed one.  Thin
# device 0: 64 MiB, every block provisioned; 128 KiB at 128 KiB offsets
# crosses a block boundary (thin's max_io_len).  Then writes that
# provision, on a thin device of 16 GiB, made anew with its pool for
# every run (nr_thin_fresh): 4 KiB writes provision a block each (zeroing the
# rest); 128 KiB writes at 128 KiB offsets provision two whole blocks,
# crossing the boundary between them.  Two jobs of O_DSYNC writes: every
# write a FUA, which waits for a commit of the pool's metadata, while the
# other job provisions.
nr_dm_thin()
{
	local pool

	nr_meta tmeta || return 1
	nr_tmeta=$DMP_NODE
	dmp_nullb_create nr-tdata size=16384 queue_mode=2 poll_queues=1 submit_queues=1 \
		irqmode=0 memory_backed=0 blocksize=512 hw_queue_depth=256 max_sectors=1024 ||
		{ echo "# bench: cannot create null_blk nr-tdata"; return 1; }
	nr_pool_table="0 $((16384 * 2048)) thin-pool $nr_tmeta $DMP_NODE 128 0"
	dmp_dm_create nr-pool "$nr_pool_table" || return 1
	pool=${DMP_NODE#/dev/mapper/}
	dmsetup message "$pool" 0 "create_thin 0" || return 1
	dmp_dm_create nr-thin "0 131072 thin /dev/mapper/$pool 0" || return 1
	dd if=/dev/zero of="$DMP_NODE" bs=1M count=64 oflag=direct status=none
	echo "BOUNDARY|dm-thin|a 64 KiB block (provisioned; I/O at 128 KiB offsets)"
	nr_run dm-thin "$DMP_NODE" "" "${nr_small[@]}" "${nr_big[@]}" \
		"${nr_esmall[@]}" "${nr_ebig[@]}"
	stack_down
	nr_tprov_sectors=$((16384 * 2048))
	dmsetup message "$pool" 0 "create_thin 1" || return 1
	dmp_dm_create nr-tprov "0 $nr_tprov_sectors thin /dev/mapper/$pool 1" || return 1
	echo "BOUNDARY|dm-thin-provisioning|a 64 KiB block, both provisioned by the write (I/O at 128 KiB offsets)"
	NR_PREP=nr_thin_fresh
	nr_run dm-thin-provisioning "$DMP_NODE" "" io_uring/4k-randwrite-qd16 \
		io_uring/128k-randwrite-qd16 io_uring/4k-randwrite-qd16-2jobs-dsync
	NR_PREP=
	stack_down
	stack_down
	stack_down
	stack_down
}

# dm-cache, 64 KiB blocks, all hits: 128 KiB at 128 KiB offsets crosses
# a block boundary (cache's max_io_len).  Writethrough write hits go to
# the origin and the cache; two jobs of them too.
nr_dm_cache_wt()
{
	nr_cache writethrough || return 1
	echo "BOUNDARY|dm-cache-writethrough|a 64 KiB cache block (all hits; I/O at 128 KiB offsets)"
	nr_run dm-cache-writethrough "$DMP_NODE" "" "${nr_small[@]}" "${nr_big[@]}" \
		io_uring/4k-randwrite-qd16-2jobs
	stack_down
	stack_down
}

# In writeback, write hits dirty their blocks: each run of a point starts
# with the cache clean (nr_cache_clean).
nr_dm_cache_wb()
{
	nr_cache writeback || return 1
	echo "BOUNDARY|dm-cache-writeback|a 64 KiB cache block (all hits; I/O at 128 KiB offsets)"
	NR_CACHE=${DMP_NODE#/dev/mapper/} NR_PREP=nr_cache_clean
	nr_run dm-cache-writeback "$DMP_NODE" "" "${nr_small[@]}" "${nr_big[@]}"
	NR_PREP=
	stack_down
	stack_down
}

# dm-writecache (SSD mode, 4 KiB blocks) over 64 MiB of the first device,
# its cache a memory-backed null_blk of 256 MiB (a quarter of it used at
# most: under the high watermark, nothing is written back), every other
# 64 KiB extent cached (nr_wc_fresh).  128 KiB at 128 KiB offsets crosses
# from a cached extent into one that is not: a read is split where the
# cached blocks end (and each cached block is a bio of its own); a write
# where its halves lie apart in the cache.  Writes change what is
# cached: each of their runs starts anew.  Two jobs contend for
# writecache's lock, which a REQ_NOWAIT bio only tries.
nr_dm_writecache()
{
	dmp_nullb_create nr-wcssd size=256 queue_mode=2 submit_queues=1 irqmode=0 \
		memory_backed=1 blocksize=512 hw_queue_depth=256 max_sectors=1024 ||
		{ echo "# bench: cannot create null_blk nr-wcssd"; return 1; }
	nr_wc_ssd=$DMP_NODE
	nr_wc_table="0 131072 writecache s ${nulls[0]} $nr_wc_ssd 4096 0"
	dd if=/dev/zero of="$nr_wc_ssd" bs=1M count=1 oflag=direct status=none
	dmp_dm_create nr-wc "$nr_wc_table" || return 1
	nr_wc_fresh || return 1
	echo "BOUNDARY|dm-writecache|from a cached 64 KiB extent into one not cached (I/O at 128 KiB offsets)"
	nr_run dm-writecache "$DMP_NODE" "" io_uring/4k-randread-qd1 io_uring/4k-randread-qd16 \
		io_uring/128k-randread-qd16 io_uring/4k-randread-qd16-2jobs
	NR_PREP=nr_wc_fresh
	nr_run dm-writecache "$DMP_NODE" "" io_uring/4k-randwrite-qd16 io_uring/128k-randwrite-qd16 \
		io_uring/4k-randwrite-qd16-2jobs
	NR_PREP=
	stack_down
	stack_down
}

# nr_wcp_fresh: dm-writecache in pmem mode formatted anew in place of the
# last (same name): nothing cached.
nr_wcp_fresh()
{
	nr_wc_anew nr-wcp "$nr_wcp_table" "$DMP_PMEM"
}

# dm-writecache in pmem mode over 64 MiB of the first device, its cache
# the VM's persistent memory (memmap=, 256 MiB: a quarter used at most,
# under the high watermark), each run on a cache formatted anew: reads
# miss and go to the origin; writes are copied into the cache in ->map
# (ours takes a REQ_NOWAIT read inline, and sends a REQ_NOWAIT write back
# with BLK_STS_AGAIN, for io-wq, where base issues all from io-wq).  Two
# jobs contend for writecache's lock.
nr_dm_writecache_pmem()
{
	dmp_find_pmem || { echo "# bench: no persistent memory (memmap=)"; return 1; }
	nr_wcp_table="0 131072 writecache p ${nulls[0]} $DMP_PMEM 4096 0"
	dd if=/dev/zero of="$DMP_PMEM" bs=1M count=1 oflag=direct status=none
	dmp_dm_create nr-wcp "$nr_wcp_table" || return 1
	echo "BOUNDARY|dm-writecache-pmem|nothing: 4 KiB rows only"
	NR_PREP=nr_wcp_fresh
	nr_run dm-writecache-pmem "$DMP_NODE" "" io_uring/4k-randread-qd16 \
		io_uring/4k-randread-qd16-2jobs io_uring/4k-randwrite-qd16 \
		io_uring/4k-randwrite-qd16-2jobs
	NR_PREP=
	stack_down
}

# snapshot-origin with a (transient) snapshot of 64 KiB chunks, every
# chunk copied: 128 KiB writes at 128 KiB offsets cross a chunk
# boundary, where origin splits them; origin sends reads down whole.
nr_dm_snapshot()
{
	dmp_dm_create nr-snap "0 131072 snapshot ${nulls[0]} ${nulls[1]} N 128" || return 1
	dmp_dm_create nr-origin "0 131072 snapshot-origin ${nulls[0]}" || return 1
	dd if=/dev/zero of="$DMP_NODE" bs=1M count=64 oflag=direct status=none
	echo "BOUNDARY|dm-snapshot-origin|writes: a 64 KiB chunk (copied); reads: nothing, origin does not split them"
	nr_run dm-snapshot-origin "$DMP_NODE" "" "${nr_small[@]}" "${nr_big[@]}"
	stack_down
	stack_down
}

# dm-raid raid1 (no metadata devices, in sync), 64 KiB regions: DM splits
# at a region (raid1's max_io_len); 128 KiB at 128 KiB offsets crosses
# one.
nr_dm_raid1()
{
	dmp_dm_create nr-raid1 \
		"0 2097152 raid raid1 4 0 nosync region_size 128 2 - ${nulls[0]} - ${nulls[1]}" ||
		return 1
	echo "BOUNDARY|dm-raid1|a 64 KiB region (I/O at 128 KiB offsets)"
	nr_run dm-raid1 "$DMP_NODE" "" "${nr_small[@]}" "${nr_big[@]}"
	stack_down
}

# dm-integrity, journal mode, 64 KiB interleave areas (DM splits at one:
# integrity's max_io_len), over 64 MiB written before: 128 KiB at 128 KiB
# offsets crosses an area boundary.  Each run starts with the journal
# written out (nr_integrity_flush).  libaio's 4 KiB reads are issued by
# fio itself on both kernels, as ours issues io_uring's: the io_uring row
# against it tells the placement of base's io-wq worker from a path
# that costs more (doc/results.md, "The dm-integrity exception").
nr_dm_integrity()
{
	nr_integrity || return 1
	echo "BOUNDARY|dm-integrity|a 64 KiB interleave area (journal mode; I/O at 128 KiB offsets)"
	NR_INTEGRITY=${DMP_NODE#/dev/mapper/} NR_PREP=nr_integrity_flush
	nr_run dm-integrity "$DMP_NODE" "--size=64M" "${nr_small[@]}" "${nr_big[@]}" \
		libaio/4k-randread-qd16
	NR_PREP=
	stack_down
	stack_down
}

# md raid1 and raid10, the arrays of nr_md_raid1 and nr_md_raid10: 4 KiB
# random reads at QD16 from four jobs on the 2 vCPUs, completed by
# interrupt on both at once: each completion passes the polled-read
# count that the series adds to raid1's and raid10's read path (a
# read of the r1bio/r10bio's state here; the count, in a cache line of
# its own, is written for polled reads only).  No 128k rows: no
# BOUNDARY line (md-raid1-2's and md-raid10-2's stay nr_md_raid1's and
# nr_md_raid10's).
nr_md_raid1_jobs()
{
	md_build md-raid1 1 2 --assume-clean || return 1
	nr_run md-raid1-2 "$DMP_NODE" "" io_uring/4k-randread-qd16-4jobs
	stack_down
	md_build md-raid10 10 2 --assume-clean --chunk=64 || return 1
	nr_run md-raid10-2 "$DMP_NODE" "" io_uring/4k-randread-qd16-4jobs
	stack_down
}

# dm-striped, 2 wide, 64 KiB chunks as nr_dm_striped's, but over two
# null_blk devices of 2 tags (hw_queue_depth=2, one submit queue): 128
# KiB at 128 KiB offsets crosses a chunk, each half to the other device.
# Reads and writes at QD32, one job and two (on the 2 vCPUs), first as
# every other row, each I/O submitted alone: no half finds the tags
# taken, null_blk completes each request in its submission (measured: no
# BLK_STS_AGAIN).  Then 32 submitted at a time (-batch): io_uring plugs
# the batch, whose requests hold their tags until the plug is flushed,
# and all but 2 halves a device end with BLK_STS_AGAIN below (io_uring's
# REQ_NOWAIT).  Ours retries the half from DM's worker.  The base kernel
# ends the whole bio with BLK_STS_AGAIN, which io_uring issues again from
# io-wq when it comes back in the submission; when it comes back at the
# plug's flush (its other half queued in the plug), io_uring 6.12 marks it
# for a reissue that nothing does, and the I/O never completes (measured:
# fio waits for it for ever; nr_fio kills it, the points after it are not
# run, and the devices stay held).  Hence last in the section.  Each
# workload's BLK_STS_AGAIN count after its runs (NR_AGAIN).
nr_dm_striped_again()
{
	local i again=()

	for i in 0 1; do
		dmp_nullb_create "nr-again$i" size=1024 queue_mode=2 poll_queues=1 \
			submit_queues=1 irqmode=0 memory_backed=0 blocksize=512 \
			hw_queue_depth=2 max_sectors=1024 ||
			{ echo "# bench: cannot create null_blk nr-again$i"; return 1; }
		again+=("$DMP_NODE")
	done
	dmp_dm_create nr-striped-again \
		"0 4194304 striped 2 128 ${again[0]} 0 ${again[1]} 0" || return 1
	echo "BOUNDARY|dm-striped-2-again|a 64 KiB chunk (I/O at 128 KiB offsets)" \
		"over null_blk of 2 tags; -batch: 32 I/Os submitted at once, halves" \
		"end with BLK_STS_AGAIN below and are retried"
	NR_AGAIN="${again[*]}"
	nr_run dm-striped-2-again "$DMP_NODE" "" io_uring/128k-randread-qd32 \
		io_uring/128k-randwrite-qd32 io_uring/128k-randread-qd32-2jobs \
		io_uring/128k-randwrite-qd32-2jobs io_uring/128k-randread-qd32-batch \
		io_uring/128k-randwrite-qd32-batch io_uring/128k-randread-qd32-2jobs-batch \
		io_uring/128k-randwrite-qd32-2jobs-batch
	NR_AGAIN=
	stack_down
	stack_down
	stack_down
}

# noregress [STACK...]: the section, every stack or those named
# (dm_linear, md_raid0...: the functions above without nr_), each after
# its NRSTACK line.  A name not in the list fails before any stack runs.
nr_stacks=(dm_linear dm_striped md_raid0 md_raid1 md_raid10 md_raid5 dm_crypt dm_thin dm_cache_wt
	dm_cache_wb dm_writecache dm_writecache_pmem dm_snapshot dm_raid1 dm_integrity md_raid1_jobs
	dm_striped_again)
noregress()
{
	local s rc=0 depth

	for s in "$@"; do
		printf '%s\n' "${nr_stacks[@]}" | grep -qx -- "$s" ||
			{ echo "# bench: noregress: no stack $s (${nr_stacks[*]})"; return 1; }
	done
	for s in "${nr_stacks[@]}"; do
		if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$s"; then
			continue
		fi
		echo "NRSTACK|$s"
		nr_hung=
		depth=${#DMP_TEARDOWN[@]}
		"nr_$s" && continue
		echo "# bench: noregress: $s failed"
		rc=1
		# What it left set up goes, so that the next finds the devices free.
		while [ "${#DMP_TEARDOWN[@]}" -gt "$depth" ]; do
			stack_down
		done
	done
	return "$rc"
}

crypt_key=$(printf '%064d' 0)
case $mode in
noregress | noregress-smoke)
	# Two devices as the matrix's, null_blk without latency, but for
	# max_sectors: 512 KiB, where null_blk's default (255 sectors, the
	# block layer's safe default) would split every 128 KiB bio in two,
	# through any stack; here only the stack's boundary splits one.
	nulls=()
	for i in 0 1; do
		dmp_nullb_create "nr$i" size=1024 queue_mode=2 poll_queues=1 submit_queues=1 \
			irqmode=0 memory_backed=0 blocksize=512 hw_queue_depth=256 \
			max_sectors=1024 ||
			{ echo "# bench: cannot create null_blk nr$i"; exit 1; }
		nulls+=("$DMP_NODE")
	done
	nr_buffers || exit 1
	rc=0
	if [ "$mode" = noregress ]; then
		noregress "${@:4}" || rc=1
	else
		noregress_smoke || rc=1
	fi
	dmp_cleanup
	exit "$rc"
	;;
esac
dmp_require_slub_stats
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
