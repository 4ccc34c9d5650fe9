// SPDX-License-Identifier: GPL-2.0
/*
 * dmp_fault - a fault-injecting bio-based block device for testing polled
 * I/O through stacked devices.
 *
 * The module creates one disk, /dev/dmpfault0, on the block device that
 * its "lower" parameter names, which it opens exclusively.  Every bio the
 * disk receives, the upper bio, is cut into clones by sector ranges; each
 * clone is sent to the lower device.  It is a well-behaved stacking driver
 * that follows the rules of <linux/blk-stack-poll.h>, with knobs that make
 * it take every awkward path such a driver may take:
 *
 *   clones=N        cut every bio into N clones (1..16), or into as many
 *                   logical blocks as it has if that is fewer
 *   wq_every=K      send every K-th clone from a workqueue: sent later from
 *                   another context, it may not be linked for polling and
 *                   completes by interrupt
 *   nopoll_every=K  send every K-th clone without REQ_POLLED, by interrupt
 *   fail_every=K    fail every K-th clone with fail_status instead of
 *   fail_status=S   sending it: "eio" must reach the submitter as -EIO;
 *                   "again" is handled like a BLK_STS_AGAIN from the lower
 *                   device, by sending the clone again from a worker, so
 *                   the submitter sees success and the data lands.  A
 *                   clone reads both knobs at once: it fails with the
 *                   status that went with the fail_every that picked it
 *   delay_us=N      complete each clone N microseconds after the lower
 *                   device did: a polled clone is not reported done before
 *                   that, a clone completed by interrupt completes from
 *                   delayed work
 *   stray_poll=1    each ->poll_bio() also polls the polled bio submitted
 *                   last, until its first clone finishes, whoever's it is
 *                   and whatever it has become meanwhile, the way io_uring
 *                   polls a bio through a stale pointer: the poll list
 *                   must cope with concurrent and stray pollers
 *   submit_delay_us=N  spin N microseconds (at most 20000) in ->submit_bio()
 *                   before sending any clone: whatever the driver above
 *                   does between sending this bio and its next one (the
 *                   rest of a split, say) then takes that much longer
 *   reset_poll=1    each ->poll_bio() also polls a bio of this disk that
 *                   bio_reset() has just reset, its ->bi_private the
 *                   caller's, as a bio freed and reset for
 *                   submit_bio_wait() looks to a stale poller: the poll
 *                   list must not take ->bi_private for a list
 *
 * A clone that more than one knob picks is failed if fail_every picks it,
 * else sent from the workqueue if wq_every picks it.  All knobs can be
 * changed at any time through /sys/module/dmp_fault/parameters/; bad
 * values are refused with -EINVAL.  The stat_* parameters, read only,
 * count what the device did, so that a test can tell that a knob fired.
 *
 * Lifetime: every clone holds a reference on its upper bio (taken with
 * bio_inc_remaining() before any clone is sent) that the clone's final
 * completion, dmpf_clone_finish(), drops; the reference the upper bio came
 * with is dropped when its submission ends.  A polled clone is linked to
 * the upper bio; its ->bi_end_io only marks it done and the poller runs
 * the final completion, so the link's reference is the clone's own.
 *
 * Clones are not cut to the lower device's limits: it splits what it
 * must, and fails a REQ_NOWAIT clone it would have to split with
 * BLK_STS_AGAIN, which is retried like any other.  A clone the lower
 * device refuses with BLK_STS_NOTSUPP because of REQ_POLLED or REQ_NOWAIT
 * (it lost its poll queues, say) is sent again without them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/bio.h>
#include <linux/bits.h>
#include <linux/blk-stack-poll.h>
#include <linux/blkdev.h>
#include <linux/file.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/workqueue.h>

#define DMPF_NAME		"dmpfault0"
#define DMPF_MAX_CLONES		16
#define DMPF_MAX_DELAY_US	1000000U
#define DMPF_MAX_SUBMIT_DELAY_US	20000U
/* Times a clone is sent again before it fails with BLK_STS_IOERR */
#define DMPF_MAX_RETRIES	3

/**
 * struct dmpf_knob - a runtime-writable unsigned integer parameter
 * @val: the value; read without locks, with READ_ONCE()
 * @min: smallest value accepted
 * @max: largest value accepted
 */
struct dmpf_knob {
	unsigned int	val;
	unsigned int	min;
	unsigned int	max;
};

static struct dmpf_knob dmpf_clones = {
	.val = 1, .min = 1, .max = DMPF_MAX_CLONES
};

static struct dmpf_knob dmpf_wq_every = { .max = UINT_MAX };
static struct dmpf_knob dmpf_nopoll_every = { .max = UINT_MAX };
static struct dmpf_knob dmpf_delay_us = { .max = DMPF_MAX_DELAY_US };
static struct dmpf_knob dmpf_stray_poll = { .max = 1 };
static struct dmpf_knob dmpf_reset_poll = { .max = 1 };
static struct dmpf_knob dmpf_submit_delay_us = {
	.max = DMPF_MAX_SUBMIT_DELAY_US
};

