#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Check that every file the series adds whole (Add:) is, in this repo, the
# file at the end of the applied series (the tip of branch stackpoll):
# same files under each Add: path, same content, same mode.  What one
# reads here is then what the series makes, and a copy left behind (a
# rebase of the branch not brought here, an edit here not applied) fails.
#
# Usage: check-added-files.sh [MANIFEST]
#   SP_BRANCH, SP_FILES  as for apply-series.sh
set -eu
. "$(dirname "$0")/lib.sh"

manifest=${1:-$SP_TOP/scripts/series/manifest}
repo=$(sp_src base)
[ -f "$manifest" ] || die "no manifest at $manifest"
git -C "$repo" rev-parse -q --verify "$SP_BRANCH" >/dev/null ||
	die "no branch $SP_BRANCH in $repo (run scripts/apply-series.sh)"

# entry_here FILE: "MODE BLOB" of this repo's FILE, as apply-series.sh
# would hash it; nothing if there is no such file.
entry_here() {
	local mode=100644

	[ -f "$SP_FILES/$1" ] || return 0
	[ ! -x "$SP_FILES/$1" ] || mode=100755
	echo "$mode $(git -C "$repo" hash-object "$SP_FILES/$1")"
}

# entry_at_end FILE: "MODE BLOB" of FILE at the tip of the branch.
entry_at_end() {
	git -C "$repo" ls-tree "$SP_BRANCH" -- "$1" | awk '$2 == "blob" { print $1, $3 }'
}

# files_under PATH: the files under an Add: path, here or at the end.
files_under() {
	{
		sp_added_files "$1"
		git -C "$repo" ls-tree -r --name-only "$SP_BRANCH" -- "$1"
	} | sort -u
}

bad=0
total=0
while read -r _ kind path; do
	[ "$kind" = add ] || continue
	while read -r f; do
		total=$((total + 1))
		[ "$(entry_here "$f")" != "$(entry_at_end "$f")" ] || continue
		echo "$f: this repo's copy is not the file at the end of $SP_BRANCH" >&2
		bad=$((bad + 1))
	done < <(files_under "$path")
done < <(sp_manifest_entries "$manifest")
[ "$bad" = 0 ] ||
	die "$bad of the $total files the series adds differ from the end of $SP_BRANCH (above); a copy here is the final version: after editing it, apply again; after a rebase of $SP_BRANCH, copy its file here"
say "series: the $total files the series adds are, here, the files at the end of $SP_BRANCH"
