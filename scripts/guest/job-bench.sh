#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest job "bench": fio io_uring 4k random reads, QD16, polled
# (--hipri=1) and interrupt driven, on null_blk with poll queues, raw and
# under dm-linear and dm-striped.  Under QEMU's -icount a guest second is
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
dmp_dm_create bstriped "0 2097152 striped 2 128 $n0 0 $n1 0" || exit 1
striped=$DMP_NODE

for hipri in 1 0; do
	row "null_blk" "$n0" "$hipri"
	row "dm-linear on null_blk" "$linear" "$hipri"
	row "dm-striped on 2 null_blk (64k chunks)" "$striped" "$hipri"
done
