# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# Shared helpers for the stackpoll scripts.  Source it; do not run it.
#
# Layout under build/ (all generated, never committed):
#   kernel/base/src      git repo: the pristine base tree (branch "base")
#   kernel/patched/src   worktree of it: the series applied (branch "stackpoll")
#   kernel/<tree>/obj    O= build directory of that tree
#   initramfs/           guest userspace
#   vm/                  disk images of the test VM
#   logs/                every log, one file per step or VM run
#   series/              the exported, mailable patch series

SP_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SP_BUILD=${SP_BUILD:-$SP_TOP/build}
SP_LOGS=$SP_BUILD/logs
SP_KDIR=$SP_BUILD/kernel

# Identity used for the series commits, so that applying twice gives the
# same commits and the export carries a real Signed-off-by.
SP_AUTHOR_NAME=${SP_AUTHOR_NAME:-Stackpoll Developers}
SP_AUTHOR_EMAIL=${SP_AUTHOR_EMAIL:-stackpoll-dev@lists.example.org}
SP_DATE="2026-11-30T00:00:00+0000"
# The branch of the kernel repo that holds the applied series.
SP_BRANCH=${SP_BRANCH:-stackpoll}
# Where the files of Add: lines are taken from: this repo, which holds each
# at its version at the end of the series (test-series.sh uses its own).
SP_FILES=${SP_FILES:-$SP_TOP}

mkdir -p "$SP_LOGS"

say()  { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die()  { printf 'error: %s\n' "$*" >&2; exit 1; }

# sp_tree NAME: "base" or "patched"; BASE=1 in the environment picks base.
sp_tree() {
	if [ "${BASE:-0}" = 1 ]; then echo base; else echo patched; fi
}

sp_src() { echo "$SP_KDIR/$1/src"; }
sp_obj() { echo "$SP_KDIR/$1/obj"; }

# sp_git: git in the kernel repo with a fixed identity and date.
sp_git() {
	GIT_AUTHOR_NAME=$SP_AUTHOR_NAME GIT_AUTHOR_EMAIL=$SP_AUTHOR_EMAIL \
	GIT_COMMITTER_NAME=$SP_AUTHOR_NAME GIT_COMMITTER_EMAIL=$SP_AUTHOR_EMAIL \
	GIT_AUTHOR_DATE=$SP_DATE GIT_COMMITTER_DATE=$SP_DATE \
		git -c core.autocrlf=false -c advice.detachedHead=false "$@"
}

# sp_kmake SRC OBJ MAKE-ARG...: make in kernel tree SRC, output in OBJ, with
# ccache, in the environment of every kernel build here: ccache hits shared
# between the trees (same relative layout src/ obj/), and version strings
# that do not change from one rebuild to the next (LOCALVERSION set, even
# empty, so that setlocalversion does not append "+").
sp_kmake() {
	local src=$1 obj=$2

	shift 2
	CCACHE_BASEDIR=$SP_KDIR CCACHE_NOHASHDIR=1 \
	KBUILD_BUILD_USER=stackpoll KBUILD_BUILD_HOST=vm \
	KBUILD_BUILD_TIMESTAMP="$SP_DATE" LOCALVERSION='' \
		make -C "$src" O="$obj" ARCH=x86_64 CC="ccache gcc" \
		HOSTCC="ccache gcc" -j"$(nproc)" "$@"
}

# need_cmds CMD...: fail with the list of missing tools.
need_cmds() {
	local missing="" c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || missing="$missing $c"
	done
	[ -z "$missing" ] || die "missing tools:$missing (run: make deps)"
}

# run_logged LOG CMD...: run CMD with output in LOG; on failure show its tail.
run_logged() {
	local log=$1 ticker rc=0
	shift
	sp_ticker "${log##*/}" "$log" &
	ticker=$!
	"$@" >"$log" 2>&1 || rc=$?
	kill "$ticker" 2>/dev/null || true
	if [ "$rc" != 0 ]; then
		tail -n 40 "$log" >&2
		die "'$*' failed; full log: $log"
	fi
}

# sp_ticker LABEL FILE: in the background of a long step (kill it after),
# a line every minute with the last line of FILE, so that the step is seen
# to move.  Its stdout is not the caller's: a $(...) does not wait for it.
sp_ticker() {
	local n=0 s=''

	exec >/dev/null
	# Killed, it takes its sleep along: nothing it holds open outlives it.
	trap 'kill "$s" 2>/dev/null; exit 0' TERM
	while :; do
		sleep 60 2>/dev/null &
		s=$!
		wait "$s" || exit 0
		kill -0 $$ 2>/dev/null || exit 0
		n=$((n + 60))
		say "$1: $n s, last: $(tail -n 1 "$2" 2>/dev/null | tr -d '\r' | cut -c1-100)"
	done
}

# sp_manifest_entries MANIFEST: one line per Edit: or Add: of a patch,
# "N edit NAME" or "N add PATH" (patch N = 1, 2...), then "N count N" with
# N the number of patches.
sp_manifest_entries() {
	awk '
		/^#/ && !inbody { next }
		/^Cover: / { n = 0; inbody = 0; next }
		/^Subject: / { n++; inbody = 0; next }
		n == "" || n == 0 { next }
		!inbody && /^Edit: / { print n, "edit", substr($0, 7); next }
		!inbody && /^Add: / { print n, "add", substr($0, 6); next }
		!inbody && /^$/ { inbody = 1 }
		END { print n, "count", n }
	' "$1"
}

# sp_added_files PATH: the files under PATH of $SP_FILES that an Add: line
# adds: tracked or not, but not ignored (no build products).
sp_added_files() {
	git -C "$SP_FILES" ls-files --cached --others --exclude-standard -- "$1"
}
