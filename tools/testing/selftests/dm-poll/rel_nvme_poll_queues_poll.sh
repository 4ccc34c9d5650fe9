#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# An NVMe controller under md loses its poll queues while polled I/O runs:
# nvme.poll_queues is set to 0 and the controller reset.  The namespace
# then refuses polled bios with BLK_STS_NOTSUPP, while md, whose limits
# were stacked before, still takes polled I/O.  md sends a lower bio that
# comes back so again, unpolled, from a worker: every I/O must complete
# with its data, and on raid1 with FailFast members no member may be
# kicked out (a NOTSUPP read went to handle_read_error(), which fails a
# FailFast member, and on other arrays reached the submitter as EIO).
# Only a reset may kick one out: it aborts what the controller still has
# in flight ("Host Aborted Command", status 0x371), which fails a FailFast
# member's I/O at once, as md means FailFast to.  The poll queues come
# back after each cycle.
. "$(dirname "$0")/lib.sh"

# I/O waits for the reset, half a minute on a debug kernel under TCG.
DMP_LOAD_MAX_LAT_MS=90000
DMP_LOAD_PASS_S=590

dmp_require_root
dmp_require_cmds mdadm
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}
param=/sys/module/nvme/parameters/poll_queues
[ -w "$param" ] || dmp_skip_all "no writable $param"
saved=$(cat "$param")
[ "$saved" -gt 0 ] || dmp_skip_all "nvme.poll_queues is $saved: nothing to lose"
ctrl=$(dmp_sysfs "$a")/device

# set_poll_queues N: nvme.poll_queues=N, the first controller reset to it.
set_poll_queues()
{
	if ! { echo "$1" >"$param" && echo 1 >"$ctrl/reset_controller"; }; then
		echo "# cannot reset $ctrl with poll_queues=$1"
		return 1
	fi
	sleep 1
}

# lose_poll_queues: one cycle, the poll queues gone for 3 s.
lose_poll_queues()
{
	set_poll_queues 0 && sleep 2 && set_poll_queues "$saved"
}

restore()
{
	[ "$(cat "$param")" = "$saved" ] || set_poll_queues "$saved"
}
dmp_on_exit restore

ktap_print_header
ktap_set_plan 3
dmp_md_create 1 --assume-clean -- --failfast "$a" --failfast "$b" ||
	ktap_exit_fail_msg "cannot create md raid1 with FailFast members"
md=$DMP_NODE
dmp_rings_under_load "md raid1 (failfast): a member loses its poll queues" \
	"$md" 4 2 lose_poll_queues
degraded=$(cat "$(dmp_sysfs "$md")/md/degraded")
if [ "$degraded" = 0 ]; then
	ktap_test_pass "md raid1 (failfast): no member kicked out but by a reset"
elif dmp_kernel_log | grep -q 'I/O Error (sct 0x3 / sc 0x71)'; then
	ktap_test_pass "md raid1 (failfast): no member kicked out but by a reset"
	echo "# $degraded kicked out after the reset aborted their I/O in flight"
else
	ktap_test_fail "md raid1 (failfast): no member kicked out but by a reset"
	echo "# $degraded members kicked out, no I/O aborted by a reset"
fi
dmp_cleanup
dmp_md_create 0 --chunk=16 -- "$a" "$b" || ktap_exit_fail_msg "cannot create md raid0"
dmp_rings_under_load "md raid0: a member loses its poll queues" \
	"$DMP_NODE" 4 2 lose_poll_queues
ktap_finished
