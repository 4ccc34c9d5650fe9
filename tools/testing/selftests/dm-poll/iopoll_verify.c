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
 * Several devices may be given: one ring (or each of -N rings) then has
 * I/O in flight to all of them at once, each with its own seed.
 *
 * Exit status follows kselftest: 0 pass, 1 fail, 4 skip.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <getopt.h>
#include <signal.h>
#include <limits.h>
#include <liburing.h>
#include <sched.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define SECTOR		512
#define MAGIC		0x53504f4cU	/* "SPOL" */
#define KSFT_PASS	0
#define KSFT_FAIL	1
#define KSFT_SKIP	4
#define MAX_ALLOW	4
#define MAX_DEVS	4
#define MAX_RINGS	16
#define MAX_SEGS	8	/* -V: lengths in the cycle */
#define PAGE		4096

/* -K: what happens to the rings once their first I/Os are in flight */
enum abort_mode { ABORT_NONE, ABORT_CLOSE, ABORT_KILL };

struct opts {
	const char *devs[MAX_DEVS];
	unsigned int nr_devs;
	unsigned int nr_rings;	/* -N: rings driven round robin by this thread */
	/* -V: READV/WRITEV, each I/O cut into segments of these lengths, in turn */
	unsigned int seg_len[MAX_SEGS];
	unsigned int nr_segs;
	unsigned int seg_offset;	/* each segment's offset in a page of its own */
	enum abort_mode abort;
	/* -B: a blocking read of the first write's block while it is in flight */
	bool block_read;
	/* -Q: refill only once the whole queue depth has completed */
	bool rounds;
	/*
	 * -w: a blocking write every this many ms (0: none), in the read
	 * pass, or in the write pass of -m write
	 */
	unsigned int write_every_ms;
	/* -w MS,BYTES: the size of that write (0: the logical block size) */
	unsigned long long write_len;
	/* -H: the first such write waits for hold_go once hold_ready exists */
	const char *hold_ready, *hold_go;
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
	unsigned int lbs;	/* the largest logical block size of the devices */
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
	/* -r: SCHED_FIFO priority; the thread then never sleeps to reap */
	int rt_prio;
	/* -a: the CPUs of the rings' io-wq workers (none set: not bound) */
	cpu_set_t iowq_cpus;
};

/* One device: the region of it that the run writes and reads. */
struct target {
	const char *path;
	int fd;
	unsigned int seed;	/* the run's seed plus the device's index */
	/* Sectors a write failed to reach with the allowed errno: not verified. */
	unsigned char *unwritten;
	unsigned long long writes, reads;
};

/* The part of a target's region that one ring writes and reads. */
struct stream {
	struct target *t;
	unsigned long long start, next, end;
	unsigned long long rng;
};

struct slot {
	void *buf;
	struct stream *stream;
	unsigned long long off;
	unsigned int len;
	struct timespec start;
	bool busy;
	/* -V: where the segments live, and this I/O's iovecs */
	void *seg_area;
	struct iovec *iov;
	unsigned int nr_iov;
};

struct ring_ctx {
	struct io_uring ring;
	struct slot *slots;
	struct stream streams[MAX_DEVS];
	unsigned int inflight;
};

struct stats {
	unsigned long long ios, bytes, errors, allowed, max_lat_us, total_lat_us;
};

static struct target targets[MAX_DEVS];
/* The most rings that had I/O in flight at the same time. */
static unsigned int max_rings_busy;

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

/*
 * Returns true if the sector holds what fill_sector() wrote; @dev prefixes
 * the diagnostic ("" for the only device).
 */
static bool check_sector(const char *dev, const unsigned char *p, unsigned int seed,
			 unsigned long long sector)
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
		printf("# %ssector %llu: no pattern (stale or torn data)\n",
		       dev, sector);
	else if (got_sector != sector || got_seed != seed)
		printf("# %ssector %llu: holds sector %llu of seed %u (misdirected or stale)\n",
		       dev, sector, got_sector, got_seed);
	else
		printf("# %ssector %llu: header right, payload corrupt\n",
		       dev, sector);
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

/* -V: the bytes segment @k of an I/O takes in its slot's segment area. */
static unsigned int seg_room(const struct opts *o, unsigned int k)
{
	unsigned int len = o->seg_len[k % o->nr_segs];

	return (o->seg_offset + len + PAGE - 1) / PAGE * PAGE;
}

/*
 * -V: cut the I/O of slot @s into segments, each at seg_offset in pages
 * of its own, so that every segment boundary is a gap to a device with a
 * virt boundary (NVMe); a write's data is copied there from s->buf.
 */
