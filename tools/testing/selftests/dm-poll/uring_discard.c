// SPDX-License-Identifier: GPL-2.0
/*
 * uring_discard - discard ranges of a block device with io_uring's block
 * discard command (IORING_OP_URING_CMD, BLOCK_URING_CMD_DISCARD, 6.12) and
 * check what each completion says and what the device then holds.
 *
 * io_uring issues the command nonblocking first unless IOSQE_ASYNC (-A) is
 * given; the block layer then marks the discard bio REQ_NOWAIT.  Each CQE
 * is counted: success, -EAGAIN, -EOPNOTSUPP, other.  -EAGAIN must never
 * reach the application: the command retries it from io-wq itself.
 *
 * With -w each range (and what lies between ranges, with a stride larger
 * than the length) is first written with a pattern; with -z each range a
 * discard reported done must then read back as zeroes and every byte
 * between ranges must still hold the pattern.  Only for devices that
 * guarantee zeroes after a discard (null_blk memory backed, thin, ...).
 *
 * -s sets the number of SQ ring entries: with -s 1 every discard is
 * prepared in the SQ entry that the one before it was submitted from, as
 * soon as that one is submitted, as any application that reuses its ring
 * does.  With -x every other discard goes to another device, at the same
 * offsets: the ranges of those stay untouched on the device under test.
 *
 * -g: the device discards only whole units of this size (thin's blocks):
 * the parts of a range outside whole units may hold either.
 *
 * The command's SQE is filled by hand: Debian 12's liburing (2.3) has no
 * helper for it.  Fields, from 6.12's block/ioctl.c blkdev_uring_cmd():
 * cmd_op the command, addr the byte offset, addr3 the byte length; ioprio,
 * len, rw_flags, file_index and __pad1 zero.
 *
 * Exit status follows kselftest: 0 pass, 1 fail, 4 skip.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <liburing.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#ifndef BLOCK_URING_CMD_DISCARD
/* include/uapi/linux/blkdev.h of 6.12 */
#define BLOCK_URING_CMD_DISCARD	_IO(0x12, 0)
#endif

#define KSFT_PASS	0
#define KSFT_FAIL	1
#define KSFT_SKIP	4
#define MAX_ALLOW	4
#define MAX_REPORT	8	/* failures reported one by one */
#define IO_CHUNK	(1024 * 1024)	/* pattern writes and checks */

struct opts {
	const char *dev;
	const char *other_dev;	/* -x: the odd-numbered discards go there */
	unsigned long long gran;	/* -g */
	unsigned long long offset, len, stride;
	unsigned int count, qd, sq_entries;
	unsigned long long sample;	/* -c: write and check only this much */
	bool async, write_first, check_zeroes, verbose;
	unsigned int seed;
	int allow_errno[MAX_ALLOW];
	unsigned int nr_allow;
	unsigned int time_limit_s;
};

struct result {
	int res;
	bool done;
};

