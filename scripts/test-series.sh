#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Self-test of the series machinery on a throwaway two-patch series that
# uses every manifest feature (Edit, Add, Kconfig splice, a patch that
# builds on the one before): apply, export, git am onto a fresh base,
# same tree; and an Edit that does not apply must fail naming the patch
# and the base version.  Works on its own branch; the real series is
# left alone.
set -eu
. "$(dirname "$0")/lib.sh"

repo=$(sp_src base)
tmp=$(mktemp -d)
export SP_BRANCH=series-selftest SP_KCONFIG=$tmp/Kconfig
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
Add: tools/testing/selftests/dm-poll/settings
Kconfig: block/Kconfig STACKPOLL_SERIES_SELFTEST BLK_DEV_ZONED

First.

Subject: block: series self-test, second patch
Edit: two.diff

Second, on top of the first.
MANIFEST
# The second edit only applies on top of the first.
{
	echo "diff --git a/block/Kconfig.iosched b/block/Kconfig.iosched"
	sed '2a # series self-test: second edit' "$tmp/iosched" >"$tmp/iosched2"
	diff -u --label a/block/Kconfig.iosched --label b/block/Kconfig.iosched \
		"$tmp/iosched" "$tmp/iosched2" || true
} >"$tmp/two.diff"

bash "$SP_TOP/scripts/apply-series.sh" "$tmp/manifest"
[ "$(git -C "$repo" rev-list --count "base..$SP_BRANCH")" = 2 ] ||
	die "expected 2 commits on $SP_BRANCH"
git -C "$repo" show "$SP_BRANCH:block/Kconfig" |
	awk '/^config BLK_DEV_ZONED/ { z = NR } /^config STACKPOLL_SERIES_SELFTEST/ { s = NR }
	     /^config BLK_DEV_THROTTLING/ { t = NR } END { exit !(z && z < s && s < t) }' ||
	die "Kconfig entry not spliced after BLK_DEV_ZONED"
git -C "$repo" show "$SP_BRANCH:block/Kconfig.iosched" | grep -q 'second edit' ||
	die "second edit missing"
git -C "$repo" cat-file -e "$SP_BRANCH:tools/testing/selftests/dm-poll/settings" ||
	die "added file missing"
git -C "$repo" log -1 --format=%B "$SP_BRANCH" | grep -q '^Signed-off-by: ' ||
	die "no Signed-off-by"

SP_CHECKPATCH=0 bash "$SP_TOP/scripts/export-series.sh" "$tmp/series" >/dev/null
grep -q '^Subject: \[PATCH 6.12 0/2\] Series machinery self-test' "$tmp"/series/0000-*.patch ||
	die "cover letter subject not filled in"
bash "$SP_TOP/scripts/verify-series.sh" "$tmp/series"

# A diff that does not apply must stop with the patch and base named.
sed -i 's/^-\(.\)/-X\1/; s/^ \(.\)/ X\1/' "$tmp/one.diff"
if bash "$SP_TOP/scripts/apply-series.sh" "$tmp/manifest" 2>"$tmp/err"; then
	die "a broken Edit applied"
fi
grep -q "patch 1 (block: series self-test, first patch): one.diff does not apply to Linux 6.12" "$tmp/err" ||
	die "unclear error for a broken Edit: $(cat "$tmp/err")"
say "series: machinery self-test passed"
