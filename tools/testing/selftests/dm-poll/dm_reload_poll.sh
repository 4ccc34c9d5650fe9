#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# queue/io_poll follows the live table across reloads, and polled I/O
# survives suspend, resume and table swaps under load: nothing hangs,
# nothing is lost, errors reach the CQE.
. "$(dirname "$0")/lib.sh"

EOPNOTSUPP=95

dmp_require_root
dmp_require_cmds dmsetup
dmp_require_nullb
dmp_get_nvme_devs 1
a=${DMP_NVME[0]}

dmp_nullb_create nopoll size=64 memory_backed=1 queue_mode=2 poll_queues=0 \
	submit_queues=1 || dmp_skip_all "cannot create a null_blk device without poll queues"
nopoll=$DMP_NODE

# reload TABLE: swap the live table of the test device.
reload()
{
	dmp_dm_suspend "$name" && dmsetup load "$name" --table "$1" &&
		dmsetup resume "$name"
}

ktap_print_header
ktap_set_plan 11
poll_table="0 65536 linear $a 2048"
dmp_dm_create reload "$poll_table" || ktap_exit_fail_msg "cannot create dm-linear"
dev=$DMP_NODE
name=${dev#/dev/mapper/}
dmp_check_io_poll "dm-linear over NVMe" "$dev" 1

reload "0 65536 linear $nopoll 0" || ktap_exit_fail_msg "cannot reload"
dmp_check_io_poll "reloaded over null_blk without poll queues" "$dev" 0
dmp_check_eopnotsupp "reloaded over null_blk without poll queues" "$dev"

reload "$poll_table" || ktap_exit_fail_msg "cannot reload"
dmp_check_io_poll "reloaded back over NVMe" "$dev" 1
dmp_check_polled "reloaded back over NVMe" "$dev" -s 8M -b 512-256k -q 4 -S 122

# A one-stripe dm-striped keeps the data where dm-linear has it: swap
# target types under load.
reload_striped_and_back()
{
	reload "0 65536 striped 1 128 $a 2048" && sleep 0.2 && reload "$poll_table"
}
reload_nopoll_and_back()
{
	reload "0 65536 linear $nopoll 0" && sleep 0.2 && reload "$poll_table"
}

suspend_resume_noflush()
{
	dmp_dm_suspend "$name" --noflush && sleep 0.1 && dmsetup resume "$name"
}

suspend_resume()
{
	dmp_dm_suspend "$name" && sleep 0.1 && dmsetup resume "$name"
}
dmp_under_load "noflush suspend and resume" "$dev" suspend_resume_noflush
dmp_under_load "suspend and resume" "$dev" suspend_resume
dmp_under_load "table reload" "$dev" reload "$poll_table"
dmp_under_load "reload to dm-striped and back" "$dev" reload_striped_and_back
# While the table has no poll queues below, polled I/O fails with
# EOPNOTSUPP, or, if DM held it during the swap, goes to null_blk, a
# device other than the one read back: only the completions are checked
# (writes only), and some must get through.
DMP_LOAD_ARGS="-m write" DMP_LOAD_ALLOW_ERRNO=$EOPNOTSUPP dmp_under_load \
	"reload over null_blk without poll queues and back" "$dev" reload_nopoll_and_back
reload "$poll_table" || ktap_exit_fail_msg "cannot reload"
dmp_check_polled "after the reloads" "$dev" -s 8M -b 4k -q 8 -S 123
ktap_finished
