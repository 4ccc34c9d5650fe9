#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Make build/kernel/base/src: a git repo whose first commit is the pristine
# base tree, from Debian's linux-source-6.12 or from KSRC=/path/to/linux.
# Also adds the worktree build/kernel/patched/src that apply-series.sh uses.
# Does nothing when the base already matches its source.
set -eu
. "$(dirname "$0")/lib.sh"

TARBALL=${TARBALL:-/usr/src/linux-source-6.12.tar.xz}
base=$(sp_src base)
patched=$(sp_src patched)

# Identify the source so that a different KSRC or tarball rebuilds the base.
if [ -n "${KSRC:-}" ]; then
	[ -f "$KSRC/Makefile" ] || die "KSRC=$KSRC: no kernel Makefile there"
	if git -C "$KSRC" rev-parse --git-dir >/dev/null 2>&1; then
		[ -z "$(git -C "$KSRC" status --porcelain --untracked-files=no)" ] ||
			die "KSRC=$KSRC has uncommitted changes; commit or stash them"
		ident="ksrc $KSRC $(git -C "$KSRC" rev-parse HEAD)"
	else
		die "KSRC=$KSRC is not a git tree (want a v6.12.y git tree)"
	fi
else
	[ -f "$TARBALL" ] || die "$TARBALL missing: apt-get install linux-source-6.12, or set KSRC"
	ident="tarball $TARBALL $(stat -c '%s %Y' "$TARBALL")"
fi

stamp=$SP_KDIR/base/source
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$ident" ] &&
   git -C "$base" rev-parse -q --verify base >/dev/null; then
	exit 0
fi

say "base: unpacking ${KSRC:-$TARBALL}"
rm -rf "$SP_KDIR"
mkdir -p "$base"
if [ -n "${KSRC:-}" ]; then
	git -C "$KSRC" archive --format=tar HEAD | tar -x -C "$base"
else
	# The tarball holds one top directory, linux-source-6.12/.
	tar -x -C "$base" --strip-components=1 -f "$TARBALL"
fi

version=$(make -s -C "$base" kernelversion 2>/dev/null) ||
	die "cannot read the kernel version of the base tree"
case $version in
6.12|6.12.*) ;;
*) die "base tree is Linux $version; the series targets 6.12.y" ;;
esac

say "base: committing Linux $version as the pristine tree"
cd "$base"
sp_git init -q -b base .
# Keep git from ignoring anything the tarball ships: the tree is the base.
sp_git -c core.excludesFile=/dev/null add -A -f .
sp_git commit -q -m "Linux $version (pristine base)" \
	-m "Source: ${KSRC:-$TARBALL}"
sp_git tag -f "v$version-base" >/dev/null
sp_git worktree add -q -B stackpoll "$patched" base
echo "$version" >"$SP_KDIR/base/version"
echo "$ident" >"$stamp"
say "base: Linux $version ready"
