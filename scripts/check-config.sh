#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Check that the block stack of the test kernel is configured as Debian's
# 6.12 kernel has it: every line of scripts/stackpoll.config's "Debian:"
# section must give the value of Debian's amd64 config (package
# linux-config-6.12).  The fragment's own .config check (build-kernel.sh)
# then proves that the built kernel has those values.
set -eu
. "$(dirname "$0")/lib.sh"

debian=${DEBIAN_CONFIG:-/usr/src/linux-config-6.12/config.amd64_none_amd64.xz}
[ -f "$debian" ] || die "no Debian config at $debian (run: make deps)"
need_cmds xzcat

# The "# Debian:" section: from that line to the first blank line.
section=$(sed -n '/^# Debian:$/,/^$/p' "$SP_TOP/scripts/stackpoll.config" | grep '^CONFIG_')
[ -n "$section" ] || die "scripts/stackpoll.config has no '# Debian:' section"
deb=$(xzcat "$debian")
bad=0
while IFS= read -r line; do
	sym=${line%%=*}
	want=$(grep -E "^$sym=|^# $sym is not set" <<<"$deb" || echo "$sym absent")
	if [ "$want" != "$line" ]; then
		echo "stackpoll.config says $line, Debian: $want"
		bad=1
	fi
done <<<"$section"
[ "$bad" = 0 ] || die "the Debian section of scripts/stackpoll.config differs from $debian"
echo "$(wc -l <<<"$section") options match $(basename "$debian")"
