#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Polled bios that DM splits: bios of 512 B to 1 MiB across dm-striped
# chunk boundaries (4 KiB to 256 KiB chunks) and across the boundary of two
# dm-linear targets.  Every piece is polled: no interrupt, no I/O slower
# than DMP_MAX_LAT_MS, data verified.  Linux 6.12 oopses here: the clone
# of the split remainder carried REQ_DM_POLL_LIST (REQ_DRV) into NVMe,
# where it means REQ_NVME_MPATH.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

ktap_print_header
ktap_set_plan 8
seed=70
for chunk in 8 16 128 512; do
	dmp_dm_create "striped$chunk" "0 131072 striped 2 $chunk $a 2048 $b 2048" ||
		ktap_exit_fail_msg "cannot create dm-striped"
	dmp_check_polled "dm-striped chunk $((chunk / 2))k, 512B-1M random sizes" \
		"$DMP_NODE" -s 16M -b 512-1M -q 4 -S $((seed++))
done
dmp_dm_create twolinear "0 16384 linear $a 4096
16384 16384 linear $b 8192" || ktap_exit_fail_msg "cannot create two dm-linear targets"
# Up to 512 KiB, the largest NVMe transfer here: a larger clone that DM
# cuts down may still need a split below (segment limits) and then, as a
# REQ_NOWAIT bio, comes back BLK_STS_AGAIN and is retried by interrupt.
dmp_check_polled "two dm-linear targets, 512B-512k across the boundary" \
	"$DMP_NODE" -o 6M -s 4M -b 512-512k -q 4 -S $((seed++))
dmp_check_polled "two dm-linear targets, 4k qd16 over the whole device" \
	"$DMP_NODE" -b 4k -q 16 -S $((seed++))
dmp_check_irq "two dm-linear targets: interrupt driven" \
	"$DMP_NODE" -o 6M -s 4M -b 512-512k -q 4 -S $((seed++))
# REQ_NOWAIT bios across chunks, by interrupt: dm_split_nowait_poll.sh.
dmp_dm_create striped4k "0 131072 striped 2 8 $a 2048 $b 2048" ||
	ktap_exit_fail_msg "cannot create dm-striped"
dmp_check_irq "dm-striped: interrupt-driven bios inside a chunk, issued inline" \
	"$DMP_NODE" -W -s 4M -b 4k -q 4 -S $((seed++))
ktap_finished