static void build_iovecs(const struct opts *o, struct slot *s, bool write)
{
	unsigned char *area = s->seg_area;
	unsigned int done = 0, k;

	for (k = 0; done < s->len; k++) {
		unsigned int len = o->seg_len[k % o->nr_segs];

		if (len > s->len - done)
			len = s->len - done;
		s->iov[k].iov_base = area + o->seg_offset;
		s->iov[k].iov_len = len;
		if (write)
			memcpy(area + o->seg_offset, (unsigned char *)s->buf + done, len);
		else
			memset(area + o->seg_offset, 0xa5, len);
		done += len;
		area += seg_room(o, k);
	}
	s->nr_iov = k;
}

/* -V: gather what a read brought into the segments back into s->buf. */
static void gather_iovecs(struct slot *s)
{
	unsigned int done = 0, k;

	for (k = 0; k < s->nr_iov; k++) {
		memcpy((unsigned char *)s->buf + done, s->iov[k].iov_base,
		       s->iov[k].iov_len);
		done += s->iov[k].iov_len;
	}
}

static void prep(struct io_uring_sqe *sqe, const struct opts *o, int fd,
		 struct slot *s, unsigned int idx, bool write)
{
	if (o->nr_segs) {
		build_iovecs(o, s, write);
		if (write)
			io_uring_prep_writev(sqe, fd, s->iov, s->nr_iov, s->off);
		else
			io_uring_prep_readv(sqe, fd, s->iov, s->nr_iov, s->off);
	} else if (o->fixed && write) {
		io_uring_prep_write_fixed(sqe, fd, s->buf, s->len, s->off, idx);
	} else if (o->fixed) {
		io_uring_prep_read_fixed(sqe, fd, s->buf, s->len, s->off, idx);
	} else if (write) {
		io_uring_prep_write(sqe, fd, s->buf, s->len, s->off);
	} else {
		io_uring_prep_read(sqe, fd, s->buf, s->len, s->off);
	}
	io_uring_sqe_set_data64(sqe, idx);
	if (o->async)
		sqe->flags |= IOSQE_ASYNC;
}

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

/* The device's name and a blank before a diagnostic, with several devices. */
static const char *dev_prefix(const struct opts *o, const struct target *t)
{
	static char buf[300];

	if (o->nr_devs == 1)
		return "";
	snprintf(buf, sizeof(buf), "%s ", t->path);
	return buf;
}

/* Handle one completion; returns false on a failed check. */
static bool complete(const struct opts *o, struct slot *s, int res,
		     bool write, struct stats *st)
{
	unsigned long long lat = elapsed_us(&s->start);
	struct target *t = s->stream->t;
	const char *dev = dev_prefix(o, t);
	const char *op = write ? "write" : "read";
	bool ok = true;
	unsigned int i;

	s->busy = false;
	st->ios++;
	if (write)
		t->writes++;
	else
		t->reads++;
	st->total_lat_us += lat;
	if (lat > st->max_lat_us)
		st->max_lat_us = lat;
	if (o->max_lat_ms && lat > o->max_lat_ms * 1000ULL) {
		printf("# %s%s at %llu len %u took %llu us (limit %u ms)\n",
		       dev, op, s->off, s->len, lat, o->max_lat_ms);
		ok = false;
	}
	if (o->expect_errno) {
		if (res != -o->expect_errno) {
			printf("# %s%s at %llu: res %d, expected -%s\n",
			       dev, op, s->off, res, strerrorname_np(o->expect_errno));
			ok = false;
		}
		goto out;
	}
	if (errno_allowed(o, res)) {
		st->allowed++;
		if (write)
			memset(t->unwritten + (s->off - o->offset) / SECTOR, 1,
			       s->len / SECTOR);
		goto out;
	}
	if (res != (int)s->len) {
		printf("# %s%s at %llu len %u: res %d (%s)\n",
		       dev, op, s->off, s->len, res,
		       res < 0 ? strerror(-res) : "short I/O");
		ok = false;
		goto out;
	}
	st->bytes += s->len;
	if (o->ready_file)
		mark_ready(o);
	if (!write && o->nr_segs)
		gather_iovecs(s);
	if (!write && o->expect_zeros) {
		for (i = 0; i < s->len; i++)
			if (((unsigned char *)s->buf)[i]) {
				printf("# %sread at %llu: byte %u is not zero\n",
				       dev, s->off, i);
				ok = false;
				break;
			}
	} else if (!write) {
		for (i = 0; i < s->len / SECTOR; i++)
			if (!t->unwritten[(s->off - o->offset) / SECTOR + i] &&
			    !check_sector(dev, (unsigned char *)s->buf + i * SECTOR,
					  t->seed, pattern_sector(o, s->off) + i)) {
				ok = false;
				break;
			}
	}
out:
	if (!ok)
		st->errors++;
	return ok;
}

