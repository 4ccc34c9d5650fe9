#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot a kernel in the test VM (QEMU TCG, 2 CPUs, two NVMe controllers
# with poll queues, a multi-queue virtio-blk disk; or another --machine),
# run one guest job and bring its output back.
#
# Usage: vm-run.sh [options] KERNEL JOB [JOB-ARGS...]
#   --name NAME      log name (default JOB); logs are build/logs/NAME.*
#   --timeout SEC    hard limit for the whole VM run (default 1800)
#   --icount         deterministic guest time (-icount shift=0,sleep=off):
#                    guest time counts guest instructions
#   --append ARGS    more kernel command line (e.g. panic_on_warn=1)
#   --machine SHAPE  the VM's devices (scripts/vm-machines says which
#                    kselftests need which):
#                    default    as above
#                    multipath  4 CPUs and one poll queue per NVMe
#                               controller (nvme.poll_queues=1); two plain
#                               controllers as in the default; an NVMe
#                               subsystem of two controllers sharing one
#                               namespace (a multipath head,
#                               nvme_core.multipath=Y); a controller with
#                               two 4096-byte-LBA namespaces; one with two
#                               namespaces that carry protection
#                               information (8 bytes of metadata, Type 1,
#                               in a separate buffer); no virtio
#                    isolated   the default machine with its last CPU
#                               isolated (isolcpus=), as a real-time
#                               poller's CPU is on a real machine
#
# Output: build/logs/NAME.console (serial console, kernel log) and
# build/logs/NAME.out (the job's output, from the second serial port).
# Exit status: the job's, or 1 if the VM timed out, the guest died before
# reporting, or the kernel log shows an oops, WARN, hung task, soft lockup
# or NVMe timeout (scripts/guest/kernel-log-errors); those are also
# written to build/logs/NAME.trouble.
#
# SP_VM_SLOT=S in the environment gives the run disk images of its own
# (build/vm/S/), so that runs in different slots may overlap.
set -eu
. "$(dirname "$0")/lib.sh"

name='' timeout=1800 icount='' extra='' machine=default
while [ $# -gt 0 ]; do
	case $1 in
	--name) name=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--icount) icount=1; shift ;;
	--append) extra=$2; shift 2 ;;
	--machine) machine=$2; shift 2 ;;
	--) shift; break ;;
	-*) die "vm-run.sh: unknown option $1" ;;
	*) break ;;
	esac
done
[ $# -ge 2 ] || die "usage: vm-run.sh [options] KERNEL JOB [JOB-ARGS...]"
kernel=$1 job=$2
shift 2
name=${name:-$job}
initrd=$SP_BUILD/initramfs/initramfs.cpio
[ -f "$kernel" ] || die "no kernel image at $kernel"
[ -f "$initrd" ] || die "no initramfs at $initrd (run scripts/initramfs.sh)"
need_cmds qemu-system-x86_64 timeout
case $machine in
default | isolated) images='nvme0 nvme1 virtio0' ;;
multipath) images='nvme0 nvme1 mpath0 n4k0 n4k1 pi0 pi1' ;;
*) die "vm-run.sh: unknown machine '$machine' (default, multipath, isolated)" ;;
esac

vm=$SP_BUILD/vm${SP_VM_SLOT:+/$SP_VM_SLOT}
mkdir -p "$vm"
# One VM at a time per slot: the slot's disk images are shared.
exec 9>"$vm/lock"
flock -n 9 || die "another test VM is running in this slot (lock $vm/lock; see SP_VM_SLOT)"

# Fresh sparse disks every run, so no run sees another's data.
for img in $images; do
	rm -f "$vm/$img.img"
	truncate -s 1G "$vm/$img.img"
done

console=$SP_LOGS/$name.console
out=$SP_LOGS/$name.out
rm -f "$console" "$out"

