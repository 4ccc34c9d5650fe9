# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers of the tests that run polled I/O through dmp_fault, the
# fault-injecting stacked block device of fault/: load and unload it,
# set its knobs and check its counters.  Source lib.sh first.
#
# The module is looked for at DMPF_KO (default
# /lib/modules/stackpoll/dmp_fault.ko, where the stackpoll VM has it;
# scripts/build-module.sh builds it).  Without it the tests skip.

DMPF_KO=${DMPF_KO:-/lib/modules/stackpoll/dmp_fault.ko}
DMPF_SYS=/sys/module/dmp_fault
DMPF_PARAMS=$DMPF_SYS/parameters
DMPF_DEV=/dev/dmpfault0
DMPF_STATS="clones linked polled wq unpolled failed retried delayed stray stray_found
submit_delayed reset_poll reset_taken inflight"
# The bio slabs before the module was first loaded: none of its own may
# be left after it is unloaded.
DMPF_SLABS_BEFORE=
declare -A DMPF_SNAP

# The module sits on top of whatever lib.sh set up: unload it first.
dmp_on_exit 'dmpf_unload >/dev/null 2>&1'

dmpf_require_module()
{
	dmp_require_cmds insmod rmmod dmsetup
	# md linear on dmp_fault pieces (dmpf_md_linear_pieces)
	dmp_require_module md_mod
	[ -f "$DMPF_KO" ] ||
		dmp_skip_all "no $DMPF_KO (scripts/build-module.sh builds it)"
	[ ! -d "$DMPF_SYS" ] || dmp_skip_all "dmp_fault is loaded already"
}

# dmpf_md_linear_pieces N: md linear (no superblock) of N dm-linear pieces
# of 1 MiB of dmpfault0, so that most of md's member boundaries fall
# inside any region; DMP_NODE is the array.
dmpf_md_linear_pieces()
{
	local i members=()

	for ((i = 0; i < $1; i++)); do
		dmp_dm_create "piece$i" "0 2048 linear $DMPF_DEV $((i * 2048))" ||
			return 1
		members+=("$DMP_NODE")
	done
	dmp_md_build linear -- "${members[@]}"
}

dmpf_bio_slabs()
{
	(cd /sys/kernel/slab 2>/dev/null && printf '%s\n' bio-*) | sort
}

# dmpf_new_bio_slabs: bio slabs that were not there at the first load.
# Only new ones count: the slab of an md array stopped just before may
# still have been there then, and go later.
dmpf_new_bio_slabs()
{
	dmpf_bio_slabs | awk -v before="$DMPF_SLABS_BEFORE" '
		BEGIN { n = split(before, b, "\n"); for (i = 1; i <= n; i++) seen[b[i]] = 1 }
		!seen[$0]'
}

# dmpf_insmod PARAM=VALUE...: load the module; its messages on failure.
dmpf_insmod()
{
	local out

	[ -n "$DMPF_SLABS_BEFORE" ] || DMPF_SLABS_BEFORE=$(dmpf_bio_slabs)
	if ! out=$(insmod "$DMPF_KO" "$@" 2>&1); then
		echo "# insmod $*: ${out:-failed}"
		return 1
	fi
}

# dmpf_load LOWER [PARAM=VALUE...]: dmpfault0 on LOWER.
dmpf_load()
{
	local lower=$1
	shift

	dmpf_insmod "lower=$lower" "$@" || return 1
	[ -b "$DMPF_DEV" ] || { echo "# $DMPF_DEV is not a block device"; return 1; }
}

dmpf_unload()
{
	[ ! -d "$DMPF_SYS" ] || rmmod dmp_fault
}

# dmpf_set KNOB=VALUE...: set knobs at run time.
dmpf_set()
{
	local kv

	for kv in "$@"; do
		{ echo "${kv#*=}" >"$DMPF_PARAMS/${kv%%=*}"; } 2>/dev/null ||
			{ echo "# dmp_fault: cannot set $kv"; return 1; }
	done
}