/*
 * fail_every and fail_status in one word, which a clone reads once: knobs
 * changed under I/O never make a clone fail with the fail_status of one
 * setting at the fail_every of another.  Writers are serialised by the
 * module's parameter lock (kernel_param_lock()); each changes its part.
 */
#define DMPF_FAIL_EVERY		GENMASK_ULL(31, 0)
/* fail_status=again, else eio */
#define DMPF_FAIL_AGAIN		BIT_ULL(32)
static atomic64_t dmpf_fail = ATOMIC64_INIT(0);

enum dmpf_stat {
	DMPF_STAT_CLONES,	/* clones made */
	DMPF_STAT_LINKED,	/* linked to their upper bio for polling */
	DMPF_STAT_POLLED,	/* completed by the poller */
	DMPF_STAT_WQ,		/* sent from the workqueue */
	DMPF_STAT_UNPOLLED,	/* sent without REQ_POLLED by nopoll_every */
	DMPF_STAT_FAILED,	/* failed by fail_every */
	DMPF_STAT_RETRIED,	/* sent again after BLK_STS_AGAIN */
	DMPF_STAT_DELAYED,	/* completed late by delay_us */
	DMPF_STAT_STRAY,	/* stray polls made by stray_poll */
	DMPF_STAT_STRAY_FOUND,	/* stray polls that found links to poll */
	DMPF_STAT_SUBMIT_DELAYED, /* bios held in ->submit_bio() by submit_delay_us */
	DMPF_STAT_RESET_POLL,	/* polls of reset bios made by reset_poll */
	DMPF_STAT_RESET_TAKEN,	/* of those, ->bi_private taken for a list */
	DMPF_STAT_INFLIGHT,	/* clones not yet freed */
	DMPF_NR_STATS
};

static atomic_long_t dmpf_stats[DMPF_NR_STATS];
/* Numbers the clones, for the *_every knobs. */
static atomic_long_t dmpf_seq;

/*
 * For stray_poll: the polled upper bio submitted last, until the first of
 * its clones drops its reference, else NULL.  Set before its first clone
 * is sent, cleared (if still it) by each clone before the clone drops its
 * reference.  The reference the upper bio came with, dropped when its
 * submission ends, leaves the pointer alone: that drop is not the final
 * one while a clone holds a reference, and once none does, each clone has
 * cleared the pointer before its drop.  So a non-NULL value names a bio
 * that has not completed when read.  Polled bios come from bio_sets, whose
 * slabs are SLAB_TYPESAFE_BY_RCU: read under rcu_read_lock(), the bio may
 * complete and be reused, but stays a bio until rcu_read_unlock(), which
 * is what bio_poll() asks of a poller that did not submit it.
 */
static struct bio *dmpf_last_upper;
/*
 * The task making a stray poll, else NULL: one stray poll at a time, and
 * none from within one.  dmpf_stray_found, which only that task touches,
 * says whether its poll found links.
 */
static struct task_struct *dmpf_stray_task;
static bool dmpf_stray_found;

/*
 * Serialises the submitters that wait for clones; see dmpf_alloc_clones().
 */
static DEFINE_MUTEX(dmpf_alloc_lock);

static char *lower;
module_param(lower, charp, 0444);
MODULE_PARM_DESC(lower, "path of the block device to stack on (required)");

/**
 * struct dmpf_device - the one dmp_fault disk
 * @disk: /dev/dmpfault0
 * @lower_file: the lower device, opened exclusively with @disk as holder
 * @lower_bdev: its block device
 * @bs: where the clones come from, with a struct dmpf_clone around each;
 *	its reserve holds all the clones of one bio (dmpf_alloc_clones())
 * @wq: sends clones for wq_every and after BLK_STS_AGAIN, and completes
 *	delayed clones that are not polled
 */
struct dmpf_device {
	struct gendisk		*disk;
	struct file		*lower_file;
	struct block_device	*lower_bdev;
	struct bio_set		bs;
	struct workqueue_struct	*wq;
};

static struct dmpf_device dmpf;

/* What the clone's work item does when it runs next. */
enum dmpf_work {
	DMPF_WORK_SUBMIT,
	DMPF_WORK_RETRY,
	DMPF_WORK_COMPLETE,
};

/**
 * struct dmpf_clone - a clone and what its completion needs
 * @link: in the poll list of @upper, if @linked
 * @upper: the bio the clone is part of; held until dmpf_clone_finish()
 * @work: sends or completes the clone from @dmpf.wq
 * @next_work: what @work does; set before each queueing, which orders it
 * @ready_ns: with delay_us, when a polled clone may be reported done
 * @retries: times the clone was sent again
 * @linked: linked to @upper; its poller completes it
 * @done: the lower device completed the clone; written once, with release,
 *	by its ->bi_end_io, read with acquire by the poller
 * @bio: the clone itself; last, as the bio_set's front_pad requires
 */
