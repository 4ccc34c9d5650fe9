#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest job "demo": fio 4k random reads, polled (--hipri=1) and interrupt
# driven (--hipri=0), on raw NVMe and through /dev/mapper (linear,
# striped, crypt, thin, cache, raid) and /dev/md stacks.  Prints one "ROW|..." line per run for the host's table:
#   ROW|device|stack|hipri|IOPS|interrupts|io_poll|result
# Argument: fio runtime in seconds (default 3).
set -u
# The selftests' helpers: device set-up with teardown, interrupt counts.
# blk-mq's reaper at the kernel's own bound, not the tests' (lib.sh)
export DMP_REAP_MS=
# shellcheck source=/dev/null
. /kselftest/dm-poll/lib.sh
dmp_load_stack || exit 1

runtime=${1:-3}
read -r -a nvme <<<"$DM_POLL_NVME_DEVS"
[ "${#nvme[@]}" -ge 2 ] || { echo "# demo: needs two NVMe namespaces"; exit 1; }

# fio_row LABEL DEV HIPRI
fio_row()
{
	local label=$1 dev=$2 hipri=$3 terse irqs iops err result

	# shellcheck disable=SC2034 # read by dmp_run_counted
	DMP_IRQ_RE=$(dmp_irq_regex "$dev")
	dmp_run_counted irqs fio_terse "$dev" "$hipri" || true
	terse=$(grep -m1 '^3;' /tmp/fio.terse)
	err=$(echo "$terse" | cut -d';' -f5)
	iops=$(echo "$terse" | cut -d';' -f8)
	# A failed job reports its errno as "err=N" on its error line.
	if grep -qo 'err=[0-9]*' /tmp/fio.terse /tmp/fio.err; then
		err=$(grep -ho 'err=[0-9]*' /tmp/fio.terse /tmp/fio.err | head -1)
		err=${err#err=}
	fi
	case ${err:-x} in
	0) result=ok ;;
	95) result=EOPNOTSUPP; iops=- ;;
	x) result="fio failed: $(grep -m1 -iE 'err|fail' /tmp/fio.err)"; iops=- ;;
	*) result="errno $err"; iops=- ;;
	esac
	echo "ROW|$dev|$label|$hipri|$iops|$irqs|$(dmp_io_poll "$dev")|$result"
}

fio_terse()
{
	fio --name=demo --filename="$1" --ioengine=io_uring --direct=1 \
		--hipri="$2" --rw=randread --bs=4k --iodepth=16 --size=256M \
		--time_based --runtime="$runtime" --norandommap \
		--output-format=terse --terse-version=3 >/tmp/fio.terse 2>/tmp/fio.err
}

for hipri in 1 0; do
	fio_row "raw NVMe" "${nvme[0]}" "$hipri"
done

dmp_dm_create striped "0 1048576 striped 2 128 ${nvme[0]} 0 ${nvme[1]} 0" || exit 1
for hipri in 1 0; do
	fio_row "dm-striped (2 NVMe, 64k chunk)" "$DMP_NODE" "$hipri"
done
dmp_dm_create linear "0 1048576 linear ${nvme[0]} 0" || exit 1
for hipri in 1 0; do
	fio_row "dm-linear (NVMe)" "$DMP_NODE" "$hipri"
done
dmp_cleanup

# metadata NAME: a zeroed memory-backed null_blk for a target's metadata,
# whose commits then raise no NVMe interrupt.
metadata()
{
	dmp_nullb_create "$1" size=64 memory_backed=1 queue_mode=2 || return 1
	dd if=/dev/zero of="$DMP_NODE" bs=1M count=1 oflag=direct status=none
}

# LUKS-like: dm-crypt, aes-xts-plain64, over the first namespace.
dmp_dm_create crypt "0 1048576 crypt aes-xts-plain64 $(printf '%064d' 0) 0 ${nvme[0]} 0" ||
	exit 1
for hipri in 1 0; do
	fio_row "dm-crypt (aes-xts, NVMe)" "$DMP_NODE" "$hipri"
done
dmp_cleanup

