#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Export the applied series as a mailable patch set into build/series/:
# git format-patch with a cover letter, numbered, with base-commit info,
# then check every patch with the kernel's checkpatch.pl --strict.
set -eu
. "$(dirname "$0")/lib.sh"

repo=$(sp_src base)
out=${1:-$SP_BUILD/series}
git -C "$repo" rev-parse -q --verify "$SP_BRANCH" >/dev/null ||
	die "no applied series (run scripts/apply-series.sh)"
gitdir=$(cd "$repo" && cd "$(git rev-parse --git-common-dir)" && pwd)

rm -rf "$out"
sp_git -C "$repo" format-patch -q --cover-letter --numbered --base=base \
	--subject-prefix="PATCH 6.12" -o "$out" "base..$SP_BRANCH" >/dev/null

# Fill the cover letter from the manifest's Cover: stanza.
cover=$(ls "$out"/0000-*.patch)
SUBJ=$(cat "$gitdir/$SP_BRANCH-cover-subject") \
BLURB=$(cat "$gitdir/$SP_BRANCH-cover-body") awk '
	/\*\*\* SUBJECT HERE \*\*\*/ { sub(/\*\*\* SUBJECT HERE \*\*\*/, ENVIRON["SUBJ"]) }
	/\*\*\* BLURB HERE \*\*\*/ { print ENVIRON["BLURB"]; next }
	{ print }' "$cover" >"$cover.new"
mv "$cover.new" "$cover"

# SP_CHECKPATCH=0 skips checkpatch (the machinery self-test's throwaway series).
[ "${SP_CHECKPATCH:-1}" = 1 ] || { say "series: exported to $out"; exit 0; }
say "series: checkpatch --strict on $(find "$out" -name '[0-9]*.patch' ! -name '0000-*' | wc -l) patches"
# Two checkpatch warnings are replaced by exact checks:
# - UNKNOWN_COMMIT_ID: a tarball base has no history to look Fixes: up in;
#   with a KSRC git tree that has it, the check stays on.
# - FILE_PATH_CHANGES ("does MAINTAINERS need updating?"): instead, every
#   file the series adds must be covered by a MAINTAINERS entry.
ignore=FILE_PATH_CHANGES
[ "$(git -C "$repo" rev-list --count base)" -gt 1 ] ||
	ignore=$ignore,UNKNOWN_COMMIT_ID
bad=0
for p in "$out"/*.patch; do
	case $p in */0000-*) continue ;; esac
	# spdxcheck.py needs python3-ply: use Debian's python3, not a pyenv one.
	if ! (cd "$repo" && PATH=/usr/bin:$PATH perl scripts/checkpatch.pl --strict \
		--quiet --no-signoff --ignore "$ignore" "$p") >"$p.checkpatch" 2>&1; then
		cat "$p.checkpatch" >&2
		bad=1
	fi
	rm -f "$p.checkpatch"
done
for f in $(git -C "$repo" diff --diff-filter=A --name-only "base..$SP_BRANCH"); do
	(cd "$(sp_src patched)" && perl scripts/get_maintainer.pl --no-git \
		--no-rolestats --no-tree -f "$f" 2>/dev/null) |
		grep -qv 'linux-kernel@vger.kernel.org' || {
		echo "$f: no MAINTAINERS entry covers it" >&2
		bad=1
	}
done
[ "$bad" = 0 ] || die "checkpatch --strict complains (above)"
say "series: exported to $out"
ls "$out"/*.patch
