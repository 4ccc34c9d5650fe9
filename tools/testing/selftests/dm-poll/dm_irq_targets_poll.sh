#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Targets that build bios of their own, or issue them from a worker, must
# not leave REQ_POLLED bios on poll queues that nobody polls: polled I/O to
# them completes by interrupt, promptly, with the data intact.  Linux 6.12
# stalls every such I/O until the NVMe timeout (30 s).
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup dd
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

ktap_print_header
ktap_set_plan 6
# raid4/5/6 build member bios of their own (raid0/1/10: dm_raid_poll.sh)
dmp_dm_zeroed r5a "$a" 500000 32768 && r5a=$DMP_NODE
dmp_dm_zeroed r5b "$b" 500000 32768 && r5b=$DMP_NODE
dmp_dm_zeroed r5c "$a" 540000 32768 && r5c=$DMP_NODE
dmp_check_table irq "raid (dm-raid raid5)" \
	"0 65536 raid raid5_ls 2 64 nosync 3 - $r5a - $r5b - $r5c" \
	-s 8M -b 512-256k -q 4 -S 102
dmp_check_table irq "mirror" "0 65536 mirror core 2 1024 nosync 2 $a 2048 $b 2048" \
	-s 8M -b 512-256k -q 4 -S 103
dmp_check_table irq "ebs (4k emulated blocks)" "0 65536 ebs $a 2048 8" \
	-s 8M -b 4k-128k -q 4 -S 106
dmp_dm_zeroed lwdata "$a" 400000 65536 && lwdata=$DMP_NODE
dmp_dm_zeroed lwlog "$b" 400000 65536 && lwlog=$DMP_NODE
dmp_check_table irq "log-writes" "0 65536 log-writes $lwdata $lwlog" \
	-s 4M -b 512-128k -q 4 -S 107
# flakey's corrupt mode copies written data into a bio of its own: the
# data is corrupt by design, so only the completions are checked.
dmp_check_table irq "flakey, corrupting writes" \
	"0 65536 flakey $a 2048 0 3600 5 corrupt_bio_byte 32 w 1 0" \
	-m write -s 4M -b 4k-64k -q 4 -S 108
# ... and, written with REQ_NOWAIT, fails them first, to be retried from
# io-wq: the copy may wait for memory.
dmp_check_iowq "flakey, corrupting writes by interrupt" "$DMP_NODE" \
	-I -m write -s 4M -b 4k-64k -q 4 -S 109
ktap_finished
