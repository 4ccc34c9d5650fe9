#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest job "exec": run a shell script given as one argument (it reaches
# the guest one line per argument, so the lines are joined back); for
# looking at the guest by hand, e.g.
#   scripts/vm-run.sh KERNEL exec 'cat /proc/interrupts; ls /dev'
eval "$(printf '%s\n' "$@")"