struct dmpf_clone {
	struct bio_poll_link	link;
	struct bio		*upper;
	struct delayed_work	work;
	enum dmpf_work		next_work;
	u64			ready_ns;
	unsigned int		retries;
	bool			linked;
	bool			done;
	struct bio		bio;
};

/* Never a clone: what reset_poll's bio points at; see dmpf_poll_reset() */
static struct dmpf_clone dmpf_reset_canary;

static void dmpf_stat_add(enum dmpf_stat stat, long n)
{
	atomic_long_add(n, &dmpf_stats[stat]);
}

static void dmpf_stat_inc(enum dmpf_stat stat)
{
	dmpf_stat_add(stat, 1);
}

/* Whether an every-K knob at @k picks clone number @seq; 0 is off. */
static bool dmpf_every(unsigned int k, unsigned long seq)
{
	return k && seq % k == 0;
}

/*
 * The clone's last step: free it and drop its reference on the upper bio,
 * which completes the upper bio if it was the last.  An error of any
 * clone fails the upper bio; which error wins when several fail does not
 * matter.
 */
static void dmpf_clone_finish(struct dmpf_clone *c)
{
	struct bio *upper = c->upper;
	blk_status_t status = c->bio.bi_status;

	bio_put(&c->bio);
	dmpf_stat_add(DMPF_STAT_INFLIGHT, -1);
	if (status)
		WRITE_ONCE(upper->bi_status, status);
	/* Not to be polled as the last upper bio once it may complete */
	cmpxchg(&dmpf_last_upper, upper, NULL);
	bio_endio(upper);
}

static void dmpf_queue(struct dmpf_clone *c, enum dmpf_work what,
		       unsigned long delay)
{
	c->next_work = what;
	queue_delayed_work(dmpf.wq, &c->work, delay);
}

static void dmpf_work_fn(struct work_struct *work)
{
	struct dmpf_clone *c = container_of(to_delayed_work(work),
					    struct dmpf_clone, work);
	struct bio *clone = &c->bio;

	switch (c->next_work) {
	case DMPF_WORK_RETRY:
		/*
		 * Here the clone may wait for a tag, so it goes without
		 * REQ_NOWAIT, and without REQ_POLLED: this worker polls
		 * nothing, and the lower device may have stopped polling.
		 * A linked clone stays linked: its poller sees it done once
		 * the interrupt completed it.
		 */
		clone->bi_status = BLK_STS_OK;
		clone->bi_opf &= ~(REQ_NOWAIT | REQ_POLLED);
		/*
		 * bio_endio() dropped the cgroup association: take the upper
		 * bio's again, which the clone holds, not this worker's.
		 */
		bio_clone_blkg_association(clone, c->upper);
		fallthrough;
	case DMPF_WORK_SUBMIT:
		submit_bio_noacct(clone);
		break;
	case DMPF_WORK_COMPLETE:
		dmpf_clone_finish(c);
		break;
	}
}

/*
 * Whether to send @c again from the worker, after the lower device failed
 * it with a status that the submitter must not see: BLK_STS_AGAIN, for a
 * REQ_NOWAIT clone it had no room for or by fail_status=again, or
 * BLK_STS_NOTSUPP for a clone with REQ_POLLED or REQ_NOWAIT that it could
 * not take (it lost its poll queues, say).  The submitter would only see
 * the error when polling, too late to retry: io_uring takes a late -EAGAIN
 * of a polled request for success.  Nor may this context wait for room,
 * which the submitter's own polled clones may hold.
 *
 * Sent again without REQ_NOWAIT and REQ_POLLED, a clone is seldom failed
 * that way again, but a device below may still do so, so the times are
 * bounded: then @c fails with BLK_STS_IOERR.
 */
static bool dmpf_retry(struct dmpf_clone *c)
{
	struct bio *clone = &c->bio;

	if (clone->bi_status != BLK_STS_AGAIN &&
	    (clone->bi_status != BLK_STS_NOTSUPP ||
	     !(clone->bi_opf & (REQ_POLLED | REQ_NOWAIT))))
		return false;
	if (c->retries == DMPF_MAX_RETRIES) {
		clone->bi_status = BLK_STS_IOERR;
		return false;
	}
	c->retries++;
	return true;
}

