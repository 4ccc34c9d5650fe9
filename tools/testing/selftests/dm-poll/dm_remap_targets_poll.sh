#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The targets that remap the clone DM gives them keep polled I/O polled
# end to end: switch, unstriped, delay (with and without a delay, where a
# worker sends the clone later), dust, flakey while up, zero and error.
# No interrupt from below, no I/O slower than DMP_MAX_LAT_MS; the same I/O
# by interrupt does raise them (the counter watches the right lines).
# Switch, unstriped, delay and dust take REQ_NOWAIT bios: io_uring issues
# their I/O inline (-W: no io-wq worker).
. "$(dirname "$0")/lib.sh"

EIO=5

dmp_require_root
dmp_require_cmds dmsetup
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

ktap_print_header
ktap_set_plan 11
dmp_check_table polled "switch over 2 NVMe" "0 65536 switch 2 128 0 $a 2048 $b 2048" \
	-W -b 512-256k -q 4 -S 91
switch=$DMP_NODE
dmp_check_table polled "unstriped" "0 65536 unstriped 2 16 1 $a 2048" \
	-W -b 512-64k -q 4 -S 92
dmp_check_table polled "delay 0 ms" "0 65536 delay $a 2048 0" \
	-W -b 512-256k -q 4 -S 93
dmp_check_table polled "delay 20 ms (sent by a worker)" "0 65536 delay $a 2048 20" \
	-W -s 2M -b 4k-64k -q 4 -S 94
dmp_check_table polled "dust" "0 65536 dust $a 2048 512" -W -b 512-256k -q 4 -S 95
dmp_check_table polled "flakey, up, from the submitter" "0 65536 flakey $a 2048 3600 0" \
	-b 512-256k -q 4 -S 96 -W
dmp_check_table verified "zero" "0 65536 zero" -m zeros -b 512-1M -q 4
dmp_check_table polled "linear and zero in one table: the linear half" \
	"0 16384 linear $a 2048
16384 16384 zero" -s 8M -b 512-1M -q 4 -S 97
dmp_check_verified "linear and zero in one table: the zero half" "$DMP_NODE" \
	-m zeros -o 8M -s 8M -b 512-1M -q 4
dmp_check_irq "switch over 2 NVMe: interrupt driven" "$switch" \
	-s 2M -b 4k -q 4 -S 98
if dmp_dm_create err "0 65536 error"; then
	if "$DMP_VERIFY" -m read -e "$EIO" -L "$DMP_MAX_LAT_MS" -s 1M -b 4k -q 4 "$DMP_NODE"; then
		ktap_test_pass "error: polled I/O fails with EIO at once"
	else
		ktap_test_fail "error: polled I/O did not fail with EIO at once"
	fi
else
	ktap_test_fail "error: cannot create"
fi
ktap_finished
