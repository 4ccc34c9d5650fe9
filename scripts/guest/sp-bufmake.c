// SPDX-License-Identifier: GPL-2.0
/*
 * sp-bufmake FILE SIZE: write FILE (on tmpfs) with SIZE bytes whose pages
 * are never physically adjacent to the page before them in the file, so
 * that a bio built on them has one segment a page on every boot and on
 * every kernel: the bench's buffers for the engines that pin the user's
 * pages at each I/O (guest job bench, nr_buffers).
 *
 * Each page of FILE is allocated between two pages of a scratch file,
 * which is then removed; /proc/self/pagemap (root) checks the result.
 * Prints the pages and the adjacent pairs found; exits 0 when there are
 * none, 2 when there are some (the caller tries again), 1 on an error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PFN_MASK	((1ULL << 55) - 1)
#define PAGE_PRESENT	(1ULL << 63)

static int fail(const char *what, const char *name)
{
	fprintf(stderr, "sp-bufmake: %s %s: %s\n", what, name, strerror(errno));
	return 1;
}

/* write_interleaved: each page of fd, then one of scratch, in file order. */
static int write_interleaved(int fd, int scratch, size_t pages, long psz)
{
	char *page = malloc(psz);
	size_t i;

	if (!page)
		return -1;
	for (i = 0; i < pages; i++) {
		memset(page, (int)(i & 0xff) | 1, psz);
		if (pwrite(fd, page, psz, i * psz) != psz ||
		    pwrite(scratch, page, psz, i * psz) != psz) {
			free(page);
			return -1;
		}
	}
	free(page);
	return 0;
}

/* adjacent_pairs: pages of the mapping whose frame follows the previous one's. */
static long adjacent_pairs(const volatile char *map, size_t pages, long psz)
{
	uint64_t entry, prev = 0;
	long pairs = 0;
	size_t i;
	int pm;

	pm = open("/proc/self/pagemap", O_RDONLY);
	if (pm < 0)
		return -1;
	for (i = 0; i < pages; i++) {
		(void)map[i * psz];
		if (pread(pm, &entry, sizeof(entry),
			  ((uintptr_t)map / psz + i) * sizeof(entry)) != sizeof(entry) ||
		    !(entry & PAGE_PRESENT) || !(entry & PFN_MASK)) {
			close(pm);
			errno = errno ? errno : EPERM;
			return -1;
		}
		entry &= PFN_MASK;
		if (i && entry == prev + 1)
			pairs++;
		prev = entry;
	}
	close(pm);
	return pairs;
}

int main(int argc, char **argv)
{
	long psz = sysconf(_SC_PAGESIZE), pairs;
	char scratch_name[4096];
	size_t size, pages;
	int fd, scratch;
	char *map;

	if (argc != 3 || !(size = strtoull(argv[2], NULL, 0)) || size % psz) {
		fprintf(stderr, "usage: sp-bufmake FILE SIZE (a multiple of the page size)\n");
		return 1;
	}
	pages = size / psz;
	snprintf(scratch_name, sizeof(scratch_name), "%s.scratch", argv[1]);
	fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return fail("cannot create", argv[1]);
	scratch = open(scratch_name, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (scratch < 0)
		return fail("cannot create", scratch_name);
	if (write_interleaved(fd, scratch, pages, psz))
		return fail("cannot write", argv[1]);
	close(scratch);
	unlink(scratch_name);
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return fail("cannot map", argv[1]);
	errno = 0;
	pairs = adjacent_pairs(map, pages, psz);
	if (pairs < 0)
		return fail("cannot read the page frames of", argv[1]);
	printf("%s: %zu pages, %ld physically adjacent to the one before\n",
	       argv[1], pages, pairs);
	return pairs ? 2 : 0;
}
