#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest job "exec": run the words given as one shell command line; for
# looking at the guest by hand, e.g.
#   scripts/vm-run.sh KERNEL exec 'cat /proc/interrupts; ls /dev'
eval "$*"
