#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest job "profile": where a stacked I/O spends its instructions.  Meant
# to run under QEMU's -icount shift=0,sleep=off, where a nanosecond of
# guest time is one guest instruction: perf's cpu-clock, sampled every
# PERIOD ns on the CPU fio runs on, then counts PERIOD instructions per
# sample.  The same fio point runs on raw null_blk and on the stack.
#
# Arguments: STACK [WORKLOAD] [RUNTIME]
#   STACK     null_blk, dm-linear, dm-striped-2, dm-linear/dm-striped-2,
#             md-linear-2, md-raid0-2, md-raid1-2 or md-raid10-2
#   WORKLOAD  4k-randread-qd1 or 4k-randread-qd16 (default), polled
#   RUNTIME   guest seconds of fio per run (default 2)
#
# Output, one line each:
#   VIOPS|device|IOPS                    per device, a run without perf
#   PROFILE|device|I/Os|samples|period   per run under perf
#   FUNC|device|function|samples         kernel functions of the run
set -u
# shellcheck source=/dev/null
. /kselftest/dm-poll/lib.sh
dmp_load_stack || exit 1

stack=${1:?stack}
workload=${2:-4k-randread-qd16}
runtime=${3:-2}
period=20000
cpu=1

case $workload in
4k-randread-qd1) qd=1 ;;
4k-randread-qd16) qd=16 ;;
*) echo "# profile: unknown workload $workload"; exit 1 ;;
esac
command -v perf >/dev/null || { echo "# profile: no perf in the guest"; exit 1; }

# fio_run DEV [COMMAND...]: one polled fio run on DEV, under COMMAND.
fio_run()
{
	local dev=$1

	shift
	"$@" fio --name=profile --filename="$dev" --ioengine=io_uring --direct=1 \
		--hipri=1 --fixedbufs --rw=randread --bs=4k --iodepth="$qd" \
		--cpus_allowed="$cpu" --time_based --runtime="$runtime" \
		--norandommap --randrepeat=1 --output-format=terse --terse-version=3 \
		>/tmp/fio.terse 2>/tmp/fio.err
}

# profile_run NAME DEV: a polled fio run on DEV without perf, for its vIOPS
# (sampling costs about 5%), then one under perf.
profile_run()
{
	local name=$1 dev=$2 ios

	fio_run "$dev" || { echo "# profile: $name: $(head -c 300 /tmp/fio.err)"; return 1; }
	echo "VIOPS|$name|$(awk -F';' '$1 == 3 { print $8 }' /tmp/fio.terse)"
	fio_run "$dev" perf record -q -o /tmp/perf.data -e cpu-clock -c "$period" -C "$cpu" -- ||
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

nulls=()
for i in 0 1; do
	dmp_nullb_create "p$i" size=1024 queue_mode=2 poll_queues=1 submit_queues=1 \
		irqmode=0 memory_backed=0 blocksize=512 hw_queue_depth=256 ||
		{ echo "# profile: cannot create null_blk p$i"; exit 1; }
	nulls+=("$DMP_NODE")
done
striped="0 4194304 striped 2 128 ${nulls[0]} 0 ${nulls[1]} 0"

profile_run null_blk "${nulls[0]}" || exit 1
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
*) echo "# profile: unknown stack $stack"; exit 1 ;;
esac || { echo "# profile: cannot build $stack"; exit 1; }
profile_run "$stack" "$DMP_NODE" || exit 1
dmp_cleanup