/* Queue an I/O on every idle slot of @rc whose stream has a part left. */
static void fill_ring(const struct opts *o, struct ring_ctx *rc, bool write)
{
	unsigned int i, k;

	/* -Q: the next round once the last one is reaped (-r does not wait) */
	if (o->rounds && rc->inflight)
		return;
	for (i = 0; i < o->qd; i++) {
		struct slot *s = &rc->slots[i];
		struct stream *sm = s->stream;
		struct io_uring_sqe *sqe;

		if (s->busy || sm->next >= sm->end)
			continue;
		sqe = io_uring_get_sqe(&rc->ring);
		if (!sqe)
			break;
		s->off = sm->next;
		s->len = pick_len(o, &sm->rng, sm->end - sm->next);
		sm->next += s->len;
		if (write)
			for (k = 0; k < s->len / SECTOR; k++)
				fill_sector((unsigned char *)s->buf + k * SECTOR,
					    sm->t->seed, pattern_sector(o, s->off) + k);
		else
			memset(s->buf, 0xa5, s->len);
		prep(sqe, o, sm->t->fd, s, i, write);
		s->busy = true;
		clock_gettime(CLOCK_MONOTONIC, &s->start);
		rc->inflight++;
	}
}

/* Take every completion @rc has; returns how many, or -1 on a bogus one. */
static int reap_ring(const struct opts *o, struct ring_ctx *rc, bool write,
		     struct stats *st)
{
	struct io_uring_cqe *cqe;
	int n = 0;

	while (io_uring_peek_cqe(&rc->ring, &cqe) == 0) {
		unsigned int idx = io_uring_cqe_get_data64(cqe);

		if (idx >= o->qd || !rc->slots[idx].busy) {
			printf("# bogus completion user_data %u\n", idx);
			return -1;
		}
		complete(o, &rc->slots[idx], cqe->res, write, st);
		io_uring_cqe_seen(&rc->ring, cqe);
		rc->inflight--;
		n++;
	}
	return n;
}

/*
 * -K: the I/Os of the first round are in flight, those of a polled ring
 * linked wherever the stack below links them: close the rings, or be
 * killed, without reaping them.  Returns only on a close.
 */
static int abort_rings(const struct opts *o, struct ring_ctx *rings)
{
	unsigned int r, submitted = 0, done = 0;

	for (r = 0; r < o->nr_rings; r++) {
		submitted += rings[r].inflight;
		done += io_uring_cq_ready(&rings[r].ring);
	}
	printf("# %s with %u of %u I/Os outstanding\n",
	       o->abort == ABORT_KILL ? "SIGKILL" : "closing the rings",
	       submitted - done, submitted);
	fflush(stdout);
	if (submitted == done) {
		printf("# every I/O had completed: nothing to abort\n");
		return KSFT_FAIL;
	}
	if (o->abort == ABORT_KILL)
		raise(SIGKILL);
	for (r = 0; r < o->nr_rings; r++)
		io_uring_queue_exit(&rings[r].ring);
	return KSFT_PASS;
}

/*
 * -B: the first writes are in flight and nothing polls them: read the
 * block of the first with a blocking pread(), which must be back within
 * -L.  A stack that made it wait for the writes in flight would wait for
 * I/O that only this thread polls.
 */
static int blocking_read(const struct opts *o, const struct ring_ctx *rc)
{
	const struct slot *s = &rc->slots[0];
	unsigned long long us;
	struct timespec start;
	void *buf;
	ssize_t n;

	if (posix_memalign(&buf, PAGE, s->len))
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &start);
	n = pread(s->stream->t->fd, buf, s->len, s->off);
	us = elapsed_us(&start);
	free(buf);
	printf("# blocking read of %u bytes at %llu, %u writes in flight: %llu us\n",
	       s->len, s->off, rc->inflight, us);
	if (n != (ssize_t)s->len) {
		printf("# blocking read: %s\n", n < 0 ? strerror(errno) : "short");
		return -1;
	}
	if (o->max_lat_ms && us > o->max_lat_ms * 1000ULL) {
		printf("# blocking read: longer than %u ms\n", o->max_lat_ms);
		return -1;
	}
	return 0;
}