# The job's arguments travel as /jobargs, one per line, in a second cpio
# archive appended to the initramfs (the kernel unpacks both).
(
	cd "$vm" && rm -rf args && mkdir args && cd args &&
	{ [ $# -eq 0 ] || printf '%s\n' "$@"; } >jobargs &&
	echo jobargs | cpio -o -H newc --quiet
) >"$vm/args.cpio"
# The kernel's modules (build-kernel.sh) and the out-of-tree test modules
# built for it (build-module.sh), in its obj directory, join the
# initramfs the same way.
kobj=${kernel%/arch/x86/boot/bzImage}
[ -f "$kobj/kernel-modules.cpio" ] ||
	die "no $kobj/kernel-modules.cpio: the kernel's modules (run scripts/build-kernel.sh)"
modules_cpio=$kobj/stackpoll-modules.cpio
[ -f "$modules_cpio" ] || modules_cpio=
cat "$initrd" "$vm/args.cpio" "$kobj/kernel-modules.cpio" ${modules_cpio:+"$modules_cpio"} \
	>"$vm/initrd.cpio"
# More CPUs than poll queues in the multipath machine: each controller's
# one poll queue serves all four.  Its guest waits for eight namespaces:
# two plain, the two paths of the shared one (the controllers of a
# subsystem share its serial number), the two 4Kn ones and the two with
# protection information, and for one multipath head.
nvme_args="nvme.poll_queues=2 virtio_blk.poll_queues=1" ns_args=sp.nvme=2 smp=2
if [ "$machine" = multipath ]; then
	nvme_args="nvme.poll_queues=1 nvme_core.multipath=Y" ns_args="sp.nvme=8 sp.nvme_heads=1" smp=4
fi
# 256 MiB of the RAM at 1 GiB is legacy persistent memory (/dev/pmem0,
# with nd_e820 and nd_pmem): dm-writecache's pmem mode.
append="console=ttyS0 panic=-1 loglevel=6 slab_nomerge memmap=256M!1G"
append="$append $nvme_args"
append="$append null_blk.nr_devices=0 null_blk.poll_queues=2"
append="$append $ns_args sp.job=$job${extra:+ $extra}"
[ "$machine" = isolated ] && append="$append isolcpus=$((smp - 1))"

accel=(-accel tcg)
[ -n "$icount" ] && accel=(-accel "tcg,thread=single" -icount "shift=0,sleep=off")

qemu=(qemu-system-x86_64 "${accel[@]}" -cpu max -smp "$smp" -m 2G
	-nodefaults -display none -no-reboot
	-kernel "$kernel" -initrd "$vm/initrd.cpio" -append "$append"
	-serial "file:$console" -serial "file:$out"
	-drive "if=none,id=nvm0,format=raw,cache=unsafe,file=$vm/nvme0.img"
	-device "nvme,serial=spnvme0,drive=nvm0"
	-drive "if=none,id=nvm1,format=raw,cache=unsafe,file=$vm/nvme1.img"
	-device "nvme,serial=spnvme1,drive=nvm1")
if [ "$machine" != multipath ]; then
	qemu+=(-drive "if=none,id=vd0,format=raw,cache=unsafe,file=$vm/virtio0.img"
		-device "virtio-blk-pci,drive=vd0,num-queues=2")
else
	lbs=logical_block_size=4096,physical_block_size=4096
	qemu+=(-device "nvme-subsys,id=mpsub,nqn=nqn.2026-12.org.example:spmpath"
		-device "nvme,serial=spmpath,subsys=mpsub"
		-device "nvme,serial=spmpath,subsys=mpsub"
		-drive "if=none,id=mp0,format=raw,cache=unsafe,file=$vm/mpath0.img"
		-device "nvme-ns,drive=mp0,nsid=1,shared=on"
		-device "nvme,serial=spnvme4k,id=nvm4k"
		-drive "if=none,id=n4k0,format=raw,cache=unsafe,file=$vm/n4k0.img"
		-device "nvme-ns,drive=n4k0,bus=nvm4k,nsid=1,$lbs"
		-drive "if=none,id=n4k1,format=raw,cache=unsafe,file=$vm/n4k1.img"
		-device "nvme-ns,drive=n4k1,bus=nvm4k,nsid=2,$lbs"
		-device "nvme,serial=spnvmepi,id=nvmpi"
		-drive "if=none,id=pi0,format=raw,cache=unsafe,file=$vm/pi0.img"
		-device "nvme-ns,drive=pi0,bus=nvmpi,nsid=1,ms=8,mset=0,pi=1"
		-drive "if=none,id=pi1,format=raw,cache=unsafe,file=$vm/pi1.img"
		-device "nvme-ns,drive=pi1,bus=nvmpi,nsid=2,ms=8,mset=0,pi=1")
fi

say "vm[$name]: booting $kernel ($machine), job $job${*:+ $*} (console: $console)"
start=$(date +%s)
rc=0
sp_ticker "vm[$name]" "$console" 9>&- &
ticker=$!
# timeout runs in a process group of its own, which a ^C does not reach:
# ending this script ends the VM.
timeout -k 10 "$timeout" "${qemu[@]}" </dev/null >"$SP_LOGS/$name.qemu" 2>&1 &
qpid=$!
trap 'kill -TERM "$qpid" "$ticker" 2>/dev/null' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
wait "$qpid" || rc=$?
trap - EXIT INT TERM
kill "$ticker" 2>/dev/null || true
elapsed=$(($(date +%s) - start))
[ "$rc" = 0 ] || [ "$rc" = 124 ] ||
	{ cat "$SP_LOGS/$name.qemu" >&2; die "vm[$name]: qemu failed ($rc)"; }

# Anything wrong with the run, besides the job's own result, goes to
# NAME.trouble, which check.sh reports as a failure of its own.
trouble=$SP_LOGS/$name.trouble
: >"$trouble"
[ "$rc" = 124 ] && echo "vm[$name]: timed out after $timeout s" >>"$trouble"
status=$(tail -n 1 "$out" 2>/dev/null | tr -d '\r' | sed -n 's/^STACKPOLL-EXIT \([0-9]*\)$/\1/p')
if [ -z "$status" ]; then
	{
		echo "vm[$name]: the guest died before reporting an exit status; console tail:"
		tail -n 30 "$console"
	} >>"$trouble"
	status=1
fi
problems=$(grep -nE "$(cat "$SP_TOP/scripts/guest/kernel-log-errors")" "$console" |
	head -n 20 || true)
if [ -n "$problems" ]; then
	{
		echo "vm[$name]: the guest kernel log shows trouble:"
		echo "$problems"
	} >>"$trouble"
	[ "$status" != 0 ] || status=1
fi
cat "$trouble" >&2
say "vm[$name]: done in $elapsed s, status $status"
exit "$status"
