#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dm-crypt polls end to end: it sends DM's clone itself to the NVMe poll
# queue, for a read to be decrypted where it completes, in the poller, and
# for a write with the data it encrypted in the submitter; up to 64 KiB a
# bio, more is kcryptd's work.  On Linux 6.12 every polled crypt I/O waits
# for the NVMe timeout (30 s); without the series' crypt patches it
# completes by interrupt.
. "$(dirname "$0")/lib.sh"

KEY=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef

dmp_require_root
dmp_require_cmds dmsetup
dmp_get_nvme_devs 1
nvme=${DMP_NVME[0]}

# crypt_check_crypto DESC DEV WHO COMPLETION VERIFY-ARGS...: polled I/O over
# all of DEV, data verified; WHO did the crypto: "in-place" (the poller or
# the submitter: kcryptd's work never ran) or "kcryptd" (it ran at least
# once an I/O: 64 times for 16 MiB in I/O of at most 256 KiB); COMPLETION:
# "polled" (no interrupt from the devices below) or "irq" (some).  One
# KTAP result.
crypt_check_crypto()
{
	local desc=$1 dev=$2 who=$3 completion=$4 ev=workqueue/workqueue_execute_start
	local addr filter n
	shift 4

	# A zeroed address (kptr_restrict) would match nothing, and prove nothing
	addr=$(awk '$3 == "kcryptd_crypt" { print $1; exit }' /proc/kallsyms)
	filter="function == 0x$addr"
	if [ -z "${addr//0/}" ] || ! dmp_count_start "$ev" common_pid "$filter"; then
		ktap_test_fail "$desc: cannot count kcryptd's work"
		return
	fi
	if ! dmp_verify_counted "$dev" "$@"; then
		dmp_count_stop "$ev" common_pid "$filter" >/dev/null
		ktap_test_fail "$desc: polled I/O failed or was slow"
		return
	fi
	n=$(dmp_count_stop "$ev" common_pid "$filter")
	echo "# $desc: $DMP_IRQS interrupts; kcryptd's work ran $n times"
	if [ "$completion" = polled ] && [ "$DMP_IRQS" -ne 0 ]; then
		ktap_test_fail "$desc: interrupts during polled I/O"
	elif [ "$completion" = irq ] && [ "$DMP_IRQS" -eq 0 ]; then
		ktap_test_fail "$desc: no interrupt: not sent by kcryptd"
	elif [ "$who" = in-place ] && [ "$n" -ne 0 ]; then
		ktap_test_fail "$desc: kcryptd did crypto the poller should"
	elif [ "$who" = kcryptd ] && [ "$n" -lt 64 ]; then
		ktap_test_fail "$desc: the poller did crypto kcryptd should"
	elif [ "$who" = in-place ]; then
		ktap_test_pass "$desc: in place, data verified, $DMP_IRQS interrupts"
	else
		ktap_test_pass "$desc: by kcryptd, data verified, $DMP_IRQS interrupts"
	fi
}

ktap_print_header
ktap_set_plan 19
# 16 MiB at 1 MiB into the namespace; a 4096-byte-sector table at 32 MiB.
dmp_dm_create crypt "0 32768 crypt aes-xts-plain64 $KEY 0 $nvme 2048" ||
	ktap_exit_fail_msg "cannot create dm-crypt"
dev=$DMP_NODE
# The submitter encrypts no more than 64 KiB a bio, the poller decrypts
# no more: it polls nothing else meanwhile.  kcryptd encrypts more, into a
# bio of its own sent unpolled, and decrypts more, polled.
crypt_check_crypto "crypt: polled writes up to 64 KiB" "$dev" in-place polled \
	-m write -b 512-64k -q 4 -S 201
crypt_check_crypto "crypt: polled writes over 64 KiB" "$dev" kcryptd irq \
	-m write -b 68k-256k -q 4 -S 201

# The namespace must hold ciphertext: no sector of it may carry the
# pattern (plaintext shows as sectors 2048 away), or the reads below would
# prove nothing about decryption.
out=$("$DMP_VERIFY" -I -m read -o 1M -s 16M -b 512 -q 8 -S 201 "$nvme" 2>&1)
if grep -q 'holds sector' <<<"$out"; then
	ktap_test_fail "crypt: ciphertext below: the namespace holds plaintext"
	grep -m 3 'holds sector' <<<"$out"
