#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dmp_fault refuses what it cannot do, with a message in the kernel log:
# no lower device, a lower that does not exist or is not a block device,
# knobs out of range at load and at run time, writes to its counters.
# Loaded, it is the lower device's size, holds it exclusively, polls only
# if the lower device can, and leaves nothing behind when unloaded.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault_lib.sh"

dmp_require_root
dmpf_require_module
dmp_get_nvme_devs 1
nvme=${DMP_NVME[0]}

# refused DESC PATTERN INSMOD-ARGS...: insmod fails, logs PATTERN.  Only
# the kernel log after a marker of our own is searched: the log itself is
# left as it is, for whoever reads it after the test.
MARKS=0
refused()
{
	local desc=$1 pattern=$2 mark msg
	shift 2

	mark="fault_params.sh:mark:$$:$((++MARKS))"
	echo "$mark" >/dev/kmsg
	if insmod "$DMPF_KO" "$@" 2>/dev/null; then
		rmmod dmp_fault
		ktap_test_fail "$desc: loaded"
		return
	fi
	msg=$(dmesg | awk -v mark="$mark" 'seen; $NF == mark { seen = 1 }' |
		grep -m1 "dmp_fault: .*$pattern" | sed 's/^\[[^]]*\] //')
	if [ -z "$msg" ]; then
		ktap_test_fail "$desc: refused, but no '$pattern' in the kernel log"
	else
		echo "# $desc: $msg"
		ktap_test_pass "$desc: refused, '$pattern' in the kernel log"
	fi
}

# knob_refused KNOB VALUE: a run-time write fails and changes nothing.
knob_refused()
{
	local file=$DMPF_PARAMS/$1 old

	old=$(cat "$file")
	if { echo "$2" >"$file"; } 2>/dev/null; then
		echo "# $1=$2 accepted"
		return 1
	fi
	[ "$(cat "$file")" = "$old" ] || { echo "# $1 changed to $(cat "$file")"; return 1; }
}

ktap_print_header
ktap_set_plan 13
refused "no lower" "lower= must name" clones=2
refused "lower=/dev/nonexistent" "cannot open lower=/dev/nonexistent" lower=/dev/nonexistent
refused "lower=/dev/null, not a block device" "cannot open lower=/dev/null" lower=/dev/null
refused "clones=17 at load" "clones=17 refused" lower="$nvme" clones=17
refused "fail_status=bogus at load" "fail_status=bogus refused" lower="$nvme" fail_status=bogus
refused "stat_clones=1 at load" "stat_clones is a counter" lower="$nvme" stat_clones=1

dmpf_load "$nvme" || ktap_exit_fail_msg "cannot load dmp_fault on $nvme"
size=$(dmp_sectors "$DMPF_DEV")
if [ "$size" = "$(dmp_sectors "$nvme")" ]; then
	ktap_test_pass "dmpfault0 has the size of $nvme"
else
	echo "# dmpfault0 has $size sectors, $nvme $(dmp_sectors "$nvme")"
	ktap_test_fail "dmpfault0 has the size of $nvme: the sizes differ"
fi
dmp_check_io_poll "dmpfault0 on $nvme" "$DMPF_DEV" 1
if dmpf_claimable "$nvme"; then
	ktap_test_fail "$nvme is not held exclusively"
elif [ ! -e "$(dmp_sysfs "$nvme")/holders/dmpfault0" ]; then
	ktap_test_fail "$nvme has no holders/dmpfault0"
else
	ktap_test_pass "$nvme held exclusively, holders/dmpfault0"
fi

bad=""
for kv in clones=0 clones=17 clones=abc clones=-1 wq_every=-1 fail_every=x \
	nopoll_every=1.5 delay_us=1000001 fail_status=bogus fail_status=; do
	knob_refused "${kv%%=*}" "${kv#*=}" || bad="$bad $kv"
done
for s in $DMPF_STATS; do
	knob_refused "stat_$s" 1 || bad="$bad stat_$s=1"
done
if [ -n "$bad" ]; then
	echo "# run-time writes accepted:$bad"
	ktap_test_fail "out-of-range knobs and counter writes refused at run time: some accepted"
else
	ktap_test_pass "out-of-range knobs and counter writes refused at run time"
fi
if dmpf_set clones=16 fail_status=again delay_us=1000000 wq_every=4294967295 \
	fail_every=4294967295 &&
	[ "$(cat "$DMPF_PARAMS/clones")" = 16 ] &&
	[ "$(cat "$DMPF_PARAMS/fail_status")" = again ] &&
	[ "$(cat "$DMPF_PARAMS/delay_us")" = 1000000 ] &&
	[ "$(cat "$DMPF_PARAMS/wq_every")" = 4294967295 ] &&
	[ "$(cat "$DMPF_PARAMS/fail_every")" = 4294967295 ] &&
	dmpf_knobs clones=1; then
	ktap_test_pass "knobs at their limits accepted and read back"
else
	ktap_test_fail "knobs at their limits not accepted"
fi
dmpf_check_unload "unload" "$nvme"

# A lower device without poll queues: dmpfault0 does not poll either.
if ! dmp_have_nullb; then
	ktap_test_skip "on a lower device that cannot poll: no null_blk"
elif dmp_nullb_create nopoll size=64 memory_backed=1 queue_mode=2 poll_queues=0 &&
	dmpf_load "$DMP_NODE"; then
	if [ "$(dmp_io_poll "$DMPF_DEV")" = 0 ]; then
		dmp_check_eopnotsupp "dmpfault0 on null_blk without poll queues" "$DMPF_DEV"
	else
		ktap_test_fail "dmpfault0 on null_blk without poll queues: queue/io_poll is 1"
	fi
	dmpf_unload || echo "# rmmod failed"
else
	ktap_test_fail "on a lower device that cannot poll: cannot set up"
fi
ktap_finished