static void dmpf_clone_endio(struct bio *clone)
{
	struct dmpf_clone *c = container_of(clone, struct dmpf_clone, bio);
	unsigned int delay_us;

	if (dmpf_retry(c)) {
		dmpf_stat_inc(DMPF_STAT_RETRIED);
		dmpf_queue(c, DMPF_WORK_RETRY, 0);
		return;
	}

	delay_us = READ_ONCE(dmpf_delay_us.val);
	if (delay_us)
		dmpf_stat_inc(DMPF_STAT_DELAYED);
	if (c->linked) {
		if (delay_us)
			c->ready_ns = ktime_get_ns() +
				      (u64)delay_us * NSEC_PER_USEC;
		/* Pairs with the acquires in dmpf_poll_one() */
		smp_store_release(&c->done, true);
		return;
	}
	if (delay_us) {
		dmpf_queue(c, DMPF_WORK_COMPLETE, usecs_to_jiffies(delay_us));
		return;
	}
	dmpf_clone_finish(c);
}

/*
 * Send, fail or defer one clone of @upper, in the context that submits
 * @upper: the only one that may link it for polling.
 */
static void dmpf_send(struct dmpf_clone *c, struct bio *upper)
{
	struct bio *clone = &c->bio;
	u64 fail_knobs = atomic64_read(&dmpf_fail);
	blk_status_t fail = BLK_STS_OK;
	unsigned long seq;

	c->upper = upper;
	c->linked = false;
	c->done = false;
	c->ready_ns = 0;
	c->retries = 0;
	INIT_DELAYED_WORK(&c->work, dmpf_work_fn);
	clone->bi_end_io = dmpf_clone_endio;
	dmpf_stat_inc(DMPF_STAT_CLONES);

	seq = atomic_long_inc_return(&dmpf_seq);
	if (dmpf_every(fail_knobs & DMPF_FAIL_EVERY, seq)) {
		fail = fail_knobs & DMPF_FAIL_AGAIN ? BLK_STS_AGAIN :
						      BLK_STS_IOERR;
		dmpf_stat_inc(DMPF_STAT_FAILED);
	} else if (dmpf_every(READ_ONCE(dmpf_wq_every.val), seq)) {
		/*
		 * Sent later, from another context: the poll list's rules
		 * say not linked, so not polled.  The worker may wait.
		 */
		clone->bi_opf &= ~(REQ_POLLED | REQ_NOWAIT);
		dmpf_stat_inc(DMPF_STAT_WQ);
		dmpf_queue(c, DMPF_WORK_SUBMIT, 0);
		return;
	} else if (dmpf_every(READ_ONCE(dmpf_nopoll_every.val), seq)) {
		bio_clear_polled(clone);
		dmpf_stat_inc(DMPF_STAT_UNPOLLED);
	}

	/*
	 * Link before sending or failing: nothing polls the clone before it
	 * is linked, and its ->bi_end_io only marks it done.
	 */
	if (clone->bi_opf & REQ_POLLED) {
		c->linked = true;
		dmpf_stat_inc(DMPF_STAT_LINKED);
		bio_poll_link_add(upper, &c->link);
	}
	if (fail) {
		clone->bi_status = fail;
		bio_endio(clone);
		return;
	}
	submit_bio_noacct(clone);
}

/* Clone @upper @n times into @c with @gfp, all or none. */
static bool dmpf_alloc_all(struct bio *upper, struct dmpf_clone **c,
			   unsigned int n, gfp_t gfp)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct bio *clone = bio_alloc_clone(dmpf.lower_bdev, upper,
						    gfp, &dmpf.bs);

		if (!clone) {
			while (i--)
				bio_put(&c[i]->bio);
			return false;
		}
		c[i] = container_of(clone, struct dmpf_clone, bio);
	}
	return true;
}

/*
 * Clone @upper @n times into @c, all or none, as dm's
 * alloc_multiple_bios() does.  Submitters that wait for the clones of a
 * bio one at a time can deadlock: each holds part of the bio_set's
 * reserve and waits for the part another holds.  So all are tried first
 * without waiting.  A REQ_NOWAIT submitter must not wait, for the reserve
 * or anything else: it gets BLK_STS_AGAIN, during submission, which
 * io_uring retries from a worker.  Other submitters wait one at a time,
 * as the clones of others complete, for a reserve that holds all the
 * clones of a bio; one that needs a single clone holds none while it
 * waits, so it need not queue.
 *
 * The bio_set needs no rescuer: all the clones of a bio are taken before
 * any is sent, and __submit_bio_noacct() sends the clones of one bio,
 * which go to a lower device, before it passes this device another one,
 * so no clone of ours waits on current->bio_list while we wait.
 *
 * Return: BLK_STS_OK with the clones in @c, or what to fail @upper with.
 */
static blk_status_t dmpf_alloc_clones(struct bio *upper,
				      struct dmpf_clone **c, unsigned int n)
{
	bool ok;