# dmpf_knobs KNOB=VALUE...: every knob at its default but those given.
# The knobs change one by one, under I/O if there is any.  The module
# keeps fail_every and fail_status in one word, so a clone sees a pair
# that they had at some point: fail_every goes to 0 before fail_status
# changes, and fail_status is set before fail_every, so that no pair
# fails clones with the status of the other setting.
dmpf_knobs()
{
	local kv first=() rest=()

	for kv in "$@"; do
		case $kv in
		fail_status=*) first+=("$kv") ;;
		*) rest+=("$kv") ;;
		esac
	done
	dmpf_set clones=1 wq_every=0 nopoll_every=0 fail_every=0 \
		fail_status=eio delay_us=0 stray_poll=0 reset_poll=0 submit_delay_us=0 \
		"${first[@]}" "${rest[@]}"
}

dmpf_stat()
{
	cat "$DMPF_PARAMS/stat_$1"
}

dmpf_snapshot()
{
	local s

	for s in $DMPF_STATS; do
		DMPF_SNAP[$s]=$(dmpf_stat "$s")
	done
}

# dmpf_value NAME: a number for dmpf_check: a counter's change since the
# snapshot (inflight: its value), a count of the last run (ios, irqs,
# eio: completions that failed with EIO, maxlat: in us), or a number.
dmpf_value()
{
	case $1 in
	[0-9]*) echo "$1" ;;
	inflight) dmpf_stat inflight ;;
	ios) echo "$DMPF_IOS" ;;
	irqs) echo "$DMPF_IRQS" ;;
	eio) echo "$DMPF_EIO" ;;
	maxlat) echo "$DMPF_MAXLAT" ;;
	*) echo $(($(dmpf_stat "$1") - DMPF_SNAP[$1])) ;;
	esac
}

# dmpf_check DESC "COND..." VERIFY-ARGS...: write and read back with
# iopoll_verify on dmpfault0 (every I/O within DMP_MAX_LAT_MS, data
# verified) and check the CONDs (dmpf_conds) on its counters.  One KTAP
# result.
dmpf_check()
{
	local desc=$1 conds=$2 out rc=0 before re
	shift 2

	dmpf_snapshot
	re=$(dmp_irq_regex "$DMPF_DEV")
	before=$(dmp_irqs "$re")
	out=$("$DMP_VERIFY" -L "$DMP_MAX_LAT_MS" "$@" "$DMPF_DEV") || rc=$?
	DMPF_IRQS=$(($(dmp_irqs "$re") - before))
	echo "$out"
	DMPF_IOS=$(sed -n 's/.*: writes \([0-9]*\) reads \([0-9]*\) .*/\1 + \2/p' <<<"$out")
	DMPF_IOS=$((DMPF_IOS))
	DMPF_EIO=$(sed -n 's/.* errors [0-9]*\/\([0-9]*\) .*/\1/p' <<<"$out")
	DMPF_EIO=${DMPF_EIO:-0}
	DMPF_MAXLAT=$(sed -n 's/.* max_lat_us \([0-9]*\).*/\1/p' <<<"$out")
	DMPF_MAXLAT=${DMPF_MAXLAT:-0}
	echo "# ios=$DMPF_IOS irqs=$DMPF_IRQS eio=$DMPF_EIO counters:$(dmpf_counters)"
	if [ "$rc" != 0 ]; then
		ktap_test_fail "$desc: I/O failed, wrong data or slower than $DMP_MAX_LAT_MS ms"
	elif ! dmpf_conds "$conds"; then
		echo "# $desc: not true:$DMPF_BAD"
		ktap_test_fail "$desc: verified, $conds: not all true"
	else
		ktap_test_pass "$desc: verified, $conds"
	fi
}

# dmpf_counters: every counter's dmpf_value.
dmpf_counters()
{
	local c

	for c in $DMPF_STATS; do
		printf ' %s=%s' "$c" "$(dmpf_value "$c")"
	done
}

