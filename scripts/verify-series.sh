#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Prove the exported series is the series: "git am" it onto a fresh
# checkout of the base and compare the resulting tree with the applied
# branch.  Only the paths the series touches are checked out (sparse),
# so this takes seconds, not a kernel-sized checkout.
set -eu
. "$(dirname "$0")/lib.sh"

repo=$(sp_src base)
series=${1:-$SP_BUILD/series}
ls "$series"/0001-*.patch >/dev/null 2>&1 || die "no exported series in $series"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sp_git clone -q --shared --no-checkout -b base "$repo" "$tmp/am"
# The sparse set: every file the series touches.
git -C "$repo" diff --name-only base "$SP_BRANCH" | sed 's|^|/|' |
	sp_git -C "$tmp/am" sparse-checkout set --no-cone --stdin >/dev/null
sp_git -C "$tmp/am" checkout -q base
for p in "$series"/[0-9][0-9][0-9][0-9]-*.patch; do
	case $p in */0000-*) continue ;; esac
	sp_git -C "$tmp/am" am -q "$p" ||
		die "git am of $(basename "$p") onto the base failed"
done
got=$(git -C "$tmp/am" rev-parse 'HEAD^{tree}')
want=$(git -C "$repo" rev-parse "$SP_BRANCH^{tree}")
[ "$got" = "$want" ] ||
	die "git am of the export gives tree $got, the applied series is $want"
say "series: git am of $series onto the base gives the applied tree ($got)"
