#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Many rings on one device, under suspend and resume cycles (50 with
# DMP_FULL=1, 12 by default).  While a device is suspended, polled bios
# fail with BLK_STS_AGAIN and io_uring resubmits them from its workers,
# and bios DM holds complete by interrupt after resume.  A ring polls a
# bio through a pointer that by then may name another ring's bio (the bio
# cache reuses it at once), so ->poll_bio() must cope with a bio that
# another task polls, or is still submitting.  Every I/O must complete,
# with its data.
. "$(dirname "$0")/lib.sh"

dmp_require_root
dmp_require_cmds dmsetup
dmp_get_nvme_devs 2
a=${DMP_NVME[0]} b=${DMP_NVME[1]}

ktap_print_header
ktap_set_plan 3

# 4 KiB chunks: most bios are split, so each has several links.
dmp_dm_create rings-striped "0 131072 striped 2 8 $a 0 $b 0" ||
	ktap_exit_fail_msg "cannot create dm-striped"
dev=$DMP_NODE
dmp_rings_under_load "dm-striped: noflush suspend and resume" "$dev" 4 "$(dmp_scaled 50)" \
	dmp_dm_suspend_resume "${dev#/dev/mapper/}" --noflush

dmp_dm_create rings-linear "0 65536 linear $a 131072
65536 65536 linear $b 131072" || ktap_exit_fail_msg "cannot create dm-linear"
dev=$DMP_NODE
dmp_rings_under_load "dm-linear over two devices: suspend and resume" "$dev" 4 "$(dmp_scaled 50)" \
	dmp_dm_suspend_resume "${dev#/dev/mapper/}"

# dm-linear over the dm-striped device: the lower device's bios are
# linked to the upper device's clones.
dmp_dm_create rings-nested "0 131072 linear /dev/mapper/$DMP_PREFIX-rings-striped 0" ||
	ktap_exit_fail_msg "cannot create dm-linear over dm-striped"
dev=$DMP_NODE
dmp_rings_under_load "dm-linear over dm-striped: lower noflush suspend" "$dev" 4 \
	"$(dmp_scaled 50)" \
	dmp_dm_suspend_resume "$DMP_PREFIX-rings-striped" --noflush
ktap_finished