	if (dmpf_alloc_all(upper, c, n, GFP_NOWAIT))
		return BLK_STS_OK;
	if (upper->bi_opf & REQ_NOWAIT)
		return BLK_STS_AGAIN;
	if (n > 1)
		mutex_lock(&dmpf_alloc_lock);
	/* Cloning the integrity or crypto context may fail even so */
	ok = dmpf_alloc_all(upper, c, n, GFP_NOIO);
	if (n > 1)
		mutex_unlock(&dmpf_alloc_lock);
	return ok ? BLK_STS_OK : BLK_STS_IOERR;
}

/*
 * submit_delay_us: spin, not sleep, so that a REQ_NOWAIT bio is held the
 * same way; preemption stays on.
 */
static void dmpf_submit_delay(void)
{
	unsigned int us = READ_ONCE(dmpf_submit_delay_us.val);
	u64 end;

	if (!us)
		return;
	end = ktime_get_ns() + us * NSEC_PER_USEC;
	while (ktime_get_ns() < end)
		cpu_relax();
	dmpf_stat_inc(DMPF_STAT_SUBMIT_DELAYED);
}

static void dmpf_submit_bio(struct bio *upper)
{
	struct dmpf_clone *c[DMPF_MAX_CLONES];
	unsigned int lb_shift;
	unsigned int n = READ_ONCE(dmpf_clones.val), i;
	blk_status_t status;
	sector_t blocks;

	dmpf_submit_delay();

	lb_shift = ilog2(bdev_logical_block_size(dmpf.lower_bdev)) -
		   SECTOR_SHIFT;
	blocks = bio_sectors(upper) >> lb_shift;
	if (blocks < n)
		n = max_t(sector_t, blocks, 1);
	status = dmpf_alloc_clones(upper, c, n);
	if (status) {
		upper->bi_status = status;
		bio_endio(upper);
		return;
	}
	dmpf_stat_add(DMPF_STAT_INFLIGHT, n);

	/* Before the first clone is sent, which may complete @upper */
	if (upper->bi_opf & REQ_POLLED)
		WRITE_ONCE(dmpf_last_upper, upper);
	/*
	 * One reference on @upper per clone, all taken before the first
	 * clone is sent: the first may complete before the next is sent.
	 * The reference @upper came with is dropped at the end.
	 */
	for (i = 0; i < n; i++)
		bio_inc_remaining(upper);
	for (i = 0; i < n; i++) {
		if (n > 1) {
			sector_t start = div_u64((u64)blocks * i, n);
			sector_t end = div_u64((u64)blocks * (i + 1), n);

			bio_trim(&c[i]->bio, start << lb_shift,
				 (end - start) << lb_shift);
		}
		dmpf_send(c[i], upper);
	}
	/*
	 * Not the final drop while a clone holds a reference, and each
	 * clone cleared dmpf_last_upper of @upper before dropping its own:
	 * the pointer may stay, for stray polls to find @upper's links.
	 */
	bio_endio(upper);
}

/*
 * bio_poll_links() callback: report a clone done once the lower device
 * completed it and its delay passed, and complete it.
 */
static bool dmpf_poll_one(struct bio_poll_link *link,
			  struct io_comp_batch *iob, unsigned int flags)
{
	struct dmpf_clone *c = container_of(link, struct dmpf_clone, link);

	if (READ_ONCE(dmpf_stray_task) == current)
		dmpf_stray_found = true;
	if (unlikely(c == &dmpf_reset_canary)) {
		dmpf_stat_inc(DMPF_STAT_RESET_TAKEN);
		return true;
	}
	/* Pairs with the release in dmpf_clone_endio(): status is set */
	if (!smp_load_acquire(&c->done)) {
		bio_poll(&c->bio, iob, flags);
		/* As above, for a completion that bio_poll() found */
		if (!smp_load_acquire(&c->done))
			return false;
	}
	if (c->ready_ns && ktime_get_ns() < c->ready_ns)
		return false;
	dmpf_stat_inc(DMPF_STAT_POLLED);
	dmpf_clone_finish(c);
	return true;
}

/*
 * stray_poll: poll the last polled upper bio as well, through bio_poll(),
 * which goes by the device the bio is on now, as io_uring does with a
 * stale pointer: a bio of this device that another task polls or still
 * submits, or one reused on another device.
 */
static void dmpf_poll_stray(struct bio *bio, struct io_comp_batch *iob,
			    unsigned int flags)
{
	struct bio *stray;

	if (cmpxchg(&dmpf_stray_task, NULL, current))
		return;
	rcu_read_lock();
	stray = READ_ONCE(dmpf_last_upper);
	if (stray && stray != bio) {
		dmpf_stat_inc(DMPF_STAT_STRAY);
		/* Set by dmpf_poll_one() if it polls a link for us */
		dmpf_stray_found = false;
		bio_poll(stray, iob, flags);
		if (dmpf_stray_found)
			dmpf_stat_inc(DMPF_STAT_STRAY_FOUND);
	}
	rcu_read_unlock();
	/* Orders the stray poll before the next one */
	smp_store_release(&dmpf_stray_task, NULL);
}

