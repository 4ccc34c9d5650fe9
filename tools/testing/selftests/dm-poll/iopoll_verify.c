// SPDX-License-Identifier: GPL-2.0
/*
 * iopoll_verify - write a pattern to a block device with io_uring and read
 * it back, polled (IORING_SETUP_IOPOLL, O_DIRECT) or interrupt driven, and
 * check the result of every completion.
 *
 * Every 512-byte sector carries its own sector number (with -P, that of the
 * mapping above it) and the run's seed, followed by pseudo-random filler
 * derived from both, so data that lands on the wrong sector, is torn, or is
 * stale from another run is caught no matter which I/O sizes wrote or read
 * it.
 *
 * Exit status follows kselftest: 0 pass, 1 fail, 4 skip.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <getopt.h>
#include <signal.h>
#include <liburing.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SECTOR		512
#define MAGIC		0x53504f4cU	/* "SPOL" */
#define KSFT_PASS	0
#define KSFT_FAIL	1
#define KSFT_SKIP	4
#define MAX_ALLOW	4

struct opts {
	const char *dev;
	bool do_write, do_read;
	bool expect_zeros;
	bool iopoll;
	bool fixed;
	bool async;	/* IOSQE_ASYNC: issued from io-wq, without IOCB_NOWAIT */
	bool inline_only;	/* -W: no I/O may go to an io-wq worker */
	bool dsync;	/* -D: O_DSYNC, writes are REQ_FUA */
	bool file;	/* -f: a regular file on a filesystem, not a device */
	unsigned int qd;
	unsigned long long offset, size;
	unsigned int bs_min, bs_max;
	unsigned int lbs;	/* the device's logical block size */
	unsigned int seed;
	/* -P: the sector numbers in the pattern are the device's plus this */
	long long pattern_shift;
	/* -R: created once an I/O has completed with its data */
	const char *ready_file;
	int expect_errno;
	/* I/O may fail with these; what it missed goes unchecked */
	int allow_errno[MAX_ALLOW];
	unsigned int nr_allow;
	unsigned int max_lat_ms;
	unsigned int time_limit_s;	/* the whole run; 0: none */
};

struct slot {
	void *buf;
	unsigned long long off;
	unsigned int len;
	struct timespec start;
	bool busy;
};

struct stats {
	unsigned long long ios, bytes, errors, allowed, max_lat_us, total_lat_us;
};

/* Sectors a write failed to reach with the allowed errno: not verified. */
static unsigned char *unwritten;