# A thin volume whose blocks are all provisioned, metadata on null_blk.
metadata tmeta || exit 1
dmp_dm_create pool "0 1048576 thin-pool $DMP_NODE ${nvme[0]} 128 0 1 skip_block_zeroing" ||
	exit 1
dmsetup message "${DMP_NODE#/dev/mapper/}" 0 "create_thin 0" || exit 1
dmp_dm_create thin "0 524288 thin $DMP_NODE 0" || exit 1
dd if=/dev/zero of="$DMP_NODE" bs=1M count=256 oflag=direct status=none
for hipri in 1 0; do
	fio_row "dm-thin (provisioned, NVMe)" "$DMP_NODE" "$hipri"
done
dmp_cleanup

# lvmcache-like: dm-cache, metadata on null_blk.  Whole-block writes in
# writeback mode promote at once; then the cleaner policy, which moves no
# block into the cache, writes the dirty ones back, and the rows read what
# the cache holds (misses, polled too, go to the origin).
metadata cmeta || exit 1
table="0 524288 cache $DMP_NODE ${nvme[0]} ${nvme[1]} 128 1 writeback"
dmp_dm_create cache "$table smq 0" || exit 1
dd if=/dev/zero of="$DMP_NODE" bs=64k count=4096 oflag=direct status=none
name=${DMP_NODE#/dev/mapper/}
dmsetup reload "$name" --table "$table cleaner 0" && dmp_dm_suspend_resume "$name" || exit 1
for ((i = 0; i < 60; i++)); do
	[ "$(dmsetup status "$name" | awk '{ print $14 }')" = 0 ] && break
	sleep 1
done
echo "# demo: $(dmsetup status "$name" | awk '{ print $7 }') cache blocks in use"
for hipri in 1 0; do
	fio_row "dm-cache (hits, 2 NVMe)" "$DMP_NODE" "$hipri"
done
dmp_cleanup

# LVM's raid1 and raid10 LVs (raid10 near 2 over 2 legs here: the layout
# of raid1): dm-raid with a metadata device per leg, on null_blk, and the
# legs in sync.
metadata rmeta || exit 1
rmeta=$DMP_NODE
dmp_dm_create m0 "0 2048 linear $rmeta 0" && m0=$DMP_NODE &&
	dmp_dm_create m1 "0 2048 linear $rmeta 2048" && m1=$DMP_NODE || exit 1
for params in "raid1 2 0 nosync" "raid10 4 64 raid10_copies 2 nosync"; do
	level=${params%% *}
	dd if=/dev/zero of="$m0" bs=1M count=1 oflag=direct status=none &&
		dd if=/dev/zero of="$m1" bs=1M count=1 oflag=direct status=none &&
		dmp_dm_create "$level" "0 524288 raid $params 2 $m0 ${nvme[0]} $m1 ${nvme[1]}" ||
		exit 1
	for hipri in 1 0; do
		fio_row "dm-raid $level (2 NVMe), reads" "$DMP_NODE" "$hipri"
	done
	dmp_dm_remove "$level" || exit 1
done
dmp_cleanup

# md_rows LABEL LEVEL MDADM-OPTION...: an md array on both namespaces.
md_rows()
{
	local label=$1 level=$2 hipri
	shift 2

	if dmp_md_create "$level" "$@" -- "${nvme[0]}" "${nvme[1]}" >/tmp/mdadm.log 2>&1; then
		for hipri in 1 0; do
			fio_row "$label" "$DMP_NODE" "$hipri"
		done
	else
		echo "ROW|-|$label|-|-|-|-|mdadm --create failed: $(grep -m1 -v '^# mdadm --create' /tmp/mdadm.log)"
	fi
	dmp_cleanup
}

md_rows "md raid0 (2 NVMe, 64k chunk)" 0 --chunk=64
md_rows "md linear (2 NVMe)" linear
md_rows "md raid1 (2 NVMe), reads" 1 --assume-clean --size=262144
md_rows "md raid10 (2 NVMe, near2), reads" 10 --assume-clean --size=262144