/*
 * reset_poll: poll a bio that bio_reset() made a bio of this disk, its
 * ->bi_private pointing at a canary clone that dmpf_poll_one() counts if
 * the poll list ever hands it out as a link.
 */
static void dmpf_poll_reset(struct io_comp_batch *iob, unsigned int flags)
{
	struct block_device *bdev = dmpf.disk->part0;
	struct bio bio;

	if (cmpxchg(&dmpf_stray_task, NULL, current))
		return;
	bio_init(&bio, bdev, NULL, 0, REQ_OP_READ);
	bio_reset(&bio, bdev, REQ_OP_READ);
	bio.bi_private = &dmpf_reset_canary.link;
	dmpf_stat_inc(DMPF_STAT_RESET_POLL);
	bio_poll(&bio, iob, flags);
	if (bio.bi_private != &dmpf_reset_canary.link)
		dmpf_stat_inc(DMPF_STAT_RESET_TAKEN);
	bio_uninit(&bio);
	/* Orders this poll before the next stray or reset poll */
	smp_store_release(&dmpf_stray_task, NULL);
}

static int dmpf_poll_bio(struct bio *bio, struct io_comp_batch *iob,
			 unsigned int flags)
{
	if (READ_ONCE(dmpf_stray_poll.val))
		dmpf_poll_stray(bio, iob, flags);
	if (READ_ONCE(dmpf_reset_poll.val))
		dmpf_poll_reset(iob, flags);
	return bio_poll_links(bio, iob, flags, dmpf_poll_one, dmpf_poll_bio);
}

static const struct block_device_operations dmpf_fops = {
	.owner		= THIS_MODULE,
	.submit_bio	= dmpf_submit_bio,
	.poll_bio	= dmpf_poll_bio,
};

/* Parameters */

/* Parse @val for @kp into @v, refusing what is not from @min to @max. */
static int dmpf_parse_uint(const char *val, const struct kernel_param *kp,
			   unsigned int min, unsigned int max, unsigned int *v)
{
	if (kstrtouint(val, 0, v) || *v < min || *v > max) {
		pr_err("%s=%.*s refused: must be an integer from %u to %u\n",
		       kp->name, (int)strcspn(val, "\n"), val, min, max);
		return -EINVAL;
	}
	return 0;
}

static int dmpf_knob_set(const char *val, const struct kernel_param *kp)
{
	struct dmpf_knob *knob = kp->arg;
	unsigned int v;
	int ret;

	ret = dmpf_parse_uint(val, kp, knob->min, knob->max, &v);
	if (!ret)
		WRITE_ONCE(knob->val, v);
	return ret;
}

static int dmpf_knob_get(char *buf, const struct kernel_param *kp)
{
	const struct dmpf_knob *knob = kp->arg;

	return sysfs_emit(buf, "%u\n", READ_ONCE(knob->val));
}

static const struct kernel_param_ops dmpf_knob_ops = {
	.set	= dmpf_knob_set,
	.get	= dmpf_knob_get,
};

module_param_cb(clones, &dmpf_knob_ops, &dmpf_clones, 0644);
MODULE_PARM_DESC(clones, "clones per bio, 1-16 (default 1)");
module_param_cb(wq_every, &dmpf_knob_ops, &dmpf_wq_every, 0644);
MODULE_PARM_DESC(wq_every,
		 "send every K-th clone from a workqueue, unpolled (0: off)");
module_param_cb(nopoll_every, &dmpf_knob_ops, &dmpf_nopoll_every, 0644);
MODULE_PARM_DESC(nopoll_every,
		 "send every K-th clone without REQ_POLLED (0: off)");
module_param_cb(delay_us, &dmpf_knob_ops, &dmpf_delay_us, 0644);
MODULE_PARM_DESC(delay_us,
		 "complete clones this many us late, at most 1000000");
module_param_cb(stray_poll, &dmpf_knob_ops, &dmpf_stray_poll, 0644);
MODULE_PARM_DESC(stray_poll,
		 "1: each poll also polls the polled bio submitted last");
module_param_cb(submit_delay_us, &dmpf_knob_ops, &dmpf_submit_delay_us, 0644);
MODULE_PARM_DESC(submit_delay_us,
		 "spin this many us in ->submit_bio(), at most 20000");
module_param_cb(reset_poll, &dmpf_knob_ops, &dmpf_reset_poll, 0644);
MODULE_PARM_DESC(reset_poll,
		 "1: each poll also polls a bio just reset to this disk");

/* Set the @mask bits of dmpf_fail to @bits; see dmpf_fail for the lock. */
static void dmpf_fail_update(u64 mask, u64 bits)
{
	atomic64_set(&dmpf_fail, (atomic64_read(&dmpf_fail) & ~mask) | bits);
}

