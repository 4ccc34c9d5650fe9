#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Apply the series of scripts/series/manifest onto the base tree as one
# commit per logical patch, on branch "stackpoll" of the kernel repo, and
# check the patched worktree out.  The commits are built with a scratch
# index (git plumbing), so the worktree only changes where the result
# differs: an unchanged series costs no kernel rebuild.  A file that a
# patch adds whole (Add:) is, in this repo, the file at the end of the
# series; the version the patch adds is that copy with the later
# patches' Edit: diffs of it undone.
#
# Usage: apply-series.sh [MANIFEST]
#   MANIFEST      default scripts/series/manifest; diffs are looked up next to it
#   SP_BRANCH     branch to write (default stackpoll, which the patched
#                 worktree has checked out)
#   SP_KCONFIG    the file Kconfig: lines take entries from (default ./Kconfig)
#   SP_FILES      the tree Add: paths are taken from (default this repo)
#   SP_ONLY       an extended regex: apply only the patches whose subject
#                 matches (build-kernel.sh base: the null_blk patches)
set -eu
. "$(dirname "$0")/lib.sh"

manifest=${1:-$SP_TOP/scripts/series/manifest}
repo=$(sp_src base)
branch=$SP_BRANCH
kconfig=${SP_KCONFIG:-$SP_TOP/Kconfig}
diffdir=$(cd "$(dirname "$manifest")" && pwd)
[ -f "$manifest" ] || die "no manifest at $manifest"
git -C "$repo" rev-parse -q --verify base >/dev/null ||
	die "$repo has no base branch (run scripts/base-tree.sh)"
version=$(make -s -C "$repo" kernelversion 2>/dev/null || echo unknown)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Split the manifest: $tmp/N/{subject,body,edits,adds,kconfig}, N = 1, 2...
awk -v out="$tmp" '
	function hdr(file, val) { print val >> (out "/" n "/" file); close(out "/" n "/" file) }
	/^#/ && !inbody { next }
	/^Cover: / { n = 0; system("mkdir -p " out "/0"); hdr("subject", substr($0, 8)); inbody = 0; next }
	/^Subject: / { n++; system("mkdir -p " out "/" n); hdr("subject", substr($0, 10)); inbody = 0; next }
	n == "" { next }
	!inbody && /^Edit: / { hdr("edits", substr($0, 7)); next }
	!inbody && /^Add: / { hdr("adds", substr($0, 6)); next }
	!inbody && /^Kconfig: / { hdr("kconfig", substr($0, 10)); next }
	!inbody && /^$/ { inbody = 1; next }
	!inbody { printf "manifest: unknown header line: %s\n", $0 > "/dev/stderr"; exit 1 }
	{ hdr("body", $0) }
' "$manifest" || die "cannot parse $manifest"

npatches=$(find "$tmp" -mindepth 1 -maxdepth 1 -name '[1-9]*' | wc -l)
say "series: applying $npatches patches onto Linux $version"

export GIT_INDEX_FILE=$tmp/index
rgit() { sp_git -C "$repo" "$@"; }
# git on the scratch index where added_entry undoes later edits.
ugit() { GIT_INDEX_FILE=$tmp/undo git -C "$repo" "$@"; }
rgit read-tree base

# add_path PATH: stage a file or directory of this repo at the same path,
# each file as patch $n adds it.
add_path() {
	local path=$1 f entry
	local -a files

	mapfile -t files < <(sp_added_files "$path")
	[ "${#files[@]}" -gt 0 ] || die "patch $n: Add: $path: no such file in the repo"
	for f in "${files[@]}"; do
		if rgit cat-file -e "base:$f" 2>/dev/null; then
			die "patch $n: Add: $f exists upstream; change it with an Edit"
		fi
		entry=$(added_entry "$f")
		# Nothing: a later patch's Edit: creates it.
		[ -z "$entry" ] || rgit update-index --add --cacheinfo "$entry"
	done
}