static void print_help(const char *prog)
{
	printf("usage: %s [options] DEVICE\n"
	       "  -o OFFSET    first range's byte offset (default 0; k, m, g)\n"
	       "  -l LENGTH    bytes per discard (default 64k)\n"
	       "  -n COUNT     discards (default 1), range i at OFFSET + i * STRIDE\n"
	       "  -t STRIDE    (default LENGTH)\n"
	       "  -q QD        discards in flight at once (default 1)\n"
	       "  -s ENTRIES   SQ ring entries (default QD): 1 reuses one SQE\n"
	       "  -A           IOSQE_ASYNC: issue from io-wq, blocking\n"
	       "  -w           write a pattern over the ranges and gaps first\n"
	       "  -z           check: discarded ranges read zeroes, gaps the pattern\n"
	       "  -c BYTES     write and check only the first BYTES of the area\n"
	       "  -g BYTES     only whole units of BYTES are sure to read zeroes\n"
	       "  -x DEVICE2   send the odd-numbered discards to DEVICE2\n"
	       "  -S SEED      pattern seed (default 1)\n"
	       "  -E ERRNO[,ERRNO]  completions that may fail with these (e.g. 95)\n"
	       "  -T SECONDS   fail if the run takes longer (default 120, 0: none)\n"
	       "  -v           print every completion\n", prog);
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
	int c;

	memset(o, 0, sizeof(*o));
	o->len = 64 << 10;
	o->count = 1;
	o->qd = 1;
	o->seed = 1;
	o->time_limit_s = 120;
	while ((c = getopt(argc, argv, "o:l:n:t:q:s:Awzc:g:x:S:E:T:v")) != -1) {
		switch (c) {
		case 'o':
			o->offset = parse_size(optarg);
			break;
		case 'l':
			o->len = parse_size(optarg);
			break;
		case 'n':
			o->count = strtoul(optarg, NULL, 0);
			break;
		case 't':
			o->stride = parse_size(optarg);
			break;
		case 'q':
			o->qd = strtoul(optarg, NULL, 0);
			break;
		case 's':
			o->sq_entries = strtoul(optarg, NULL, 0);
			break;
		case 'A':
			o->async = true;
			break;
		case 'w':
			o->write_first = true;
			break;
		case 'z':
			o->check_zeroes = true;
			break;
		case 'c':
			o->sample = parse_size(optarg);
			break;
		case 'g':
			o->gran = parse_size(optarg);
			break;
		case 'x':
			o->other_dev = optarg;
			break;
		case 'S':
			o->seed = strtoul(optarg, NULL, 0);
			break;
		case 'E':
			if (parse_errnos(o, optarg))
				return -1;
			break;
		case 'T':
			o->time_limit_s = strtoul(optarg, NULL, 0);
			break;
		case 'v':
			o->verbose = true;
			break;
		default:
			return -1;
		}
	}
	if (optind != argc - 1)
		return -1;
	o->dev = argv[optind];
	if (!o->stride)
		o->stride = o->len;
	if (!o->count || !o->qd || !o->len || o->stride < o->len)
		return -1;
	if (!o->sq_entries)
		o->sq_entries = o->qd;
	return 0;
}

/* The pattern's 8-byte word at byte offset POS: never zero. */
static unsigned long long pattern_word(const struct opts *o, unsigned long long pos)
{
	return (pos / 8 + 1) * 0x9e3779b97f4a7c15ULL ^ ((unsigned long long)o->seed << 40) ^
		0x5350444953434152ULL;	/* "SPDISCAR" */
}

static void fill_pattern(const struct opts *o, unsigned long long *buf,
			 unsigned long long pos, size_t bytes)
{
	size_t i;

	for (i = 0; i < bytes / 8; i++)
		buf[i] = pattern_word(o, pos + i * 8);
}

/* The whole area the ranges and their gaps cover, and where it ends. */
static unsigned long long area_end(const struct opts *o)
{
	return o->offset + (o->count - 1) * o->stride + o->len;
}

/* Where the pattern written and the check end: the area, or -c of it. */
static unsigned long long checked_end(const struct opts *o)
{
	unsigned long long end = area_end(o);

	if (o->sample && o->sample < end - o->offset)
		return o->offset + o->sample;
	return end;
}

static int write_pattern(const struct opts *o, int fd, void *buf)
{
	unsigned long long pos, end = checked_end(o);

	for (pos = o->offset; pos < end; pos += IO_CHUNK) {
		size_t n = end - pos < IO_CHUNK ? end - pos : IO_CHUNK;

		fill_pattern(o, buf, pos, n);
		if (pwrite(fd, buf, n, pos) != (ssize_t)n) {
			printf("# pattern write at %llu: %s\n", pos, strerror(errno));
			return -1;
		}
	}
	return fsync(fd);
}

/* Discard I goes to the device under test, not to -x's. */
static bool on_dev(const struct opts *o, unsigned long long i)
{
	return !o->other_dev || !(i & 1);
}

/*
 * What byte POS must hold: 1 zeroes (a discard of it was reported done),
 * 0 the pattern (a gap, a range of -x's device, or a range whose discard
 * failed as allowed), -1 either (outside whole units of -g).
 */
