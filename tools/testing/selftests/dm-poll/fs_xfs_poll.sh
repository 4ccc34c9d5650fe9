#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xfs on dm-striped, dm-linear over dm-striped, md raid0 and raid1, dm-thin
# and dm-crypt: polled direct I/O to files (fio io_uring --hipri with
# verification, I/O up to 2 MiB that iomap issues as several bios), 4 KiB
# file reads polled end to end with no interrupt, a clean read-only fsck
# and the data read back after a remount.
# fio verifies what it read in user space, up to its queue depth of 2 MiB
# blocks between two polls: under QEMU's TCG that keeps it from polling
# for longer than the 1 s lib.sh allows, with nothing wrong.  A submitter
# that waits for its own polled I/O still shows: it would wait for the
# NVMe timeout (30 s).
DMP_REAP_MS=${DMP_REAP_MS-5000}
. "$(dirname "$0")/lib.sh"
# shellcheck source=fs_lib.sh
. "$(dirname "$0")/fs_lib.sh"

dmp_require_root
fs_require xfs
fs_all_stacks xfs
