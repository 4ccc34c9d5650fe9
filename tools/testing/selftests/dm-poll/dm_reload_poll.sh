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
	dmsetup suspend "$name" && dmsetup load "$name" --table "$1" &&
		dmsetup resume "$name"
}

# under_load DESC CMD...: run CMD repeatedly while polled I/O runs.
under_load()
{
	local desc=$1 pid rc=0 i
	shift

	"$DMP_VERIFY" -L 5000 -s 32M -b 4k-64k -q 8 -S 121 "$dev" >/tmp/dmp-load.$$ 2>&1 &
	pid=$!
	for i in 1 2 3 4 5; do
		sleep 0.3
		"$@" || { echo "# $desc: '$*' failed"; rc=1; }
	done
	wait "$pid" || { cat /tmp/dmp-load.$$; rc=1; }
	rm -f /tmp/dmp-load.$$
	if [ "$rc" = 0 ]; then
		ktap_test_pass "$desc under polled load: all I/O done and verified"
	else
		ktap_test_fail "$desc under polled load"
	fi
}

ktap_print_header
ktap_set_plan 10
poll_table="0 65536 linear $a 2048"
dmp_dm_create reload "$poll_table" || ktap_exit_fail_msg "cannot create dm-linear"
dev=$DMP_NODE
name=${dev#/dev/mapper/}
dmp_check_io_poll "dm-linear over NVMe" "$dev" 1

reload "0 65536 linear $nopoll 0" || ktap_exit_fail_msg "cannot reload"
dmp_check_io_poll "reloaded over null_blk without poll queues" "$dev" 0
if "$DMP_VERIFY" -s 1M -b 4k -q 4 -e "$EOPNOTSUPP" -L 1000 "$dev"; then
	ktap_test_pass "reloaded over null_blk without poll queues:" \
		"polled I/O fails with EOPNOTSUPP"
else
	ktap_test_fail "reloaded over null_blk without poll queues: polled I/O did not fail cleanly"
fi

reload "$poll_table" || ktap_exit_fail_msg "cannot reload"
dmp_check_io_poll "reloaded back over NVMe" "$dev" 1
dmp_check_polled "reloaded back over NVMe" "$dev" -s 8M -b 512-256k -q 4 -S 122

# A one-stripe dm-striped keeps the data where dm-linear has it: swap
# target types under load.
reload_striped_and_back()
{
	reload "0 65536 striped 1 128 $a 2048" && sleep 0.2 && reload "$poll_table"
}
suspend_resume_noflush()
{
	dmsetup suspend --noflush "$name" && sleep 0.1 && dmsetup resume "$name"
}

suspend_resume()
{
	dmsetup suspend "$name" && sleep 0.1 && dmsetup resume "$name"
}
under_load "noflush suspend and resume" suspend_resume_noflush
under_load "suspend and resume" suspend_resume
under_load "table reload" reload "$poll_table"
under_load "reload to dm-striped and back" reload_striped_and_back
reload "$poll_table" || ktap_exit_fail_msg "cannot reload"
dmp_check_polled "after the reloads" "$dev" -s 8M -b 4k -q 8 -S 123
ktap_finished
