#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Write the series' diffs back from branch stackpoll of the kernel repo,
# after its commits were edited there (git rebase -i): commit N of
# base..stackpoll is patch N of scripts/series/manifest, and each Edit:
# diff of patch N is rewritten with what commit N changes in the files
# that diff touches.  Files the patch adds whole (Add:) live in this repo
# at their version at the end of the series and are edited here: one that
# differs from the file at the end of the branch is reported, not copied.
# (apply-series.sh derives the version commit N adds from the copy here
# and the later Edit: diffs, which this rewrites.)  A file that commit N
# changes and no Edit: or Add: line of patch N covers is an error: name
# it in the manifest first.
#
# Usage: refresh-series.sh [MANIFEST]
set -eu
. "$(dirname "$0")/lib.sh"

manifest=${1:-$SP_TOP/scripts/series/manifest}
diffdir=$(cd "$(dirname "$manifest")" && pwd)
repo=$(sp_src base)
rgit() { git -C "$repo" "$@"; }

# same_as_end FILE: this repo's copy of an added FILE is the file at the
# end of the branch, where every later Edit: has been applied to it.
same_as_end() {
	[ -f "$SP_FILES/$1" ] &&
		rgit show "$SP_BRANCH:$1" 2>/dev/null | cmp -s - "$SP_FILES/$1"
}

mapfile -t commits < <(rgit rev-list --reverse "base..$SP_BRANCH")
# One line per Edit: or Add: of a patch: "N edit NAME" or "N add PATH"
mapfile -t entries < <(sp_manifest_entries "$manifest")
npatches=${entries[-1]##* }
[ "$npatches" = "${#commits[@]}" ] ||
	die "the manifest has $npatches patches, base..$SP_BRANCH ${#commits[@]} commits"

for ((n = 1; n <= npatches; n++)); do
	c=${commits[$((n - 1))]}
	covered=()
	for e in "${entries[@]}"; do
		read -r en kind arg <<<"$e"
		[ "$en" = "$n" ] || continue
		case $kind in
		edit)
			[ -f "$diffdir/$arg" ] || die "patch $n: no $diffdir/$arg"
			mapfile -t paths < <(sed -n 's|^+++ b/||p; s|^--- a/||p' \
				"$diffdir/$arg" | sort -u | grep -vx /dev/null)
			[ "${#paths[@]}" -gt 0 ] || die "patch $n: $arg names no file"
			rgit diff "$c^" "$c" -- "${paths[@]}" >"$diffdir/$arg"
			[ -s "$diffdir/$arg" ] || die "patch $n: $arg is empty now"
			covered+=("${paths[@]}")
			;;
		add)
			while read -r f; do
				same_as_end "$f" ||
					say "series: patch $n adds $f: this repo's copy differs from the file at the end of $SP_BRANCH; bring the change here"
				covered+=("$f")
			done < <(rgit diff --name-only "$c^" "$c" -- "$arg")
			;;
		esac
	done
	while read -r f; do
		printf '%s\n' "${covered[@]}" | grep -qxF "$f" ||
			die "patch $n ($(rgit log -1 --format=%s "$c")) changes $f, which no Edit: or Add: covers"
	done < <(rgit diff --name-only "$c^" "$c")
done
say "series: $npatches patches refreshed from $SP_BRANCH"
