#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NVMe uring passthrough (/dev/ngXnY, fio's io_uring_cmd engine) with
# hipri: completions are polled from the NVMe poll queue, data verified.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds fio
dmp_get_nvme_devs 1
read -r -a chars <<<"${DM_POLL_NVME_CHARS:-}"
[ "${#chars[@]}" -ge 1 ] ||
	dmp_skip_all "needs the NVMe generic char device of ${DMP_NVME[0]} in DM_POLL_NVME_CHARS"
[ -c "${chars[0]}" ] || dmp_skip_all "${chars[0]} is not a character device"
ng=${chars[0]}

fio_passthru()
{
	fio --name=passthru --filename="$ng" --ioengine=io_uring_cmd \
		--cmd_type=nvme --hipri="$1" --rw=randwrite --bs=4k --iodepth=8 \
		--size=4M --verify=crc32c --do_verify=1 --verify_fatal=1 \
		--norandommap --randrepeat=1 --output-format=terse >/dev/null
}

ktap_print_header
ktap_set_plan 2
DMP_IRQ_RE=$(dmp_irq_regex "${DMP_NVME[0]}")
rc=0 irqs=0
dmp_run_counted irqs fio_passthru 1 || rc=$?
echo "# $ng: polled: $irqs interrupts ($DMP_IRQ_RE)"
if [ "$rc" != 0 ]; then
	ktap_test_fail "$ng: polled passthrough write+verify failed"
elif [ "$irqs" -ne 0 ]; then
	ktap_test_fail "$ng: interrupts during polled passthrough"
else
	ktap_test_pass "$ng: polled passthrough, data verified, 0 interrupts"
fi
rc=0
dmp_run_counted irqs fio_passthru 0 || rc=$?
echo "# $ng: interrupt driven: $irqs interrupts ($DMP_IRQ_RE)"
if [ "$rc" != 0 ]; then
	ktap_test_fail "$ng: interrupt-driven passthrough failed"
elif [ "$irqs" -le 0 ]; then
	ktap_test_fail "$ng: no interrupts counted for interrupt-driven passthrough"
else
	ktap_test_pass "$ng: interrupt-driven passthrough, interrupts counted"
fi
ktap_finished