static int discarded(const struct opts *o, const struct result *res,
		     unsigned long long pos)
{
	unsigned long long i = (pos - o->offset) / o->stride;
	unsigned long long start = o->offset + i * o->stride;

	if (i >= o->count || pos - start >= o->len || !on_dev(o, i) || res[i].res)
		return 0;
	if (o->gran && (pos < (start + o->gran - 1) / o->gran * o->gran ||
			pos >= (start + o->len) / o->gran * o->gran))
		return -1;
	return 1;
}

/* What the device holds: zeroes where discarded, the pattern elsewhere. */
static int check_area(const struct opts *o, int fd, void *buf,
		      const struct result *res)
{
	unsigned long long pos, end = checked_end(o), bad_zero = 0, bad_kept = 0;
	unsigned long long *w = buf;
	unsigned int reported = 0;

	for (pos = o->offset; pos < end; pos += IO_CHUNK) {
		size_t n = end - pos < IO_CHUNK ? end - pos : IO_CHUNK, i;

		if (pread(fd, buf, n, pos) != (ssize_t)n) {
			printf("# read back at %llu: %s\n", pos, strerror(errno));
			return -1;
		}
		for (i = 0; i < n / 8; i += 64) {	/* one word a sector */
			unsigned long long p = pos + i * 8;
			int want = discarded(o, res, p);
			bool zero = want == 1;
			bool ok;

			if (want < 0)
				continue;
			if (zero)
				ok = w[i] == 0;
			else if (o->write_first)
				ok = w[i] == pattern_word(o, p);
			else
				continue;
			if (ok)
				continue;
			if (zero)
				bad_zero++;
			else
				bad_kept++;
			if (reported++ < MAX_REPORT)
				printf("# sector at byte %llu (range %llu): %s\n", p,
				       (p - o->offset) / o->stride,
				       zero ? "discard reported done, not zeroes" :
				       "not discarded, pattern lost");
		}
	}
	printf("# read back: %llu sectors not zeroed, %llu outside the discards changed\n",
	       bad_zero, bad_kept);
	return bad_zero || bad_kept ? -1 : 0;
}

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

static void prep_discard(const struct opts *o, struct io_uring_sqe *sqe,
			 const int *fds, unsigned int i)
{
	int fd = fds[!on_dev(o, i)];

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = BLOCK_URING_CMD_DISCARD;
	sqe->addr = o->offset + (unsigned long long)i * o->stride;
	sqe->addr3 = o->len;
	sqe->user_data = i;
	if (o->async)
		sqe->flags |= IOSQE_ASYNC;
}

static bool allowed(const struct opts *o, int res)
{
	unsigned int i;

	for (i = 0; i < o->nr_allow; i++)
		if (res == -o->allow_errno[i])
			return true;
	return false;
}

static int reap_one(const struct opts *o, struct io_uring *ring,
		    struct result *res)
{
	struct io_uring_cqe *cqe;
	unsigned long long i;
	int ret;

	ret = io_uring_wait_cqe(ring, &cqe);
	if (ret) {
		printf("# io_uring_wait_cqe: %s\n", strerror(-ret));
		return -1;
	}
	i = cqe->user_data;
	if (i >= o->count || res[i].done) {
		printf("# completion for unknown discard %llu\n", i);
		io_uring_cqe_seen(ring, cqe);
		return -1;
	}
	res[i].res = cqe->res;
	res[i].done = true;
	if (o->verbose)
		printf("# discard %llu: offset %llu length %llu: %d (%s)\n", i,
		       o->offset + i * o->stride, o->len, cqe->res,
		       cqe->res < 0 ? strerror(-cqe->res) : "done");
	io_uring_cqe_seen(ring, cqe);
	return 0;
}

static void on_time_limit(int sig)
{
	static const char msg[] = "# stalled: a discard outstanding at the time limit (-T)\n";
	ssize_t n;

	(void)sig;
	n = write(STDOUT_FILENO, msg, sizeof(msg) - 1);
	(void)n;
	_exit(KSFT_FAIL);
}

