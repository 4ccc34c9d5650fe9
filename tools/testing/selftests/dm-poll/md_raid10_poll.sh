#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# md raid10 reads within a chunk poll end to end; writes to the copies
# complete by interrupt.  raid10 has the block layer split bios at chunk
# boundaries, and it polls no bio it splits: those complete by interrupt.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds mdadm dmsetup
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

ktap_print_header
ktap_set_plan 9
dmp_md_create 10 --assume-clean --size=65536 --chunk=64 -- "$a" "$b" ||
	ktap_exit_fail_msg "cannot create md raid10"
dev=$DMP_NODE
dmp_check_io_poll "md raid10 near2" "$dev" 1
dmp_check_polled_by_irq "md raid10 near2 writes 512B-1M" "$dev" -m write -s 16M -b 512-1M -q 4 -S 61
dmp_check_polled "md raid10 near2 reads 64k, chunk aligned" "$dev" -m read -s 16M -b 64k -q 4 -S 61
dmp_check_polled "md raid10 near2 reads 4k qd16" "$dev" -m read -s 16M -b 4k -q 16 -S 61
dmp_check_irq "md raid10 near2 4k qd8" "$dev" -s 16M -b 4k -q 8 -S 62
dmp_check_mirrors "md raid10 near2, the 16 MiB written" "$dev" 32768
dmp_cleanup

# Four members, two on each namespace, far layout: reads cross chunks of
# different members.
members=()
for i in 0 1; do
	for d in "$a" "$b"; do
		dmp_dm_create "m$i${d##*/}" "0 262144 linear $d $((i * 262144))" ||
			ktap_exit_fail_msg "cannot create dm-linear member"
		members+=("$DMP_NODE")
	done
done
dmp_md_create 10 --assume-clean --layout=f2 --chunk=16 --size=65536 -- "${members[@]}" ||
	ktap_exit_fail_msg "cannot create md raid10 far2"
dev=$DMP_NODE
dmp_check_io_poll "md raid10 far2 over dm-linear" "$dev" 1
dmp_check_polled_by_irq "md raid10 far2 writes 512B-256k" "$dev" \
	-m write -s 16M -b 512-256k -q 4 -S 63
dmp_check_polled "md raid10 far2 reads 16k, chunk aligned" "$dev" -m read -s 16M -b 16k -q 4 -S 63
ktap_finished