/*
 * -w: I/O is in flight and not reaped; write the first block of the
 * region again, with what it holds, through a blocking pwrite(), which
 * must be back within -L.  A database thread does this: it polls its
 * reads (or data writes), and writes its log with plain direct I/O.  A
 * wait in the write (a queue freeze, a tag, memory) that the I/O in
 * flight holds up is never over: nothing polls it while the thread sleeps.
 */
static int blocking_write(const struct opts *o, const struct ring_ctx *rc,
			  unsigned long long *nr, unsigned long long *max_us)
{
	const struct stream *sm = &rc->streams[0];
	unsigned int k, len = o->write_len ? o->write_len : o->lbs;
	unsigned long long us;
	struct timespec start;
	void *buf;
	ssize_t n;

	if (len % o->lbs) {
		printf("# blocking write: %u bytes, not a multiple of the block size %u\n",
		       len, o->lbs);
		return -1;
	}
	if (posix_memalign(&buf, PAGE, len))
		return -1;
	for (k = 0; k < len / SECTOR; k++)
		fill_sector((unsigned char *)buf + k * SECTOR, sm->t->seed,
			    pattern_sector(o, sm->start) + k);
	clock_gettime(CLOCK_MONOTONIC, &start);
	n = pwrite(sm->t->fd, buf, len, sm->start);
	us = elapsed_us(&start);
	free(buf);
	if (n != (ssize_t)len) {
		printf("# blocking write: %s\n", n < 0 ? strerror(errno) : "short");
		return -1;
	}
	(*nr)++;
	if (us > *max_us)
		*max_us = us;
	if (o->max_lat_ms && us > o->max_lat_ms * 1000ULL) {
		printf("# blocking write with %u I/Os in flight: %llu us, longer than %u ms\n",
		       rc->inflight, us, o->max_lat_ms);
		return -1;
	}
	return 0;
}

/*
 * Submit what the ring has queued without polling: io_uring_submit()
 * enters a polled ring with IORING_ENTER_GETEVENTS, which reaps what the
 * device has completed, and -w's write is to come with all of it still
 * held.  Returns the number submitted, or -errno.
 */
static int submit_only(struct io_uring *ring)
{
	struct io_uring_sq *sq = &ring->sq;
	unsigned int queued;
	int ret;

	if (sq->sqe_head != sq->sqe_tail) {
		sq->sqe_head = sq->sqe_tail;
		io_uring_smp_store_release(sq->ktail, sq->sqe_tail);
	}
	queued = sq->sqe_tail - io_uring_smp_load_acquire(sq->khead);
	/* The system call itself: liburing's wrapper reports errors either way */
	ret = syscall(__NR_io_uring_enter, ring->ring_fd, queued, 0, 0, NULL, 0);
	return ret < 0 ? -errno : ret;
}

/*
 * -H: the first reads are in flight and not reaped: say so (create the
 * READY file), and wait until GO exists, so that the caller can start
 * something that waits for them (a queue freeze) before the write.
 */
static int hold_until_go(const struct opts *o)
{
	int fd = open(o->hold_ready, O_WRONLY | O_CREAT, 0644);

	if (fd < 0) {
		printf("# -H: cannot create %s: %s\n", o->hold_ready, strerror(errno));
		return -1;
	}
	close(fd);
	while (access(o->hold_go, F_OK))
		usleep(1000);
	return 0;
}

/*
 * One pass over the regions: writes the pattern or reads and checks it.
 * With one ring, submit and wait for a completion; with several, this
 * thread goes round them, submitting and reaping what each has without
 * waiting (a polled ring polls once).  Returns 0, -1 on a ring error, or
 * 1 after -K closed the rings.
 */
static int run_pass(const struct opts *o, struct ring_ctx *rings, bool write,
		    struct stats *st)
{
	bool block_read = write && o->block_read;
	bool write_due, write_every = o->write_every_ms && (!write || !o->do_read);
	bool hold = write_every && o->hold_ready;
	unsigned long long nr_writes = 0, max_write_us = 0;
	unsigned int r, d, busy;
	/* Long ago: -w's first write comes once the first I/Os are in flight */
	struct timespec last_write = { 0 };
	int ret, n;