elif grep -q ': no pattern' <<<"$out"; then
	ktap_test_pass "crypt: ciphertext below"
else
	ktap_test_fail "crypt: ciphertext below: cannot read the namespace"
	echo "$out" | head -n 3 | sed 's/^/# /'
fi

dmp_check_polled "crypt: polled reads 512B-256k" "$dev" -m read -b 512-256k -q 4 -S 201
crypt_check_crypto "crypt: polled reads up to 64 KiB" "$dev" in-place polled \
	-m read -b 512-64k -q 4 -S 201
crypt_check_crypto "crypt: polled reads over 64 KiB" "$dev" kcryptd polled \
	-m read -b 68k-256k -q 4 -S 201
dmp_check_polled "crypt: polled reads 4k qd16" "$dev" -m read -b 4k -q 16 -S 201
dmp_check_irq "crypt: interrupt-driven reads" "$dev" -m read -b 4k -q 8 -S 201

# A second table over the same sectors, without workqueues: its polled
# reads must see the same data, and the first table, by interrupt, must
# read what its polled writes wrote.
dmp_dm_create crypt-nowq \
	"0 32768 crypt aes-xts-plain64 $KEY 0 $nvme 2048 2 no_read_workqueue no_write_workqueue" ||
	ktap_exit_fail_msg "cannot create dm-crypt without workqueues"
nowq=$DMP_NODE
dmp_check_polled "crypt: no_read_workqueue polled reads" "$nowq" \
	-m read -b 512-128k -q 4 -S 201
# Not even there does the poller decrypt more than 64 KiB in place: a
# clone may complete under a driver's lock.
crypt_check_crypto "crypt: no_read_workqueue polled reads over 64 KiB" "$nowq" kcryptd polled \
	-m read -b 68k-256k -q 4 -S 201
dmp_check_polled "crypt: no_write_workqueue polled writes" "$nowq" \
	-m write -b 512-256k -q 4 -S 203
dmp_check_irq "crypt: no_write_workqueue writes read by the first table" "$dev" \
	-m read -b 4k-64k -q 8 -S 203
# Interrupt-driven writes there are encrypted in io_uring's submitter
# too, with REQ_NOWAIT.
dmp_check_irq "crypt: no_write_workqueue interrupt-driven writes" "$nowq" \
	-m write -b 512-128k -q 8 -S 204
dmp_check_polled "crypt: no_write_workqueue writes read polled" "$dev" \
	-m read -b 4k-128k -q 4 -S 204

# same_cpu_crypt's worker runs on the CPU that queues it, the poller's:
# rather than wait for it, the poller does all the crypto of a polled bio.
dmp_dm_create crypt-same "0 32768 crypt aes-xts-plain64 $KEY 0 $nvme 2048 1 same_cpu_crypt" ||
	ktap_exit_fail_msg "cannot create dm-crypt with same_cpu_crypt"
crypt_check_crypto "crypt: same_cpu_crypt polled writes over 64 KiB" "$DMP_NODE" in-place polled \
	-m write -b 68k-256k -q 4 -S 205
crypt_check_crypto "crypt: same_cpu_crypt polled reads over 64 KiB" "$DMP_NODE" in-place polled \
	-m read -b 68k-256k -q 4 -S 205

# Zeroed first, so that an earlier run's data cannot pass for this one's.
dd if=/dev/zero of="$nvme" bs=1M seek=33 count=16 oflag=direct status=none
dmp_dm_create crypt-4k \
	"0 32768 crypt aes-xts-plain64 $KEY 0 $nvme 67584 1 sector_size:4096" ||
	ktap_exit_fail_msg "cannot create dm-crypt with 4096-byte sectors"
dmp_check_polled "crypt: 4096-byte sectors polled writes" "$DMP_NODE" \
	-m write -b 4k-64k -q 4 -S 202
dmp_check_polled "crypt: 4096-byte sectors polled reads" "$DMP_NODE" \
	-m read -b 4k-256k -q 4 -S 202

# Suspends while rings poll: DM holds bios and requeues those that hit
# BLK_STS_AGAIN, which crypt then sends by interrupt.
dmp_rings_under_load "crypt: suspend and resume" "$dev" 4 20 \
	dmp_dm_suspend_resume "${dev#/dev/mapper/}"
ktap_finished