int main(int argc, char **argv)
{
	unsigned int i, inflight = 0, ok = 0, again = 0, notsupp = 0, other = 0;
	unsigned int reported = 0;
	struct io_uring_params p;
	unsigned long long size;
	struct io_uring ring;
	struct result *res;
	bool fail = false;
	struct opts o;
	void *buf;
	int fd, fds[2], ret, workers;

	if (parse_opts(argc, argv, &o)) {
		print_help(argv[0]);
		return KSFT_FAIL;
	}
	fd = open(o.dev, O_RDWR | O_DIRECT);
	if (fd < 0) {
		printf("# open %s: %s\n", o.dev, strerror(errno));
		return KSFT_FAIL;
	}
	if (ioctl(fd, BLKGETSIZE64, &size)) {
		printf("# BLKGETSIZE64 %s: %s\n", o.dev, strerror(errno));
		return KSFT_FAIL;
	}
	if (area_end(&o) > size) {
		printf("# the ranges end at %llu, beyond %s (%llu bytes)\n",
		       area_end(&o), o.dev, size);
		return KSFT_FAIL;
	}
	fds[0] = fd;
	fds[1] = fd;
	if (o.other_dev) {
		fds[1] = open(o.other_dev, O_RDWR | O_DIRECT);
		if (fds[1] < 0) {
			printf("# open %s: %s\n", o.other_dev, strerror(errno));
			return KSFT_FAIL;
		}
	}
	res = calloc(o.count, sizeof(*res));
	if (!res || posix_memalign(&buf, 4096, IO_CHUNK))
		return KSFT_FAIL;
	if (o.write_first && write_pattern(&o, fd, buf))
		return KSFT_FAIL;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = o.qd < 4 ? 8 : 2 * o.qd;
	ret = io_uring_queue_init_params(o.sq_entries, &ring, &p);
	if (ret) {
		printf("# io_uring_queue_init: %s\n", strerror(-ret));
		return ret == -EINVAL ? KSFT_SKIP : KSFT_FAIL;
	}
	signal(SIGALRM, on_time_limit);
	alarm(o.time_limit_s);

	/* One submission per discard: the next is prepared right after it. */
	for (i = 0; i < o.count; i++) {
		struct io_uring_sqe *sqe;

		while (inflight >= o.qd || !(sqe = io_uring_get_sqe(&ring))) {
			if (!inflight) {
				printf("# no SQE free with nothing in flight\n");
				return KSFT_FAIL;
			}
			if (reap_one(&o, &ring, res))
				return KSFT_FAIL;
			inflight--;
		}
		prep_discard(&o, sqe, fds, i);
		ret = io_uring_submit(&ring);
		if (ret != 1) {
			printf("# io_uring_submit: %s\n",
			       ret < 0 ? strerror(-ret) : "nothing submitted");
			return KSFT_FAIL;
		}
		inflight++;
	}
	while (inflight) {
		if (reap_one(&o, &ring, res))
			return KSFT_FAIL;
		inflight--;
	}
	alarm(0);
	workers = count_iowq_workers();

	for (i = 0; i < o.count; i++) {
		int r = res[i].res;

		if (!r)
			ok++;
		else if (r == -EAGAIN)
			again++;
		else if (r == -EOPNOTSUPP)
			notsupp++;
		else
			other++;
		if (r && !allowed(&o, r)) {
			fail = true;
			if (reported++ < MAX_REPORT)
				printf("# discard %u (offset %llu length %llu) failed: %s\n",
				       i, o.offset + (unsigned long long)i * o.stride,
				       o.len, strerror(-r));
		}
	}
	printf("# %s %s discards %u of %llu bytes, qd %u, sq %u:", o.dev,
	       o.async ? "async" : "inline", o.count, o.len, o.qd, o.sq_entries);
	printf(" done %u eagain %u eopnotsupp %u other %u iowq_workers %d\n",
	       ok, again, notsupp, other, workers);
	io_uring_queue_exit(&ring);
	if (again)
		printf("# -EAGAIN reached the application\n");
	if (o.check_zeroes && check_area(&o, fd, buf, res))
		fail = true;
	free(res);
	free(buf);
	if (o.other_dev)
		close(fds[1]);
	close(fd);
	return fail ? KSFT_FAIL : KSFT_PASS;
}