# dmpf_conds "COND...": true if every COND holds, NAME=VALUE, NAME>VALUE,
# NAME<VALUE, NAME>=VALUE or NAME<=VALUE, where either side is a
# dmpf_value; DMPF_BAD lists those that do not.
dmpf_conds()
{
	local c l r

	DMPF_BAD=
	for c in $1; do
		if ! [[ $c =~ ^([a-z0-9_]+)(\>=|\<=|=|\<|\>)([a-z0-9_]+)$ ]]; then
			DMPF_BAD="$DMPF_BAD bad-condition:$c"
			continue
		fi
		l=$(dmpf_value "${BASH_REMATCH[1]}")
		r=$(dmpf_value "${BASH_REMATCH[3]}")
		case ${BASH_REMATCH[2]} in
		=) [ "$l" -eq "$r" ] ;;
		\<) [ "$l" -lt "$r" ] ;;
		\>) [ "$l" -gt "$r" ] ;;
		\>=) [ "$l" -ge "$r" ] ;;
		\<=) [ "$l" -le "$r" ] ;;
		esac || DMPF_BAD="$DMPF_BAD $c($l,$r)"
	done
	[ -z "$DMPF_BAD" ]
}

# dmpf_claimable DEV: DEV can be claimed exclusively (dm-linear on it).
dmpf_claimable()
{
	local name=$DMP_PREFIX-claim

	dmsetup create "$name" --noudevsync --table "0 8 linear $1 0" >/dev/null 2>&1 ||
		return 1
	dmsetup remove --retry "$name" >/dev/null 2>&1
}

# dmpf_check_unload DESC LOWER: rmmod succeeds and leaves nothing behind:
# no clone in flight before, no module, disk, holder link, workqueue
# rescuer or new bio slab after, and LOWER free to open
# exclusively again.  One KTAP result.  Needs dmsetup.
dmpf_check_unload()
{
	local desc=$1 lower=$2 why="" detail="" inflight refcnt holders out

	inflight=$(dmpf_stat inflight)
	refcnt=$(cat "$DMPF_SYS/refcnt")
	holders=$(dmp_sysfs "$lower")/holders
	if ! out=$(rmmod dmp_fault 2>&1); then
		why="rmmod failed" detail="refcnt $refcnt: $out"
	elif [ "$inflight" != 0 ]; then
		why="clones in flight before unload" detail="$inflight clones in flight"
	elif [ -e "$DMPF_SYS" ] || [ -e /sys/block/dmpfault0 ] || [ -e "$DMPF_DEV" ]; then
		why="module or disk still there"
	elif [ -n "$(ls "$holders")" ]; then
		why="the device below still has holders"
		detail="$lower: holders $(ls "$holders")"
	elif grep -qsE 'R-dmp_fault|\+dmp_fault' /proc/[0-9]*/comm; then
		# The rescuer, or a kworker running our work; kworkers that
		# ran some before keep "-dmp_fault" in their names.
		why="a dmp_fault workqueue thread is left"
	elif [ -n "$(dmpf_new_bio_slabs)" ]; then
		why="bio slabs left" detail="$(dmpf_new_bio_slabs | tr '\n' ' ')"
	elif ! dmpf_claimable "$lower"; then
		why="the device below is still claimed" detail="$lower"
	fi
	if [ -n "$why" ]; then
		[ -z "$detail" ] || echo "# $desc: ${detail//$'\n'/ }"
		ktap_test_fail "$desc: $why"
	else
		ktap_test_pass "$desc: rmmod clean, nothing left"
	fi
}

# dmpf_under_load DESC LOWER KNOBS RINGS CYCLES CMD...: dmp_fault on LOWER
# with KNOBS (words KNOB=VALUE) under dmp_rings_under_load, then
# dmpf_check_unload: two KTAP results, both skipped without the module.
# For the reliability tests, which run it after DM and md.
dmpf_under_load()
{
	local desc=$1 lower=$2 knobs=$3 rings=$4 cycles=$5

	shift 5
	if [ ! -f "$DMPF_KO" ]; then
		ktap_test_skip "dmp_fault: $desc: no $DMPF_KO"
		ktap_test_skip "dmp_fault: $desc: unload: no $DMPF_KO"
		return
	fi
	# shellcheck disable=SC2086 # a word list
	dmpf_load "$lower" $knobs || ktap_exit_fail_msg "cannot load dmp_fault on $lower"
	dmp_rings_under_load "dmp_fault ($knobs): $desc" "$DMPF_DEV" "$rings" "$cycles" "$@"
	dmpf_check_unload "dmp_fault after $desc" "$lower"
}
