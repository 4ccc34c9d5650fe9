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
bad=0
for p in "$out"/*.patch; do
	case $p in */0000-*) continue ;; esac
	if ! (cd "$repo" && perl scripts/checkpatch.pl --strict --quiet \
		--no-signoff "$p") >"$p.checkpatch" 2>&1; then
		cat "$p.checkpatch" >&2
		bad=1
	fi
	rm -f "$p.checkpatch"
done
[ "$bad" = 0 ] || die "checkpatch --strict complains (above)"
say "series: exported to $out"
ls "$out"/*.patch
