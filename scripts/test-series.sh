#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Self-test of the series machinery on a throwaway two-patch series that
# uses every manifest feature (Edit, Add, Kconfig splice, a patch that
# builds on the one before): apply, export, git am onto a fresh base,
# same tree; and an Edit that does not apply must fail naming the patch
# and the base version.  The files it adds are, in its own file tree
# (SP_FILES), their versions at the end of the series, and the second
# patch edits one and creates another in the added directory: the first
# patch must add their first versions, check-added-files.sh must pass and
# then fail on a drifted copy, and a copy the edit cannot be undone on
# must stop the apply.  Works on its own branch; the real series is left
# alone.
set -eu
. "$(dirname "$0")/lib.sh"

repo=$(sp_src base)
tmp=$(mktemp -d)
export SP_BRANCH=series-selftest SP_KCONFIG=$tmp/Kconfig SP_FILES=$tmp/files
trap 'rm -rf "$tmp"; git -C "$repo" branch -q -D "$SP_BRANCH" 2>/dev/null || true' EXIT

# edit_diff FILE SED-SCRIPT BASE-REF: a git-style diff of FILE.
edit_diff() {
	git -C "$repo" show "$3:$1" >"$tmp/a"
	sed "$2" "$tmp/a" >"$tmp/b"
	echo "diff --git a/$1 b/$1"
	diff -u --label "a/$1" --label "b/$1" "$tmp/a" "$tmp/b" || true
}

cat >"$SP_KCONFIG" <<'KCONFIG'
config STACKPOLL_SERIES_SELFTEST
	bool "Series machinery self-test"
	help
	  Never merged: proves that Kconfig entries are spliced.
KCONFIG
edit_diff block/Kconfig.iosched '1a # series self-test: first edit' base >"$tmp/one.diff"
git -C "$repo" show base:block/Kconfig.iosched | sed '1a # series self-test: first edit' >"$tmp/iosched"
cat >"$tmp/manifest" <<'MANIFEST'
Cover: Series machinery self-test

Throwaway.

Subject: block: series self-test, first patch
Edit: one.diff
Add: tools/testing/selftests/series-selftest
Kconfig: block/Kconfig STACKPOLL_SERIES_SELFTEST BLK_DEV_ZONED

First.

Subject: block: series self-test, second patch
Edit: two.diff
Edit: three.diff

Second, on top of the first.
MANIFEST
# The second edit only applies on top of the first.
{
	echo "diff --git a/block/Kconfig.iosched b/block/Kconfig.iosched"
	sed '2a # series self-test: second edit' "$tmp/iosched" >"$tmp/iosched2"
	diff -u --label a/block/Kconfig.iosched --label b/block/Kconfig.iosched \
		"$tmp/iosched" "$tmp/iosched2" || true
} >"$tmp/two.diff"

# The added directory, as at the end of the series; three.diff made it so.
added=tools/testing/selftests/series-selftest
mkdir -p "$SP_FILES/$added"
git -C "$SP_FILES" init -q
echo timeout=0 >"$SP_FILES/$added/settings"
printf '%s\n' notes 'first version' end >"$tmp/notes.first"
printf '%s\n' notes 'edited by the second patch' end >"$SP_FILES/$added/notes"
echo later >"$SP_FILES/$added/later"
{
	echo "diff --git a/$added/notes b/$added/notes"
	diff -u --label "a/$added/notes" --label "b/$added/notes" \
		"$tmp/notes.first" "$SP_FILES/$added/notes" || true
	echo "diff --git a/$added/later b/$added/later"
	echo "new file mode 100644"
	diff -u --label /dev/null --label "b/$added/later" \
		/dev/null "$SP_FILES/$added/later" || true
} >"$tmp/three.diff"

bash "$SP_TOP/scripts/apply-series.sh" "$tmp/manifest"
[ "$(git -C "$repo" rev-list --count "base..$SP_BRANCH")" = 2 ] ||
	die "expected 2 commits on $SP_BRANCH"
git -C "$repo" show "$SP_BRANCH:block/Kconfig" |
	awk '/^config BLK_DEV_ZONED/ { z = NR } /^config STACKPOLL_SERIES_SELFTEST/ { s = NR }
	     /^config BLK_DEV_THROTTLING/ { t = NR } END { exit !(z && z < s && s < t) }' ||
	die "Kconfig entry not spliced after BLK_DEV_ZONED"
git -C "$repo" show "$SP_BRANCH:block/Kconfig.iosched" | grep -q 'second edit' ||
	die "second edit missing"
git -C "$repo" cat-file -e "$SP_BRANCH~1:$added/settings" ||
	die "added file missing"
git -C "$repo" show "$SP_BRANCH~1:$added/notes" | cmp -s - "$tmp/notes.first" ||
	die "the first patch does not add the first version of $added/notes"
! git -C "$repo" cat-file -e "$SP_BRANCH~1:$added/later" 2>/dev/null ||
	die "the first patch adds $added/later, which the second creates"
git -C "$repo" show "$SP_BRANCH:$added/later" | grep -qx later ||
	die "the second patch does not create $added/later"
git -C "$repo" log -1 --format=%B "$SP_BRANCH" | grep -q '^Signed-off-by: ' ||
	die "no Signed-off-by"

SP_CHECKPATCH=0 bash "$SP_TOP/scripts/export-series.sh" "$tmp/series" >/dev/null
grep -q '^Subject: \[PATCH 6.12 0/2\] Series machinery self-test' "$tmp"/series/0000-*.patch ||
	die "cover letter subject not filled in"
bash "$SP_TOP/scripts/verify-series.sh" "$tmp/series"

# The copies here are the files at the end of the series; a drifted one
# fails the check, named.
bash "$SP_TOP/scripts/check-added-files.sh" "$tmp/manifest"
cp "$SP_FILES/$added/notes" "$tmp/notes.last"
echo drift >>"$SP_FILES/$added/notes"
if bash "$SP_TOP/scripts/check-added-files.sh" "$tmp/manifest" 2>"$tmp/err"; then
	die "check-added-files.sh passes a drifted copy"
fi
grep -q "^$added/notes: this repo's copy is not the file at the end of $SP_BRANCH" "$tmp/err" ||
	die "check-added-files.sh does not name the drifted copy: $(cat "$tmp/err")"

# A copy that a later edit cannot be undone on stops the apply, named.
sed -i 's/edited by the second patch/edited elsewhere/' "$SP_FILES/$added/notes"
if bash "$SP_TOP/scripts/apply-series.sh" "$tmp/manifest" 2>"$tmp/err"; then
	die "apply-series.sh adds a copy that three.diff does not undo on"
fi
grep -q "patch 1: Add: $added/notes: .* three.diff of patch 2 (block: series self-test, second patch) does not undo on it" "$tmp/err" ||
	die "unclear error for a copy that cannot be undone: $(cat "$tmp/err")"
cp "$tmp/notes.last" "$SP_FILES/$added/notes"

# A diff that does not apply must stop with the patch and base named.
sed -i 's/^-\(.\)/-X\1/; s/^ \(.\)/ X\1/' "$tmp/one.diff"
if bash "$SP_TOP/scripts/apply-series.sh" "$tmp/manifest" 2>"$tmp/err"; then
	die "a broken Edit applied"
fi
grep -q "patch 1 (block: series self-test, first patch): one.diff does not apply to Linux 6.12" "$tmp/err" ||
	die "unclear error for a broken Edit: $(cat "$tmp/err")"
say "series: machinery self-test passed"