static int dmpf_fail_every_set(const char *val, const struct kernel_param *kp)
{
	unsigned int v;
	int ret;

	ret = dmpf_parse_uint(val, kp, 0, UINT_MAX, &v);
	if (!ret)
		dmpf_fail_update(DMPF_FAIL_EVERY, v);
	return ret;
}

static int dmpf_fail_every_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%llu\n",
			  atomic64_read(&dmpf_fail) & DMPF_FAIL_EVERY);
}

static const struct kernel_param_ops dmpf_fail_every_ops = {
	.set	= dmpf_fail_every_set,
	.get	= dmpf_fail_every_get,
};

module_param_cb(fail_every, &dmpf_fail_every_ops, NULL, 0644);
MODULE_PARM_DESC(fail_every, "fail every K-th clone with fail_status (0: off)");

static int dmpf_status_set(const char *val, const struct kernel_param *kp)
{
	if (sysfs_streq(val, "eio")) {
		dmpf_fail_update(DMPF_FAIL_AGAIN, 0);
	} else if (sysfs_streq(val, "again")) {
		dmpf_fail_update(DMPF_FAIL_AGAIN, DMPF_FAIL_AGAIN);
	} else {
		pr_err("%s=%.*s refused: must be eio or again\n", kp->name,
		       (int)strcspn(val, "\n"), val);
		return -EINVAL;
	}
	return 0;
}

static int dmpf_status_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n",
			  atomic64_read(&dmpf_fail) & DMPF_FAIL_AGAIN ?
			  "again" : "eio");
}

static const struct kernel_param_ops dmpf_status_ops = {
	.set	= dmpf_status_set,
	.get	= dmpf_status_get,
};

module_param_cb(fail_status, &dmpf_status_ops, NULL, 0644);
MODULE_PARM_DESC(fail_status,
		 "status of clones fail_every fails: eio (default) or again");

/* Counters are read only; insmod would otherwise call ->set with a value. */
static int dmpf_stat_set(const char *val, const struct kernel_param *kp)
{
	pr_err("%s is a counter and cannot be set\n", kp->name);
	return -EINVAL;
}

static int dmpf_stat_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(kp->arg));
}

static const struct kernel_param_ops dmpf_stat_ops = {
	.set	= dmpf_stat_set,
	.get	= dmpf_stat_get,
};

module_param_cb(stat_clones, &dmpf_stat_ops, &dmpf_stats[DMPF_STAT_CLONES],
		0444);
MODULE_PARM_DESC(stat_clones, "clones made");
module_param_cb(stat_linked, &dmpf_stat_ops, &dmpf_stats[DMPF_STAT_LINKED],
		0444);
MODULE_PARM_DESC(stat_linked, "clones linked for polling");
module_param_cb(stat_polled, &dmpf_stat_ops, &dmpf_stats[DMPF_STAT_POLLED],
		0444);
MODULE_PARM_DESC(stat_polled, "clones completed by the poller");
module_param_cb(stat_wq, &dmpf_stat_ops, &dmpf_stats[DMPF_STAT_WQ],
		0444);
MODULE_PARM_DESC(stat_wq, "clones sent from the workqueue");
module_param_cb(stat_unpolled, &dmpf_stat_ops, &dmpf_stats[DMPF_STAT_UNPOLLED],
		0444);
MODULE_PARM_DESC(stat_unpolled, "clones sent unpolled by nopoll_every");
module_param_cb(stat_failed, &dmpf_stat_ops, &dmpf_stats[DMPF_STAT_FAILED],
		0444);
MODULE_PARM_DESC(stat_failed, "clones failed by fail_every");
module_param_cb(stat_retried, &dmpf_stat_ops, &dmpf_stats[DMPF_STAT_RETRIED],
		0444);
MODULE_PARM_DESC(stat_retried,
		 "clones sent again after BLK_STS_AGAIN or BLK_STS_NOTSUPP");
module_param_cb(stat_delayed, &dmpf_stat_ops, &dmpf_stats[DMPF_STAT_DELAYED],
		0444);
MODULE_PARM_DESC(stat_delayed, "clones completed late by delay_us");
module_param_cb(stat_stray, &dmpf_stat_ops, &dmpf_stats[DMPF_STAT_STRAY],
		0444);
MODULE_PARM_DESC(stat_stray, "stray polls made by stray_poll");
module_param_cb(stat_stray_found, &dmpf_stat_ops,
		&dmpf_stats[DMPF_STAT_STRAY_FOUND], 0444);
MODULE_PARM_DESC(stat_stray_found, "stray polls that found links to poll");
module_param_cb(stat_submit_delayed, &dmpf_stat_ops,
		&dmpf_stats[DMPF_STAT_SUBMIT_DELAYED], 0444);
