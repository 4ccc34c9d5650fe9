#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Several IOPOLL rings in one thread, and one ring over several stacked
# devices at once, through dm-striped and md raid0 with 4 KiB chunks
# (bios split): iopoll_verify -N drives 4 rings round robin from one
# thread, submitting and polling each without waiting, so that one ring's
# poll reaps completions of bios that another ring's stacked bios wait
# for; given a dm device and an md array, one ring has I/O in flight to
# both, each device with its own pattern.  Polled end to end, every
# sector verified, 0 interrupts; the same runs interrupt driven raise
# some (the control of the counting).  md raid0 is on dm-linear pieces of
# the namespaces that dm-striped uses too.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup mdadm
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

ktap_print_header
ktap_set_plan 7
# dm-striped at 512 MiB of each namespace; md raid0 on dm-linear pieces of
# their first 256 MiB (dm holds the namespaces: md cannot claim them too).
dmp_dm_create rings-striped "0 131072 striped 2 8 $a 1048576 $b 1048576" ||
	ktap_exit_fail_msg "cannot create dm-striped"
dm=$DMP_NODE
dmp_dm_zeroed rings-a "$a" 0 524288 || ktap_exit_fail_msg "cannot create dm-linear on $a"
piece_a=$DMP_NODE
dmp_dm_zeroed rings-b "$b" 0 524288 || ktap_exit_fail_msg "cannot create dm-linear on $b"
dmp_md_create 0 --chunk=4 -- "$piece_a" "$DMP_NODE" ||
	ktap_exit_fail_msg "cannot create md raid0"
md=$DMP_NODE

dmp_check_polled "dm-striped: 4 rings in one thread" "$dm" -N 4 -s 16M -b 4k-128k -q 8 -S 71
dmp_check_polled "md raid0: 4 rings in one thread" "$md" -N 4 -s 16M -b 4k-128k -q 8 -S 72
dmp_check_irq "dm-striped: 4 rings in one thread, interrupt driven" "$dm" \
	-N 4 -s 8M -b 4k-128k -q 8 -S 73

# One ring's slots alternate between the devices: I/O to both at once, and
# to the namespaces below through two stacks.
DMP_IRQ_RE_OVERRIDE=$(dmp_irq_regex "$dm" "$md")
dmp_check_polled "one ring over dm-striped and md raid0" "$md" -s 16M -b 4k-128k -q 8 -S 74 "$dm"
# dm-striped, the first device, had seed 74 (md raid0 75); its first 4 KiB
# chunk is on a at 512 MiB: read it from there, so that bios sent to the
# wrong device, for reads and writes alike, cannot pass.
dmp_check_below "one ring over dm-striped and md raid0: dm-striped's first chunk" \
	"$a" 1048576 74 4096
dmp_check_polled "4 rings in one thread over dm-striped and md raid0" "$md" \
	-N 4 -s 16M -b 4k-128k -q 8 -S 76 "$dm"
dmp_check_irq "one ring over dm-striped and md raid0, interrupt driven" "$md" \
	-s 8M -b 4k-128k -q 8 -S 78 "$dm"
unset DMP_IRQ_RE_OVERRIDE

ktap_finished