static unsigned long long xorshift64(unsigned long long *s)
{
	unsigned long long x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static unsigned long long filler_seed(unsigned int seed, unsigned long long sector)
{
	return (sector + 1) * 0x9e3779b97f4a7c15ULL ^ ((unsigned long long)seed << 32 | seed);
}

static void fill_sector(unsigned char *p, unsigned int seed, unsigned long long sector)
{
	unsigned long long s = filler_seed(seed, sector);
	unsigned int magic = MAGIC;
	int i;

	memcpy(p, &magic, 4);
	memcpy(p + 4, &seed, 4);
	memcpy(p + 8, &sector, 8);
	for (i = 16; i < SECTOR; i += 8) {
		unsigned long long v = xorshift64(&s);

		memcpy(p + i, &v, 8);
	}
}

/* Returns true if the sector holds what fill_sector() wrote. */
static bool check_sector(const unsigned char *p, unsigned int seed, unsigned long long sector)
{
	unsigned char want[SECTOR];
	unsigned int magic, got_seed;
	unsigned long long got_sector;

	fill_sector(want, seed, sector);
	if (!memcmp(p, want, SECTOR))
		return true;
	memcpy(&magic, p, 4);
	memcpy(&got_seed, p + 4, 4);
	memcpy(&got_sector, p + 8, 8);
	if (magic != MAGIC)
		printf("# sector %llu: no pattern (stale or torn data)\n",
		       sector);
	else if (got_sector != sector || got_seed != seed)
		printf("# sector %llu: holds sector %llu of seed %u (misdirected or stale)\n",
		       sector, got_sector, got_seed);
	else
		printf("# sector %llu: header right, payload corrupt\n",
		       sector);
	return false;
}

/* The sector number the pattern gives the device's byte offset OFF. */
static unsigned long long pattern_sector(const struct opts *o, unsigned long long off)
{
	return off / SECTOR + o->pattern_shift;
}

static unsigned long long elapsed_us(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1000000ULL +
	       (b.tv_nsec - a->tv_nsec) / 1000;
}

static unsigned int pick_len(const struct opts *o, unsigned long long *rng,
			     unsigned long long remaining)
{
	unsigned long long len = o->bs_min;
	unsigned int steps = (o->bs_max - o->bs_min) / o->lbs;

	if (steps)
		len += (xorshift64(rng) % (steps + 1)) * o->lbs;
	return len < remaining ? len : remaining;
}

static void prep(struct io_uring_sqe *sqe, const struct opts *o, int fd,
		 struct slot *s, unsigned int idx, bool write)
{
	if (o->fixed && write)
		io_uring_prep_write_fixed(sqe, fd, s->buf, s->len, s->off, idx);
	else if (o->fixed)
		io_uring_prep_read_fixed(sqe, fd, s->buf, s->len, s->off, idx);
	else if (write)
		io_uring_prep_write(sqe, fd, s->buf, s->len, s->off);
	else
		io_uring_prep_read(sqe, fd, s->buf, s->len, s->off);
	io_uring_sqe_set_data64(sqe, idx);
	if (o->async)
		sqe->flags |= IOSQE_ASYNC;
}

/* Handle one completion; returns false on a failed check. */
/* Whether a completion with result @res failed with an errno -E allows. */
static bool errno_allowed(const struct opts *o, int res)
{
	unsigned int i;

	for (i = 0; i < o->nr_allow; i++)
		if (res == -o->allow_errno[i])
			return true;
	return false;
}

/* -R: tell whoever waits for the load that it is under way; once. */
static void mark_ready(const struct opts *o)
{
	static bool marked;
	int fd;

	if (marked)
		return;
	fd = open(o->ready_file, O_WRONLY | O_CREAT, 0644);
	if (fd >= 0)
		close(fd);
	marked = true;
}

static bool complete(const struct opts *o, struct slot *s, int res,
		     bool write, struct stats *st)
{
	unsigned long long lat = elapsed_us(&s->start);
	bool ok = true;
	unsigned int i;

	s->busy = false;
	st->ios++;
	st->total_lat_us += lat;
	if (lat > st->max_lat_us)
		st->max_lat_us = lat;
	if (o->max_lat_ms && lat > o->max_lat_ms * 1000ULL) {
		printf("# %s at %llu len %u took %llu us (limit %u ms)\n",
		       write ? "write" : "read", s->off, s->len, lat, o->max_lat_ms);
		ok = false;
	}
	if (o->expect_errno) {
		if (res != -o->expect_errno) {
			printf("# %s at %llu: res %d, expected -%s\n",
			       write ? "write" : "read", s->off, res,
			       strerrorname_np(o->expect_errno));
			ok = false;
		}
		goto out;
	}
	if (errno_allowed(o, res)) {
		st->allowed++;
		if (write)
			memset(unwritten + (s->off - o->offset) / SECTOR, 1,
			       s->len / SECTOR);
		goto out;
	}
	if (res != (int)s->len) {
		printf("# %s at %llu len %u: res %d (%s)\n",
		       write ? "write" : "read", s->off, s->len, res,
		       res < 0 ? strerror(-res) : "short I/O");
		ok = false;
		goto out;
	}
	st->bytes += s->len;
	if (o->ready_file)
		mark_ready(o);
	if (!write && o->expect_zeros) {
		for (i = 0; i < s->len; i++)
			if (((unsigned char *)s->buf)[i]) {
				printf("# read at %llu: byte %u is not zero\n",
				       s->off, i);
				ok = false;
				break;
			}
	} else if (!write) {
		for (i = 0; i < s->len / SECTOR; i++)
			if (!unwritten[(s->off - o->offset) / SECTOR + i] &&
			    !check_sector((unsigned char *)s->buf + i * SECTOR,
					  o->seed, pattern_sector(o, s->off) + i)) {
				ok = false;
				break;
			}
	}
out:
	if (!ok)
		st->errors++;
	return ok;
}

/* One pass over the region: writes the pattern or reads and checks it. */
static int run_pass(const struct opts *o, struct io_uring *ring, int fd,
		    struct slot *slots, bool write, struct stats *st)
{
	unsigned long long rng = o->seed * 2654435761ULL + (write ? 1 : 2);
	unsigned long long next = o->offset, end = o->offset + o->size;
	unsigned int inflight = 0, i;
	struct io_uring_cqe *cqe;
	int ret;

	while (next < end || inflight) {
		for (i = 0; i < o->qd && next < end; i++) {
			struct slot *s = &slots[i];
			struct io_uring_sqe *sqe;
			unsigned int k;

			if (s->busy)
				continue;
			sqe = io_uring_get_sqe(ring);
			if (!sqe)
				break;
			s->off = next;
			s->len = pick_len(o, &rng, end - next);
			next += s->len;
			if (write)
				for (k = 0; k < s->len / SECTOR; k++)
					fill_sector((unsigned char *)s->buf + k * SECTOR,
						    o->seed, pattern_sector(o, s->off) + k);
			else
				memset(s->buf, 0xa5, s->len);
			prep(sqe, o, fd, s, i, write);
			s->busy = true;
			clock_gettime(CLOCK_MONOTONIC, &s->start);
			inflight++;
		}
		ret = io_uring_submit_and_wait(ring, 1);
		if (ret < 0) {
			printf("# io_uring_submit_and_wait: %s\n", strerror(-ret));
			return -1;
		}
		while (io_uring_peek_cqe(ring, &cqe) == 0) {
			unsigned int idx = io_uring_cqe_get_data64(cqe);

			if (idx >= o->qd || !slots[idx].busy) {
				printf("# bogus completion user_data %u\n", idx);
				return -1;
			}
			complete(o, &slots[idx], cqe->res, write, st);
			io_uring_cqe_seen(ring, cqe);
			inflight--;
		}
	}
	return 0;
}

/*
 * -f: the size of a regular file, and the alignment its filesystem asks
 * of direct I/O (statx STATX_DIOALIGN), which plays the device's
 * logical block size.
 */
static int open_file_size(const struct opts *o, int fd,
			  unsigned long long *size, unsigned int *align)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_SIZE | STATX_TYPE | STATX_DIOALIGN,
		  &stx)) {
		printf("# statx %s: %s\n", o->dev, strerror(errno));
		return -1;
	}
	if (!S_ISREG(stx.stx_mode)) {
		printf("# %s is not a regular file (-f)\n", o->dev);
		return -1;
	}
	if (!(stx.stx_mask & STATX_DIOALIGN) || !stx.stx_dio_offset_align) {
		printf("# %s: its filesystem reports no direct I/O alignment\n", o->dev);
		return -1;
	}
	/* A tail shorter than the alignment cannot be read with O_DIRECT. */
	*size = stx.stx_size / stx.stx_dio_offset_align * stx.stx_dio_offset_align;
	*align = stx.stx_dio_offset_align;
	return 0;
}