	for (r = 0; r < o->nr_rings; r++)
		for (d = 0; d < o->nr_devs; d++) {
			struct stream *sm = &rings[r].streams[d];

			sm->next = sm->start;
			sm->rng = (o->seed * 2654435761ULL + (write ? 1 : 2)) ^
				  (r * MAX_DEVS + d) * 0x9e3779b97f4a7c15ULL;
		}
	do {
		busy = 0;
		n = 0;
		for (r = 0; r < o->nr_rings; r++) {
			struct ring_ctx *rc = &rings[r];

			fill_ring(o, rc, write);
			if (!rc->inflight)
				continue;
			busy++;
			write_due = hold || (write_every &&
				    elapsed_us(&last_write) >= o->write_every_ms * 1000ULL);
			if (write_due)
				ret = submit_only(&rc->ring);
			else if (o->abort || block_read)
				ret = io_uring_submit(&rc->ring);
			else if (o->nr_rings == 1 && !o->rt_prio)
				ret = io_uring_submit_and_wait(&rc->ring,
							       o->rounds ? rc->inflight : 1);
			else
				ret = io_uring_submit_and_get_events(&rc->ring);
			if (ret < 0) {
				printf("# ring %u: io_uring_submit: %s\n", r, strerror(-ret));
				return -1;
			}
			if (o->abort)
				continue;
			if (block_read) {
				block_read = false;
				if (blocking_read(o, rc))
					return -1;
			}
			if (write_due) {
				if (hold && hold_until_go(o))
					return -1;
				hold = false;
				if (blocking_write(o, rc, &nr_writes, &max_write_us))
					return -1;
				clock_gettime(CLOCK_MONOTONIC, &last_write);
			}
			ret = reap_ring(o, rc, write, st);
			if (ret < 0)
				return -1;
			n += ret;
		}
		if (busy > max_rings_busy)
			max_rings_busy = busy;
		if (o->abort)
			return abort_rings(o, rings) == KSFT_PASS ? 1 : -1;
		/* Interrupt driven, several rings: let the completions come. */
		if (busy && !n && !o->iopoll && o->nr_rings > 1)
			sched_yield();
	} while (busy);
	if (write_every)
		printf("# %llu blocking writes, the longest %llu us\n",
		       nr_writes, max_write_us);
	return 0;
}

/*
 * -f: the size of a regular file, and the alignment its filesystem asks
 * of direct I/O (statx STATX_DIOALIGN), which plays the device's
 * logical block size.
 */
static int open_file_size(const char *path, int fd,
			  unsigned long long *size, unsigned int *align)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_SIZE | STATX_TYPE | STATX_DIOALIGN,
		  &stx)) {
		printf("# statx %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(stx.stx_mode)) {
		printf("# %s is not a regular file (-f)\n", path);
		return -1;
	}
	if (!(stx.stx_mask & STATX_DIOALIGN) || !stx.stx_dio_offset_align) {
		printf("# %s: its filesystem reports no direct I/O alignment\n", path);
		return -1;
	}
	/* A tail shorter than the alignment cannot be read with O_DIRECT. */
	*size = stx.stx_size / stx.stx_dio_offset_align * stx.stx_dio_offset_align;
	*align = stx.stx_dio_offset_align;
	return 0;
}

