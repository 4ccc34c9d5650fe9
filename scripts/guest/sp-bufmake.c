// SPDX-License-Identifier: GPL-2.0
/*
 * sp-bufmake FILE SIZE: write FILE (on tmpfs) with SIZE bytes whose pages
 * are never physically adjacent to the page before them in the file, so
 * that a bio built on them has one segment a page on every boot and on
 * every kernel: the bench's buffers for the engines that pin the user's
 * pages at each I/O (guest job bench, nr_buffers).
 *
 * Each page of FILE is allocated between two pages of a scratch file;
 * /proc/self/pagemap (root) checks the result, and a page found right
 * after the one before it is freed and written again after another
 * scratch page, for a few rounds; the scratch file is then removed.
 * Prints the pages and the adjacent pairs left; exits 0 when there are
 * none, 2 when there are some (the caller tries again), 1 on an error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdbool.h>
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

/*
 * adjacent_pairs: pages of the mapping whose frame follows the previous
 * one's; each such page is marked in adj.
 */
static long adjacent_pairs(const volatile char *map, size_t pages, long psz,
			   bool *adj)
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
		adj[i] = i && entry == prev + 1;
		pairs += adj[i];
		prev = entry;
	}
	close(pm);
	return pairs;
}

/* rewrite_adjacent: give each marked page of fd a new frame, after a scratch page. */
static int rewrite_adjacent(int fd, int scratch, size_t pages, long psz,
			    const bool *adj, size_t *spare)
{
	char *page = malloc(psz);
	size_t i;

	if (!page)
		return -1;
	for (i = 0; i < pages; i++) {
		if (!adj[i])
			continue;
		memset(page, (int)(i & 0xff) | 1, psz);
		if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      i * psz, psz) ||
		    pwrite(scratch, page, psz, (*spare)++ * psz) != psz ||
		    pwrite(fd, page, psz, i * psz) != psz) {
			free(page);
			return -1;
		}
	}
	free(page);
	return 0;
}

/* Rounds of rewriting the pages found adjacent before giving up. */
#define REWRITE_ROUNDS	16

int main(int argc, char **argv)
{
	long psz = sysconf(_SC_PAGESIZE), pairs;
	char scratch_name[4096];
	size_t size, pages, spare;
	int fd, scratch, round;
	bool *adj;
	char *map;

	if (argc != 3 || !(size = strtoull(argv[2], NULL, 0)) || size % psz) {
		fprintf(stderr, "usage: sp-bufmake FILE SIZE (a multiple of the page size)\n");
		return 1;
	}
	pages = size / psz;
	spare = pages;
	adj = calloc(pages, sizeof(*adj));
	if (!adj)
		return fail("cannot allocate for", argv[1]);
	snprintf(scratch_name, sizeof(scratch_name), "%s.scratch", argv[1]);
	fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return fail("cannot create", argv[1]);
	scratch = open(scratch_name, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (scratch < 0)
		return fail("cannot create", scratch_name);
	if (write_interleaved(fd, scratch, pages, psz))
		return fail("cannot write", argv[1]);
	for (round = 0;; round++) {
		map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED)
			return fail("cannot map", argv[1]);
		errno = 0;
		pairs = adjacent_pairs(map, pages, psz, adj);
		munmap(map, size);
		if (pairs < 0)
			return fail("cannot read the page frames of", argv[1]);
		if (!pairs || round == REWRITE_ROUNDS)
			break;
		if (rewrite_adjacent(fd, scratch, pages, psz, adj, &spare))
			return fail("cannot rewrite pages of", argv[1]);
	}
	close(scratch);
	unlink(scratch_name);
	printf("%s: %d rounds of rewriting adjacent pages\n", argv[1], round);
	printf("%s: %zu pages, %ld physically adjacent to the one before\n",
	       argv[1], pages, pairs);
	return pairs ? 2 : 0;
}
