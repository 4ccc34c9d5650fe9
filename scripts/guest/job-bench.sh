#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest job "bench": fio io_uring 4k random reads, QD16, polled
# (--hipri=1) and interrupt driven, on null_blk with poll queues, raw and
# under dm-linear, dm-striped and md linear, raid0, raid1 and raid10.  Under QEMU's -icount a guest second is
# a fixed number of guest instructions, so IOPS measure CPU cost per I/O.
# Prints "ROW|stack|hipri|IOPS|usr%|sys%" lines.
# Argument: fio runtime in guest seconds (default 2).
set -u
# shellcheck source=/dev/null
. /kselftest/dm-poll/lib.sh

runtime=${1:-2}

row()
{
	local label=$1 dev=$2 hipri=$3 terse

	fio --name=bench --filename="$dev" --ioengine=io_uring --direct=1 \
		--hipri="$hipri" --rw=randread --bs=4k --iodepth=16 \
		--size=512M --time_based --runtime="$runtime" --ramp_time=0.2 \
		--norandommap --randrepeat=1 --output-format=terse \
		--terse-version=3 >/tmp/fio.terse 2>/tmp/fio.err
	terse=$(grep -m1 '^3;' /tmp/fio.terse)
	if grep -q 'err=95' /tmp/fio.terse /tmp/fio.err; then
		echo "ROW|$label|$hipri|EOPNOTSUPP"
		return
	fi
	if [ -z "$terse" ] || [ "$(echo "$terse" | cut -d';' -f5)" != 0 ]; then
		echo "ROW|$label|$hipri|failed: $(head -c 200 /tmp/fio.err)"
		return
	fi
	# terse v3: field 8 read IOPS, 88/89 usr/sys CPU
	echo "ROW|$label|$hipri|$(echo "$terse" | cut -d';' -f8)|$(echo "$terse" | cut -d';' -f88)|$(echo "$terse" | cut -d';' -f89)"
}

null_args=(size=1024 queue_mode=2 poll_queues=1 submit_queues=1 irqmode=0
	memory_backed=0 blocksize=512)
dmp_nullb_create b0 "${null_args[@]}" || exit 1
n0=$DMP_NODE
dmp_nullb_create b1 "${null_args[@]}" || exit 1
n1=$DMP_NODE
dmp_dm_create blinear "0 2097152 linear $n0 0" || exit 1
linear=$DMP_NODE
dmp_dm_create blinear2 "0 2097152 linear $n0 0
2097152 2097152 linear $n1 0" || exit 1
linear2=$DMP_NODE
dmp_dm_create bstriped "0 2097152 striped 2 128 $n0 0 $n1 0" || exit 1
striped=$DMP_NODE

# md arrays without superblocks (null_blk keeps no data), one at a time.
# md_build LEVEL MDADM-OPTION...: set DMP_NODE.
md_build()
{
	local level=$1 node=/dev/md$((90 + DMP_NMD++))
	shift

	mdadm --build "$node" --level="$level" --raid-devices=2 "$@" "$n0" "$n1" \
		>/tmp/mdadm.log 2>&1 || { echo "# mdadm --build $level: $(cat /tmp/mdadm.log)"; return 1; }
	DMP_TEARDOWN+=("md $node")
	DMP_NODE=$node
}

for hipri in 1 0; do
	row "null_blk" "$n0" "$hipri"
	row "dm-linear on null_blk" "$linear" "$hipri"
	row "dm-linear on 2 null_blk" "$linear2" "$hipri"
	row "dm-striped on 2 null_blk (64k chunks)" "$striped" "$hipri"
done
dmp_cleanup

# md on the same two devices: the base kernel fails polled I/O with
# EOPNOTSUPP, which the row reports.
dmp_nullb_create b0 "${null_args[@]}" || exit 1
n0=$DMP_NODE
dmp_nullb_create b1 "${null_args[@]}" || exit 1
n1=$DMP_NODE
for array in "md-linear on 2 null_blk|linear" "md-raid0 on 2 null_blk (64k chunks)|0 --chunk=64" \
	"md-raid1 on 2 null_blk, reads|1 --assume-clean" \
	"md-raid10 on 2 null_blk (near2), reads|10 --assume-clean --chunk=64"; do
	# shellcheck disable=SC2086 # level and options
	md_build ${array#*|} || continue
	for hipri in 1 0; do
		row "${array%%|*}" "$DMP_NODE" "$hipri"
	done
	mdadm --stop "$DMP_NODE" >/dev/null 2>&1
	unset 'DMP_TEARDOWN[${#DMP_TEARDOWN[@]}-1]'
done