static int open_device(struct opts *o, unsigned long long *dev_size)
{
	unsigned int lbs = SECTOR;
	struct stat stbuf;
	int fd;

	fd = open(o->dev, (o->do_write ? O_RDWR : O_RDONLY) | O_DIRECT |
		  (o->dsync ? O_DSYNC : 0));
	if (fd < 0) {
		printf("# open %s: %s\n", o->dev, strerror(errno));
		return -1;
	}
	/*
	 * Without -f, never let a missing device node turn into a regular
	 * file on devtmpfs: the test would pass without touching any device.
	 */
	if (o->file) {
		if (open_file_size(o, fd, dev_size, &lbs)) {
			close(fd);
			return -1;
		}
	} else if (fstat(fd, &stbuf) || !S_ISBLK(stbuf.st_mode)) {
		printf("# %s is not a block device\n", o->dev);
		close(fd);
		return -1;
	} else if (ioctl(fd, BLKGETSIZE64, dev_size) || ioctl(fd, BLKSSZGET, &lbs)) {
		printf("# %s: size ioctls: %s\n", o->dev, strerror(errno));
		close(fd);
		return -1;
	}
	o->lbs = lbs;
	if (o->bs_min % lbs || o->bs_max % lbs || o->offset % lbs || o->size % lbs) {
		printf("# %s: sizes and offset must be multiples of %u\n",
		       o->dev, lbs);
		close(fd);
		return -1;
	}
	return fd;
}

static int setup_buffers(const struct opts *o, struct io_uring *ring,
			 struct slot *slots)
{
	struct iovec *iov = calloc(o->qd, sizeof(*iov));
	unsigned int i;
	int ret = 0;

	if (!iov)
		return -ENOMEM;
	for (i = 0; i < o->qd; i++) {
		if (posix_memalign(&slots[i].buf, 4096, o->bs_max)) {
			ret = -ENOMEM;
			goto out;
		}
		iov[i].iov_base = slots[i].buf;
		iov[i].iov_len = o->bs_max;
	}
	if (o->fixed)
		ret = io_uring_register_buffers(ring, iov, o->qd);
out:
	free(iov);
	return ret;
}