static int open_device(struct opts *o, const char *path,
		       unsigned long long *dev_size)
{
	unsigned int lbs = SECTOR;
	struct stat stbuf;
	int fd;

	fd = open(path, (o->do_write || o->write_every_ms ? O_RDWR : O_RDONLY) | O_DIRECT |
		  (o->dsync ? O_DSYNC : 0));
	if (fd < 0) {
		printf("# open %s: %s\n", path, strerror(errno));
		return -1;
	}
	/*
	 * Without -f, never let a missing device node turn into a regular
	 * file on devtmpfs: the test would pass without touching any device.
	 */
	if (o->file) {
		if (open_file_size(path, fd, dev_size, &lbs)) {
			close(fd);
			return -1;
		}
	} else if (fstat(fd, &stbuf) || !S_ISBLK(stbuf.st_mode)) {
		printf("# %s is not a block device\n", path);
		close(fd);
		return -1;
	} else if (ioctl(fd, BLKGETSIZE64, dev_size) || ioctl(fd, BLKSSZGET, &lbs)) {
		printf("# %s: size ioctls: %s\n", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (lbs > o->lbs)
		o->lbs = lbs;
	if (o->bs_min % lbs || o->bs_max % lbs || o->offset % lbs || o->size % lbs) {
		printf("# %s: sizes and offset must be multiples of %u\n",
		       path, lbs);
		close(fd);
		return -1;
	}
	return fd;
}

/* -V: the bytes of the segment area an I/O of bs_max bytes needs. */
static size_t seg_area_size(const struct opts *o, unsigned int *nr_iov)
{
	unsigned int done = 0, k;
	size_t size = 0;

	for (k = 0; done < o->bs_max; k++) {
		done += o->seg_len[k % o->nr_segs];
		size += seg_room(o, k);
	}
	*nr_iov = k;
	return size;
}

/* The slots of one ring: buffers, and slot i to device i % nr_devs. */
static int setup_slots(const struct opts *o, struct ring_ctx *rc)
{
	struct iovec *iov = calloc(o->qd, sizeof(*iov));
	unsigned int i, nr_iov = 0;
	size_t area = o->nr_segs ? seg_area_size(o, &nr_iov) : 0;
	int ret = 0;

	rc->slots = calloc(o->qd, sizeof(*rc->slots));
	if (!iov || !rc->slots) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < o->qd; i++) {
		struct slot *s = &rc->slots[i];

		s->stream = &rc->streams[i % o->nr_devs];
		if (posix_memalign(&s->buf, 4096, o->bs_max)) {
			ret = -ENOMEM;
			goto out;
		}
		if (area) {
			s->iov = calloc(nr_iov, sizeof(*s->iov));
			if (!s->iov || posix_memalign(&s->seg_area, PAGE, area)) {
				ret = -ENOMEM;
				goto out;
			}
		}
		iov[i].iov_base = s->buf;
		iov[i].iov_len = o->bs_max;
	}
	if (o->fixed)
		ret = io_uring_register_buffers(&rc->ring, iov, o->qd);
out:
	free(iov);
	return ret;
}

static void print_help(const char *prog)
{
	fprintf(stderr,
		"usage: %s [options] DEVICE [DEVICE...]\n"
		"  several DEVICEs (up to 4): each ring has I/O to all at once, the\n"
		"  same region of each, the pattern of device N with seed SEED + N\n"
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
		"  -N RINGS          this thread drives RINGS rings (up to 16) round robin,\n"
		"                    submitting and reaping each without waiting; ring R\n"
		"                    takes the R-th part of each region (fails unless all\n"
		"                    rings had I/O in flight at once)\n"
		"  -V LEN[,LEN...][@OFF]\n"
		"                    READV/WRITEV: each I/O is cut into segments of these\n"
		"                    lengths (multiples of 512, up to 8, in turn), each at\n"
		"                    offset OFF (default 512) of pages of its own: segments\n"
		"                    that break a virt boundary such as NVMe's\n"
		"  -K close|kill     once the first I/Os are in flight, close the rings\n"
		"                    without reaping them (exit 0), or SIGKILL this process\n"
		"  -B                once the first writes are in flight, and not reaped,\n"
		"                    read the first one's block with a blocking pread(),\n"
		"                    which must be back within -L\n"
		"  -Q                in rounds: submit the whole queue depth at once and\n"
		"                    wait for all of it before the next (one ring), so\n"
		"                    that the I/Os of a round compete for tags\n"
		"  -w MS[,BYTES]     in the read pass (the write pass of -m write), once\n"
		"                    the first I/Os are in flight and then every MS ms,\n"
		"                    while I/O is in flight and not reaped, write the\n"
		"                    region's first block, or its first BYTES, (their\n"
		"                    pattern) with a blocking pwrite(), which must be\n"
		"                    back within -L (one ring)\n"
		"  -H READY,GO       with -w: before the first such write, create READY\n"
		"                    and wait until GO exists (the caller starts what\n"
		"                    waits for the reads in flight, a queue freeze)\n"
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
		"  -r PRIO           run as SCHED_FIFO at PRIO and reap by spinning: never\n"
		"                    sleep in io_uring_enter() for a completion, as a\n"
		"                    real-time poller spins on its completion queue\n"
		"  -a CPU[,CPU]      bind the rings' io-wq workers to these CPUs\n"
		"                    (IORING_REGISTER_IOWQ_AFF); they otherwise inherit\n"
		"                    this thread's CPU affinity, and with -r its priority\n"
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

/* "0" or "0,2": the CPUs of -a. */
static int parse_cpus(struct opts *o, const char *list)
{
	char *end;
	long cpu;

	CPU_ZERO(&o->iowq_cpus);
	do {
		cpu = strtol(list, &end, 10);
		if (end == list || cpu < 0 || cpu >= CPU_SETSIZE)
			return -1;
		CPU_SET(cpu, &o->iowq_cpus);
		list = end + 1;
	} while (*end == ',');
	return *end ? -1 : 0;
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

/* "512,3584" or "512,3584@1024": the segments of -V. */
static int parse_segs(struct opts *o, const char *list)
{
	unsigned long v;
	char *end;

	o->seg_offset = SECTOR;
	do {
		v = strtoul(list, &end, 10);
		if (end == list || !v || v % SECTOR || v > (1U << 20) ||
		    o->nr_segs == MAX_SEGS)
			return -1;
		o->seg_len[o->nr_segs++] = v;
		list = end + 1;
	} while (*end == ',');
	if (*end == '@') {
		v = strtoul(list, &end, 10);
		if (end == list || *end || v % SECTOR || v >= PAGE)
			return -1;
		o->seg_offset = v;
		return 0;
	}
	return *end ? -1 : 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	char *dash, *end;
	int c;

	*o = (struct opts){ .do_write = true, .do_read = true, .iopoll = true,
			    .qd = 8, .bs_min = 4096, .bs_max = 4096, .seed = 1,
			    .time_limit_s = 180, .nr_rings = 1, .lbs = SECTOR };
	while ((c = getopt(argc, argv, "m:o:s:b:q:S:P:R:N:V:K:fBQw:H:IFADWe:E:L:T:r:a:")) != -1) {
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
		case 'N':
			o->nr_rings = strtoul(optarg, &end, 10);
			if (end == optarg || *end || !o->nr_rings || o->nr_rings > MAX_RINGS)
				return -1;
			break;
		case 'V':
			if (parse_segs(o, optarg))
				return -1;
			break;
		case 'K':
			if (!strcmp(optarg, "close"))
				o->abort = ABORT_CLOSE;
			else if (!strcmp(optarg, "kill"))
				o->abort = ABORT_KILL;
			else
				return -1;
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
		case 'B':
			o->block_read = true;
			break;
		case 'Q':
			o->rounds = true;
			break;
		case 'w':
			o->write_every_ms = strtoul(optarg, &end, 10);
			if (end == optarg || !o->write_every_ms ||
			    (*end && (*end != ',' || !end[1])))
				return -1;
			if (*end) {
				o->write_len = parse_size(end + 1);
				if (!o->write_len || o->write_len > UINT_MAX)
					return -1;
			}
			break;
		case 'H':
			dash = strchr(optarg, ',');
			if (!dash || dash == optarg || !dash[1])
				return -1;
			*dash = '\0';
			o->hold_ready = optarg;
			o->hold_go = dash + 1;
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
		case 'r':
			o->rt_prio = atoi(optarg);
			if (o->rt_prio < sched_get_priority_min(SCHED_FIFO) ||
			    o->rt_prio > sched_get_priority_max(SCHED_FIFO))
				return -1;
			break;
		case 'E':
			if (parse_errnos(o, optarg))
				return -1;
			break;
		case 'a':
			if (parse_cpus(o, optarg))
				return -1;
			break;
		default: return -1;
		}
	}
	if (optind >= argc || argc - optind > MAX_DEVS || !o->qd || o->qd > 1024 ||
	    !o->bs_min || o->bs_min % SECTOR || o->bs_max % SECTOR ||
	    o->bs_max < o->bs_min)
		return -1;
	for (o->nr_devs = 0; optind < argc; optind++)
		o->devs[o->nr_devs++] = argv[optind];
	/* -B reads what the first round of a write pass has in flight. */
	if (o->block_read && (!o->do_write || o->abort))
		return -1;
	/* -w writes in the read (or only) pass of one ring, over one device. */
	if ((o->hold_ready && !o->write_every_ms) ||
	    (o->write_every_ms &&
	    (o->abort || o->nr_rings > 1 || o->nr_devs > 1)))
		return -1;
	/* Every device needs a slot of each ring; -V builds its own iovecs. */
	if (o->qd < o->nr_devs || (o->nr_segs && o->fixed))
		return -1;
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

/* Ring r takes the r-th part of each target's region; the last, the rest. */
static void setup_streams(const struct opts *o, struct ring_ctx *rc, unsigned int r)
{
	unsigned long long part = o->size / o->nr_rings / o->lbs * o->lbs;
	unsigned int d;

	for (d = 0; d < o->nr_devs; d++) {
		struct stream *sm = &rc->streams[d];

		sm->t = &targets[d];
		sm->start = o->offset + r * part;
		sm->end = r == o->nr_rings - 1 ? o->offset + o->size : sm->start + part;
	}
}

static int run(const struct opts *o)
{
	struct stats wst = { 0 }, rst = { 0 };
	struct ring_ctx *rings;
	char name[4 * 300] = "";
	unsigned int r, d;
	int ret, workers;

	if (o->size / o->nr_rings < o->lbs) {
		printf("# %llu bytes cannot be shared by %u rings\n", o->size, o->nr_rings);
		return KSFT_FAIL;
	}
	rings = calloc(o->nr_rings, sizeof(*rings));
	if (!rings)
		return KSFT_FAIL;
	for (r = 0; r < o->nr_rings; r++) {
		ret = io_uring_queue_init(o->qd * 2, &rings[r].ring,
					  o->iopoll ? IORING_SETUP_IOPOLL : 0);
		if (ret) {
			printf("# io_uring_queue_init: %s\n", strerror(-ret));
			return ret == -EINVAL ? KSFT_SKIP : KSFT_FAIL;
		}
		if (CPU_COUNT(&o->iowq_cpus)) {
			ret = io_uring_register_iowq_aff(&rings[r].ring, sizeof(o->iowq_cpus),
							 &o->iowq_cpus);
			if (ret) {
				printf("# io_uring_register_iowq_aff: %s\n", strerror(-ret));
				return KSFT_FAIL;
			}
		}
		setup_streams(o, &rings[r], r);
		if (setup_slots(o, &rings[r])) {
			printf("# cannot set up %u buffers of %u bytes\n", o->qd, o->bs_max);
			return KSFT_FAIL;
		}
	}
	ret = o->do_write ? run_pass(o, rings, true, &wst) : 0;
	if (ret > 0)
		return KSFT_PASS;	/* -K close */
	if (ret < 0)
		return KSFT_FAIL;
	if (o->do_read && run_pass(o, rings, false, &rst))
		return KSFT_FAIL;
	workers = count_iowq_workers();
	for (d = 0; d < o->nr_devs; d++) {
		if (o->nr_devs > 1)
			printf("# %s: seed %u, %llu writes, %llu reads\n", targets[d].path,
			       targets[d].seed, targets[d].writes, targets[d].reads);
		snprintf(name + strlen(name), sizeof(name) - strlen(name), "%s%s",
			 d ? "+" : "", targets[d].path);
	}
	/* errors: failed checks / failures with the errno -E allows */
	printf("# %s %s qd=%u bs=%u-%u: writes %llu reads %llu errors %llu/%llu max_lat_us %llu",
	       name, o->iopoll ? "iopoll" : "irq", o->qd, o->bs_min,
	       o->bs_max, wst.ios, rst.ios, wst.errors + rst.errors,
	       wst.allowed + rst.allowed,
	       wst.max_lat_us > rst.max_lat_us ? wst.max_lat_us :
	       rst.max_lat_us);
	printf(" iowq_workers %d", workers);
	if (o->nr_rings > 1)
		printf(" rings %u busy_at_once %u", o->nr_rings, max_rings_busy);
	if (o->nr_segs)
		printf(" readv_writev");
	printf("\n");
	for (r = 0; r < o->nr_rings; r++)
		io_uring_queue_exit(&rings[r].ring);
	if (o->inline_only && workers) {
		printf("# io_uring issued I/O from io-wq workers: not taken with REQ_NOWAIT\n");
		return KSFT_FAIL;
	}
	if (max_rings_busy < o->nr_rings) {
		printf("# at most %u of the %u rings had I/O in flight at once\n",
		       max_rings_busy, o->nr_rings);
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
	unsigned long long dev_size, region = 0;
	struct opts o;
	unsigned int d;
	int ret;

	if (parse_opts(argc, argv, &o)) {
		print_help(argv[0]);
		return KSFT_FAIL;
	}
	for (d = 0; d < o.nr_devs; d++) {
		struct target *t = &targets[d];

		t->path = o.devs[d];
		t->seed = o.seed + d;
		t->fd = open_device(&o, t->path, &dev_size);
		if (t->fd < 0)
			return KSFT_FAIL;
		if (o.offset >= dev_size) {
			printf("# offset %llu beyond %s (%llu bytes)\n",
			       o.offset, t->path, dev_size);
			return KSFT_FAIL;
		}
		if (o.size && o.offset + o.size > dev_size) {
			printf("# region ends beyond %s\n", t->path);
			return KSFT_FAIL;
		}
		/* Without -s: to the end of the smallest, at most 64 MiB. */
		if (!d || dev_size - o.offset < region)
			region = dev_size - o.offset;
	}
	if (!o.size)
		o.size = region < (64ULL << 20) ? region : 64ULL << 20;
	for (d = 0; d < o.nr_devs; d++) {
		targets[d].unwritten = calloc(o.size / SECTOR, 1);
		if (!targets[d].unwritten)
			return KSFT_FAIL;
	}
	if (o.rt_prio) {
		struct sched_param sp = { .sched_priority = o.rt_prio };

		if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
			printf("# SCHED_FIFO %d: %s\n", o.rt_prio, strerror(errno));
			return KSFT_FAIL;
		}
	}
	signal(SIGALRM, on_time_limit);
	alarm(o.time_limit_s);
	ret = run(&o);
	for (d = 0; d < o.nr_devs; d++) {
		free(targets[d].unwritten);
		close(targets[d].fd);
	}
	return ret;
}
