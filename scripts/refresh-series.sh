#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Write the series' diffs back from branch stackpoll of the kernel repo,
# after its commits were edited there (git rebase -i): commit N of
# base..stackpoll is patch N of scripts/series/manifest, and each Edit:
# diff of patch N is rewritten with what commit N changes in the files
# that diff touches.  Files the patch adds whole (Add:) live in this repo
# and are edited here: one that commit N has otherwise is reported, not
# copied.  A file that commit N changes and no Edit: or Add: line of patch
# N covers is an error: name it in the manifest first.
#
# Usage: refresh-series.sh [MANIFEST]
set -eu
. "$(dirname "$0")/lib.sh"

manifest=${1:-$SP_TOP/scripts/series/manifest}
diffdir=$(cd "$(dirname "$manifest")" && pwd)
repo=$(sp_src base)
rgit() { git -C "$repo" "$@"; }

mapfile -t commits < <(rgit rev-list --reverse "base..$SP_BRANCH")
# One line per patch: "N edit NAME" or "N add PATH"
mapfile -t entries < <(awk '
	/^#/ && !inbody { next }
	/^Cover: / { n = 0; inbody = 0; next }
	/^Subject: / { n++; inbody = 0; next }
	n == "" || n == 0 { next }
	!inbody && /^Edit: / { print n, "edit", substr($0, 7); next }
	!inbody && /^Add: / { print n, "add", substr($0, 6); next }
	!inbody && /^$/ { inbody = 1 }
	END { print n, "count", n }
' "$manifest")
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
				rgit show "$c:$f" | cmp -s - "$SP_TOP/$f" ||
					say "series: patch $n: $f differs from this repo's, which apply-series.sh adds"
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