static void print_help(const char *prog)
{
	fprintf(stderr,
		"usage: %s [options] DEVICE\n"
		"  -f                DEVICE is a regular file (direct I/O on a filesystem)\n"
		"  -m write|read|rw  write the pattern, check it, or both (rw)\n"
		"  -m zeros          read and expect zeros\n"
		"  -o BYTES          start offset (default 0)\n"
		"  -s BYTES          region size (default: to the end, at most 64 MiB)\n"
		"  -b MIN[-MAX]      I/O size, or a random size in [MIN,MAX] (default 4096)\n"
		"  -q DEPTH          queue depth (default 8)\n"
		"  -S SEED           pattern seed (default 1)\n"
		"  -P SECTORS        the pattern numbers each sector as the device's sector\n"
		"                    plus SECTORS (may be negative): check, through the\n"
		"                    device below, what a mapping wrote at its own sectors\n"
		"  -R FILE           create FILE once the first I/O has completed\n"
		"  -I                interrupt driven: no IORING_SETUP_IOPOLL\n"
		"  -F                use registered (fixed) buffers\n"
		"  -A                IOSQE_ASYNC: io-wq issues every I/O, without NOWAIT\n"
		"  -D                open with O_DSYNC: every write is REQ_FUA\n"
		"  -W                fail if io_uring handed any I/O to an io-wq worker\n"
		"                    (the device did not take it with REQ_NOWAIT)\n"
		"  -e ERRNO          expect every I/O to fail with this errno number\n"
		"  -E ERRNO[,ERRNO]  let I/O fail with these errnos (up to 4); what it missed\n"
		"                    goes unchecked\n"
		"  -L MS             fail if any I/O takes longer than MS milliseconds\n"
		"  -T SECONDS        fail if the whole run takes longer (default 180, 0: none):\n"
		"                    an I/O that never completes ends the run instead of\n"
		"                    hanging it\n",
		prog);
}

static unsigned long long parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	switch (*end) {
	case 'k': case 'K': return v << 10;
	case 'm': case 'M': return v << 20;
	case 'g': case 'G': return v << 30;
	default: return v;
	}
}

/* "5" or "5,95": the errnos of -E. */
static int parse_errnos(struct opts *o, const char *list)
{
	char *end;
	long e;

	do {
		e = strtol(list, &end, 10);
		if (end == list || e <= 0 || o->nr_allow == MAX_ALLOW)
			return -1;
		o->allow_errno[o->nr_allow++] = e;
		list = end + 1;
	} while (*end == ',');
	return *end ? -1 : 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	char *dash, *end;
	int c;

	*o = (struct opts){ .do_write = true, .do_read = true, .iopoll = true,
			    .qd = 8, .bs_min = 4096, .bs_max = 4096, .seed = 1,
			    .time_limit_s = 180 };
	while ((c = getopt(argc, argv, "m:o:s:b:q:S:P:R:fIFADWe:E:L:T:")) != -1) {
		switch (c) {
		case 'm':
			o->expect_zeros = !strcmp(optarg, "zeros");
			o->do_write = !strcmp(optarg, "write") || !strcmp(optarg, "rw");
			o->do_read = strcmp(optarg, "write") != 0;
			break;
		case 'o':
			o->offset = parse_size(optarg);
			break;
		case 'P':
			o->pattern_shift = strtoll(optarg, &end, 10);
			if (end == optarg || *end)
				return -1;
			break;
		case 'R':
			o->ready_file = optarg;
			break;
		case 's':
			o->size = parse_size(optarg);
			break;
		case 'b':
			o->bs_min = parse_size(optarg);
			dash = strchr(optarg, '-');
			o->bs_max = dash ? parse_size(dash + 1) : o->bs_min;
			break;
		case 'q':
			o->qd = atoi(optarg);
			break;
		case 'S':
			o->seed = strtoul(optarg, NULL, 0);
			break;
		case 'f':
			o->file = true;
			break;
		case 'I':
			o->iopoll = false;
			break;
		case 'F':
			o->fixed = true;
			break;
		case 'A':
			o->async = true;
			break;
		case 'D':
			o->dsync = true;
			break;
		case 'W':
			o->inline_only = true;
			break;
		case 'e':
			o->expect_errno = atoi(optarg);
			break;
		case 'L':
			o->max_lat_ms = atoi(optarg);
			break;
		case 'T':
			o->time_limit_s = atoi(optarg);
			break;
		case 'E':
			if (parse_errnos(o, optarg))
				return -1;
			break;
		default: return -1;
		}
	}
	if (optind != argc - 1 || !o->qd || o->qd > 1024 ||
	    !o->bs_min || o->bs_min % SECTOR || o->bs_max % SECTOR ||
	    o->bs_max < o->bs_min)
		return -1;
	o->dev = argv[optind];
	return 0;
}

