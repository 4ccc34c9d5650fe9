#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the kernel at every patch of the series, in order, so that the
# series bisects: each commit of branch stackpoll is checked out in its
# own worktree (build/kernel/bisect/src) and built incrementally there,
# leaving the patched tree and its bzImage alone.
set -eu
. "$(dirname "$0")/lib.sh"

repo=$(sp_src base)
src=$(sp_src bisect)
git -C "$repo" rev-parse -q --verify "$SP_BRANCH" >/dev/null ||
	die "no applied series (run scripts/apply-series.sh)"
[ -d "$src" ] || sp_git -C "$repo" worktree add -q --detach "$src" base

n=0
total=$(git -C "$repo" rev-list --count "base..$SP_BRANCH")
for commit in $(git -C "$repo" rev-list --reverse "base..$SP_BRANCH"); do
	n=$((n + 1))
	say "bisect: [$n/$total] $(git -C "$repo" log -1 --format=%s "$commit")"
	sp_git -C "$src" checkout -q --detach "$commit"
	bash "$SP_TOP/scripts/build-kernel.sh" bisect >/dev/null ||
		die "patch $n does not build: $(git -C "$repo" log -1 --format=%s "$commit")"
done
say "bisect: all $total patches build"