MODULE_PARM_DESC(stat_submit_delayed,
		 "bios held in ->submit_bio() by submit_delay_us");
module_param_cb(stat_reset_poll, &dmpf_stat_ops,
		&dmpf_stats[DMPF_STAT_RESET_POLL], 0444);
MODULE_PARM_DESC(stat_reset_poll, "polls of reset bios made by reset_poll");
module_param_cb(stat_reset_taken, &dmpf_stat_ops,
		&dmpf_stats[DMPF_STAT_RESET_TAKEN], 0444);
MODULE_PARM_DESC(stat_reset_taken,
		 "reset bios whose ->bi_private was taken for a poll list");
module_param_cb(stat_inflight, &dmpf_stat_ops, &dmpf_stats[DMPF_STAT_INFLIGHT],
		0444);
MODULE_PARM_DESC(stat_inflight, "clones not yet freed");

/* Module load and unload */

static int __init dmpf_init(void)
{
	struct queue_limits lim;
	struct gendisk *disk;
	int ret;

	if (!lower || !*lower) {
		pr_err("lower= must name the block device to stack on\n");
		return -EINVAL;
	}
	dmpf.lower_file = bdev_file_open_by_path(lower,
						 BLK_OPEN_READ | BLK_OPEN_WRITE,
						 &dmpf, NULL);
	if (IS_ERR(dmpf.lower_file)) {
		ret = PTR_ERR(dmpf.lower_file);
		pr_err("cannot open lower=%s exclusively: %pe\n", lower,
		       dmpf.lower_file);
		return ret;
	}
	dmpf.lower_bdev = file_bdev(dmpf.lower_file);
	if (bdev_is_zoned(dmpf.lower_bdev)) {
		pr_err("lower=%s is zoned, which is not supported\n", lower);
		ret = -EINVAL;
		goto out_lower;
	}

	ret = bioset_init(&dmpf.bs, DMPF_MAX_CLONES,
			  offsetof(struct dmpf_clone, bio), 0);
	if (ret)
		goto out_lower;
	/* It sends clones, so it must make progress under memory pressure. */
	dmpf.wq = alloc_workqueue("dmp_fault", WQ_MEM_RECLAIM, 0);
	if (!dmpf.wq) {
		ret = -ENOMEM;
		goto out_bioset;
	}

	/*
	 * Stacking keeps BLK_FEAT_POLL and BLK_FEAT_NOWAIT only if the lower
	 * device has them: the disk polls only if the lower device can.
	 */
	blk_set_stacking_limits(&lim);
	lim.features |= BLK_FEAT_POLL | BLK_FEAT_NOWAIT;
	queue_limits_stack_bdev(&lim, dmpf.lower_bdev, 0, DMPF_NAME);
	disk = blk_alloc_disk(&lim, NUMA_NO_NODE);
	if (IS_ERR(disk)) {
		ret = PTR_ERR(disk);
		goto out_wq;
	}
	dmpf.disk = disk;
	disk->fops = &dmpf_fops;
	disk->flags |= GENHD_FL_NO_PART;
	strscpy(disk->disk_name, DMPF_NAME);
	set_capacity(disk, bdev_nr_sectors(dmpf.lower_bdev));
	ret = add_disk(disk);
	if (ret)
		goto out_disk;
	/* Shows the stack in sysfs (slaves/, holders/), as dm and md do. */
	ret = bd_link_disk_holder(dmpf.lower_bdev, disk);
	if (ret)
		goto out_del;

	pr_info("%s on %s: %llu sectors, polling %s\n", DMPF_NAME, lower,
		(unsigned long long)get_capacity(disk),
		lim.features & BLK_FEAT_POLL ?
		"on" : "off (the lower device cannot poll)");
	return 0;

out_del:
	del_gendisk(disk);
out_disk:
	put_disk(disk);
out_wq:
	destroy_workqueue(dmpf.wq);
out_bioset:
	bioset_exit(&dmpf.bs);
out_lower:
	fput(dmpf.lower_file);
	return ret;
}

/*
 * The disk cannot be open here (its fops hold the module), so no upper bio
 * is in flight and every clone has been freed; a work item may still be
 * returning from the completion it ran, which destroy_workqueue() waits
 * for.
 */
static void __exit dmpf_exit(void)
{
	bd_unlink_disk_holder(dmpf.lower_bdev, dmpf.disk);
	del_gendisk(dmpf.disk);
	put_disk(dmpf.disk);
	destroy_workqueue(dmpf.wq);
	bioset_exit(&dmpf.bs);
	fput(dmpf.lower_file);
}

module_init(dmpf_init);
module_exit(dmpf_exit);

MODULE_DESCRIPTION("Fault-injecting stacked block device for polled I/O tests");
MODULE_LICENSE("GPL");