/*
 * io_uring issues an I/O that would block from an io-wq worker, a thread
 * of this process named iou-wrk-PID; the last one stays until the ring
 * goes: count them.
 */
static int count_iowq_workers(void)
{
	char path[300], comm[32];
	struct dirent *d;
	int n = 0;
	DIR *dir;
	FILE *f;

	dir = opendir("/proc/self/task");
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strncmp(comm, "iou-wrk-", 8))
			n++;
		fclose(f);
	}
	closedir(dir);
	return n;
}

static int run(const struct opts *o, int fd)
{
	struct stats wst = { 0 }, rst = { 0 };
	struct io_uring ring;
	struct slot *slots;
	int ret, workers;

	ret = io_uring_queue_init(o->qd * 2, &ring,
				  o->iopoll ? IORING_SETUP_IOPOLL : 0);
	if (ret) {
		printf("# io_uring_queue_init: %s\n", strerror(-ret));
		return ret == -EINVAL ? KSFT_SKIP : KSFT_FAIL;
	}
	slots = calloc(o->qd, sizeof(*slots));
	if (!slots || setup_buffers(o, &ring, slots)) {
		printf("# cannot set up %u buffers of %u bytes\n", o->qd, o->bs_max);
		return KSFT_FAIL;
	}
	if (o->do_write && run_pass(o, &ring, fd, slots, true, &wst))
		return KSFT_FAIL;
	if (o->do_read && run_pass(o, &ring, fd, slots, false, &rst))
		return KSFT_FAIL;
	workers = count_iowq_workers();
	/* errors: failed checks / failures with the errno -E allows */
	printf("# %s %s qd=%u bs=%u-%u: writes %llu reads %llu errors %llu/%llu max_lat_us %llu",
	       o->dev, o->iopoll ? "iopoll" : "irq", o->qd, o->bs_min,
	       o->bs_max, wst.ios, rst.ios, wst.errors + rst.errors,
	       wst.allowed + rst.allowed,
	       wst.max_lat_us > rst.max_lat_us ? wst.max_lat_us :
	       rst.max_lat_us);
	printf(" iowq_workers %d\n", workers);
	io_uring_queue_exit(&ring);
	if (o->inline_only && workers) {
		printf("# io_uring issued I/O from io-wq workers: not taken with REQ_NOWAIT\n");
		return KSFT_FAIL;
	}
	return wst.errors + rst.errors ? KSFT_FAIL : KSFT_PASS;
}

/*
 * A polled I/O that never completes leaves io_uring polling for it for
 * ever; the signal interrupts that and reports the stall.
 */
static void on_time_limit(int sig)
{
	static const char msg[] = "# stalled: I/O outstanding at the time limit (-T)\n";

	ssize_t n;

	(void)sig;
	n = write(STDOUT_FILENO, msg, sizeof(msg) - 1);
	(void)n;
	_exit(KSFT_FAIL);
}

int main(int argc, char **argv)
{
	struct opts o;
	unsigned long long dev_size;
	int fd, ret;

	if (parse_opts(argc, argv, &o)) {
		print_help(argv[0]);
		return KSFT_FAIL;
	}
	fd = open_device(&o, &dev_size);
	if (fd < 0)
		return KSFT_FAIL;
	if (o.offset >= dev_size) {
		printf("# offset %llu beyond the device (%llu bytes)\n",
		       o.offset, dev_size);
		close(fd);
		return KSFT_FAIL;
	}
	if (!o.size) {
		o.size = dev_size - o.offset;
		if (o.size > (64ULL << 20))
			o.size = 64ULL << 20;
	}
	if (o.offset + o.size > dev_size) {
		printf("# region ends beyond the device\n");
		close(fd);
		return KSFT_FAIL;
	}
	unwritten = calloc(o.size / SECTOR, 1);
	if (!unwritten) {
		close(fd);
		return KSFT_FAIL;
	}
	signal(SIGALRM, on_time_limit);
	alarm(o.time_limit_s);
	ret = run(&o, fd);
	free(unwritten);
	close(fd);
	return ret;
}
