# SPDX-License-Identifier: GPL-2.0
# stackpoll: polled I/O through stacked block devices.
#
#   make            build, boot, fio --hipri through /dev/mapper and /dev/md: a table
#   make check      the tests: host checks and the dm-poll kselftests in the VM
#   make kernel     build the kernel only; prints the bzImage path
#   make series     export the mailable series to build/series/ and verify it
#   make bench      CPU cost per I/O, base against patched, under QEMU -icount
#                   (SECTION=noregress: only its interrupt-driven no-regression rows;
#                   with STACKS="dm_striped_again ...", only those stacks, merged)
#   make profile    kernel functions by instructions per I/O, raw and STACK=...
#   make bisect     build the kernel at every patch of the series
#   make deb        Debian packages of the patched kernel, Debian's config (real machines)
#   make deps       install what the scripts need (apt-get)
#   make clean      remove build/ (the kernel trees, images, logs)
#
# BASE=1 does the same with the unpatched base kernel.  KSRC=/path/to/linux
# takes the base from a v6.12.y git tree instead of linux-source-6.12.
# TESTS="a.sh b.sh" limits make check to those kselftests.

SCRIPTS := scripts

.PHONY: all demo check tree kernel series bench profile bisect deb deps clean

all: demo

demo:
	@bash $(SCRIPTS)/demo.sh

check:
	@bash $(SCRIPTS)/check.sh

# The base tree with the series applied on it.
tree:
	@bash $(SCRIPTS)/deps.sh
	@bash $(SCRIPTS)/base-tree.sh
	@bash $(SCRIPTS)/apply-series.sh

kernel: tree
	@bash $(SCRIPTS)/build-kernel.sh

series: tree
	@bash $(SCRIPTS)/export-series.sh
	@bash $(SCRIPTS)/verify-series.sh

bench:
	@bash $(SCRIPTS)/bench.sh

profile:
	@bash $(SCRIPTS)/profile.sh

bisect: tree
	@bash $(SCRIPTS)/build-each.sh

deb: tree
	@bash $(SCRIPTS)/deb.sh

deps:
	@bash $(SCRIPTS)/deps.sh

clean:
	rm -rf build