# later_edits FILE: set "undo" to the Edit: diffs of the patches after $n
# that change FILE, as "M NAME", newest first: the order to undo them in.
later_edits() {
	local f=$1 m i
	local -a diffs

	undo=()
	for ((m = npatches; m > n; m--)); do
		[ -f "$tmp/$m/edits" ] || continue
		mapfile -t diffs <"$tmp/$m/edits"
		for ((i = ${#diffs[@]} - 1; i >= 0; i--)); do
			[ -f "$diffdir/${diffs[i]}" ] ||
				die "patch $m: Edit: ${diffs[i]} missing in $diffdir"
			! grep -qxF -e "+++ b/$f" -e "--- a/$f" "$diffdir/${diffs[i]}" ||
				undo+=("$m ${diffs[i]}")
		done
	done
}

# added_entry FILE: the index entry "MODE,BLOB,FILE" of FILE as patch $n
# adds it, or nothing if it is not there yet.  This repo holds the file
# at the end of the series (so that what one reads here is what the
# series makes): the later Edit: diffs that change it are undone, newest
# first, on a scratch index that holds only FILE.
added_entry() {
	local f=$1 mode=100644 blob e m diff
	local -a undo

	[ ! -x "$SP_FILES/$f" ] || mode=100755
	blob=$(rgit hash-object -w "$SP_FILES/$f")
	later_edits "$f"
	[ "${#undo[@]}" -gt 0 ] || { echo "$mode,$blob,$f"; return; }
	ugit read-tree --empty
	ugit update-index --add --cacheinfo "$mode,$blob,$f"
	for e in "${undo[@]}"; do
		read -r m diff <<<"$e"
		ugit apply --cached -R --whitespace=nowarn --include="$f" \
			"$diffdir/$diff" 2>"$tmp/err" ||
			die "patch $n: Add: $f: this repo's copy must be the file at the end of the series, but $diff of patch $m ($(cat "$tmp/$m/subject")) does not undo on it: $(cat "$tmp/err")"
	done
	ugit ls-files -s -- "$f" | sed 's/^\([0-7]*\) \([0-9a-f]*\) [0-3]\t/\1,\2,/'
}

# splice_kconfig DEST SYM AFTER: insert the "config SYM" entry of the
# top-level Kconfig into DEST, right after the entry of AFTER.
splice_kconfig() {
	local dest=$1 sym=$2 after=$3 entry
	entry=$(awk -v s="$sym" '
		/^(menuconfig |config |endmenu|endif|source |menu |if |comment |choice)/ {
			on = ($1 == "config" || $1 == "menuconfig") && $2 == s
		}
		on' "$kconfig")
	[ -n "$entry" ] || die "patch $n: Kconfig: no 'config $sym' in $kconfig"
	rgit cat-file blob ":$dest" >"$tmp/kconfig.in" 2>/dev/null ||
		die "patch $n: Kconfig: no $dest in the tree"
	ENTRY=$entry awk -v a="$after" '
		function is_start(l) {
			return l ~ /^(menuconfig |config |endmenu|endif|source |menu |if |comment |choice)/
		}
		!done && in_anchor && is_start($0) { print ENVIRON["ENTRY"]; print ""; done = 1 }
		is_start($0) { in_anchor = ($1 == "config" || $1 == "menuconfig") && $2 == a }
		{ print }
		END {
			if (!done && in_anchor) { print ""; print ENVIRON["ENTRY"]; done = 1 }
			exit !done
		}' "$tmp/kconfig.in" >"$tmp/kconfig.out" ||
		die "patch $n: Kconfig: no entry for $after in $dest"
	rgit update-index --cacheinfo \
		"100644,$(rgit hash-object -w "$tmp/kconfig.out"),$dest"
}

parent=$(rgit rev-parse base)
for ((n = 1; n <= npatches; n++)); do
	d=$tmp/$n
	subject=$(cat "$d/subject")
	[ -z "${SP_ONLY:-}" ] || grep -qE -- "$SP_ONLY" "$d/subject" || continue
	say "series: [$n/$npatches] $subject"
	if [ -f "$d/edits" ]; then
		while read -r diff; do
			[ -f "$diffdir/$diff" ] || die "patch $n: Edit: $diff missing in $diffdir"
			rgit apply --cached --whitespace=error-all "$diffdir/$diff" 2>"$tmp/err" ||
				die "patch $n ($subject): $diff does not apply to Linux $version: $(cat "$tmp/err")"
		done <"$d/edits"
	fi
	if [ -f "$d/adds" ]; then
		while read -r path; do add_path "$path"; done <"$d/adds"
	fi
	if [ -f "$d/kconfig" ]; then
		while read -r dest sym after; do
			splice_kconfig "$dest" "$sym" "$after"
		done <"$d/kconfig"
	fi
	{
		echo "$subject"
		echo
		[ -f "$d/body" ] && sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$d/body" && echo
		echo "Signed-off-by: $SP_AUTHOR_NAME <$SP_AUTHOR_EMAIL>"
	} >"$tmp/msg"
	tree=$(rgit write-tree)
	[ "$tree" != "$(rgit rev-parse "$parent^{tree}")" ] ||
		die "patch $n ($subject) changes nothing"
	parent=$(rgit commit-tree "$tree" -p "$parent" -F "$tmp/msg")
done
rgit update-ref "refs/heads/$branch" "$parent"
# The cover letter text, for export-series.sh.
gitdir=$(cd "$repo" && cd "$(git rev-parse --git-common-dir)" && pwd)
cat "$tmp/0/subject" >"$gitdir/$branch-cover-subject" 2>/dev/null ||
	die "manifest has no Cover: stanza"
cat "$tmp/0/body" >"$gitdir/$branch-cover-body" 2>/dev/null || true

# Bring the patched worktree to the new commit, touching only what changed.
patched=$(sp_src patched)
unset GIT_INDEX_FILE
if [ "$branch" = stackpoll ] && [ -d "$patched" ]; then
	sp_git -C "$patched" reset -q --hard "$branch"
fi
say "series: $branch is $(rgit rev-parse --short "$branch") on Linux $version"
