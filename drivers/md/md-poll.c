// SPDX-License-Identifier: GPL-2.0
/*
 * Polled I/O through md: see md-poll.h.
 */
#include <linux/bio.h>
#include <linux/blk-mq.h>
#include <linux/blk-stack-poll.h>
#include <linux/workqueue.h>

#include "md.h"

/* Resends run here, unbound: not on the CPU of the poller that queued them */
static struct workqueue_struct *md_poll_wq;

/*
 * Send a lower bio again, unpolled and allowed to wait.  It failed at
 * submission, before the device below started it (md_poll_should_resend()
 * checks that it is whole): bio_endio() released its cgroup association
 * and any integrity payload the block layer had generated, and left its
 * iterator and partition remapping as they were.  Associate it again with
 * the upper bio's cgroup, not this worker's, and reset what the first
 * attempt left: QoS accounting, a split's remaining count, a cookie.
 */
static void md_poll_resend(struct md_poll_node *node)
{
	struct bio *lower = node->bio;

	lower->bi_status = BLK_STS_OK;
	lower->bi_opf &= ~(REQ_NOWAIT | REQ_POLLED);
	lower->bi_cookie = BLK_QC_T_NONE;
	bio_clear_flag(lower, BIO_QOS_THROTTLED);
	bio_clear_flag(lower, BIO_QOS_MERGED);
	atomic_set(&lower->__bi_remaining, 1);
	bio_clone_blkg_association(lower, node->upper);
	submit_bio_noacct(lower);
}

/**
 * md_poll_resend_work - send again the lower bios an array has queued
 * @work: the array's poll_resend_work
 *
 * One at a time per array: each may wait (a member's frozen queue delays
 * the resends to the others), but not for another resend of the same
 * array, and arrays stacked on each other resend apart.
 */
void md_poll_resend_work(struct work_struct *work)
{
	struct mddev *mddev = container_of(work, struct mddev,
					   poll_resend_work);
	struct llist_node *list = llist_del_all(&mddev->poll_resends);
	struct md_poll_node *node, *next;

	llist_for_each_entry_safe(node, next, llist_reverse_order(list), resend)
		md_poll_resend(node);
}

/*
 * Whether the device below refused @lower at submission in a way that a
 * resend fixes: no tag for REQ_NOWAIT, or no poll queue (BLK_STS_NOTSUPP).
 * Only a whole bio, as sent: a device that started it (NVMe fails some
 * commands with BLK_STS_NOTSUPP) has advanced it, a stacked one may have
 * sent part of it.
 */
static bool md_poll_should_resend(struct md_poll_node *node,
				  struct bio *lower)
{
	if (node->resent || lower->bi_iter.bi_size != node->size)
		return false;
	return (lower->bi_status == BLK_STS_AGAIN &&
		(lower->bi_opf & REQ_NOWAIT)) ||
	       lower->bi_status == BLK_STS_NOTSUPP;
}

/* Run the lower bio's own completion, which may complete the upper bio. */
static void md_poll_complete(struct md_poll_node *node)
{
	struct bio *lower = node->bio;

	lower->bi_private = node->private;
	lower->bi_end_io = node->end_io;
	lower->bi_end_io(lower);
}

static void md_poll_lower_endio(struct bio *lower)
{
	struct md_poll_node *node = lower->bi_private;

	if (md_poll_should_resend(node, lower)) {
		node->resent = true;
		llist_add(&node->resend, &node->mddev->poll_resends);
		queue_work(md_poll_wq, &node->mddev->poll_resend_work);
		return;
	}
	/*
	 * REQ_NOWAIT kept the submitter from waiting for a tag; that is all
	 * it meant.  raid1 and raid10 pass up the errors of REQ_NOWAIT reads
	 * instead of trying another mirror.
	 */
	if (lower->bi_status)
		lower->bi_opf &= ~REQ_NOWAIT;
	/* Unlinked, nobody polls it: complete it now, with its batch */
	if (bio_poll_link_del(node->upper, &node->link)) {
		md_poll_complete(node);
		return;
	}
	/* Pairs with the acquires in md_poll_one(): the status is set */
	smp_store_release(&node->done, true);
}

/**
 * md_submit_lower - send a lower bio, linked for polling if it is polled
 * @mddev: the array serving @bio
 * @node: the node embedded in the object that owns @lower
 * @bio: the bio md received and is serving, or a part md or the block
 *	layer split off it
 * @lower: the bio to send below on behalf of @bio
 *
 * Call this only from the submission of @bio, in its submitter's context.
 * A REQ_POLLED @lower is linked to the bio the submitter polls, @bio or
 * the bio it is a part of; it completes when it is done and can be
 * unlinked, or else when a poller of that bio finds it done.
 */
void md_submit_lower(struct mddev *mddev, struct md_poll_node *node,
		     struct bio *bio, struct bio *lower)
{
	/*
	 * md stops polling while suspended, when a member that cannot poll
	 * joins; bio_poll() then no longer polls the array.  A bio that
	 * waited out that suspend must complete by interrupt, and may wait
	 * for a tag: nothing of the array is linked any more.
	 */
	if ((lower->bi_opf & REQ_POLLED) &&
	    !(READ_ONCE(bdev_get_queue(bio->bi_bdev)->limits.features) &
	      BLK_FEAT_POLL)) {
		bio_clear_polled(lower);
		lower->bi_opf &= ~REQ_NOWAIT;
	}
	/*
	 * A part of a split bio lost REQ_NOWAIT (see md-poll.h), but its
	 * submitter may be the only poller of the bios that hold the tags
	 * below: fail at a tag and be resent, not wait.  A device below that
	 * cannot fail so takes it unpolled.
	 */
	if ((lower->bi_opf & REQ_POLLED) && md_poll_is_part(bio)) {
		if (bdev_nowait(lower->bi_bdev))
			lower->bi_opf |= REQ_NOWAIT;
		else
			bio_clear_polled(lower);
	}
	if (lower->bi_opf & REQ_POLLED) {
		node->mddev = mddev;
		node->bio = lower;
		node->upper = bio_poll_upper(bio);
		node->end_io = lower->bi_end_io;
		node->private = lower->bi_private;
		node->size = lower->bi_iter.bi_size;
		node->done = false;
		node->resent = false;
		lower->bi_end_io = md_poll_lower_endio;
		lower->bi_private = node;
		/*
		 * Linking before the submit is safe: nothing polls the node
		 * before it is linked, and the upper bio holds still while
		 * its ->bi_end_io unlinks it.
		 */
		bio_poll_link_add(node->upper, &node->link);
	}
	submit_bio_noacct(lower);
}
EXPORT_SYMBOL_GPL(md_submit_lower);

/**
 * md_submit_clone - send an md_account_bio() clone to the member it maps to
 * @clone: the clone, remapped
 *
 * For personalities that send the clone itself below (linear, raid0); see
 * md_submit_lower().
 */
void md_submit_clone(struct bio *clone)
{
	struct md_io_clone *md_io_clone =
		container_of(clone, struct md_io_clone, bio_clone);

	md_submit_lower(md_io_clone->mddev, &md_io_clone->poll_node,
			md_io_clone->orig_bio, clone);
}
EXPORT_SYMBOL_GPL(md_submit_clone);

static bool md_poll_one(struct bio_poll_link *link,
			struct io_comp_batch *iob, unsigned int flags)
{
	struct md_poll_node *node = container_of(link, struct md_poll_node,
						 link);
	struct bio *lower = node->bio;

	/* Pairs with the release in md_poll_lower_endio(): status is set */
	if (!smp_load_acquire(&node->done)) {
		bio_poll(lower, iob, flags);
		/* As above, for a completion that bio_poll() found */
		if (!smp_load_acquire(&node->done))
			return false;
	}
	/* bio_endio() has run: only the owner's completion is left. */
	md_poll_complete(node);
	return true;
}

/**
 * md_poll_bio - poll the lower bios of a polled bio md is serving
 * @bio: the bio md received
 * @iob: completion batch
 * @flags: BLK_POLL_* flags
 *
 * The ->poll_bio() method of md devices.
 *
 * Return: 1 when every lower bio found has completed, else 0.
 */
int md_poll_bio(struct bio *bio, struct io_comp_batch *iob,
		unsigned int flags)
{
	return bio_poll_links(bio, iob, flags, md_poll_one, md_poll_bio);
}

/**
 * md_poll_clone - poll the lower bios of a bio md serves for dm-raid
 * @clone: DM's clone that dm-raid handed to md, still in flight
 * @iob: completion batch
 * @flags: BLK_POLL_* flags
 *
 * For dm-raid's ->poll_clone(): @clone is on DM's disk, which polls it
 * through the target.  DM's reference on the clone's dm_io keeps @clone
 * from being freed, so it cannot be a stale pointer to a bio reused
 * elsewhere, which is what the owner check of bio_poll_links() is for.
 *
 * Return: 1 when every lower bio found has completed, else 0.
 */
int md_poll_clone(struct bio *clone, struct io_comp_batch *iob,
		  unsigned int flags)
{
	return bio_poll_links(clone, iob, flags, md_poll_one,
			      clone->bi_bdev->bd_disk->fops->poll_bio);
}
EXPORT_SYMBOL_GPL(md_poll_clone);

/* Members polled per walk of the list: see md_poll_members() */
#define MD_POLL_MEMBERS_BATCH	8

/*
 * Take a reference on the queues of up to MD_POLL_MEMBERS_BATCH members,
 * from the @first-th on.  Returns how many members it walked past.
 */
static int md_get_member_queues(struct mddev *mddev, int first,
				struct request_queue **qs, int *nr)
{
	struct md_rdev *rdev;
	int i = 0;

	*nr = 0;
	rcu_read_lock();
	rdev_for_each_rcu(rdev, mddev) {
		if (i++ < first)
			continue;
		if (*nr == MD_POLL_MEMBERS_BATCH) {
			i--;
			break;
		}
		/* Its bdev stays open until a grace period after it leaves */
		if (rdev->bdev && blk_get_queue(bdev_get_queue(rdev->bdev)))
			qs[(*nr)++] = bdev_get_queue(rdev->bdev);
	}
	rcu_read_unlock();
	return i - first;
}

/**
 * md_poll_members - poll the members' poll queues for their pollers
 * @mddev: the array
 *
 * For a task that waits for the array's I/O to drain: the polled bios
 * among it complete only when polled, and their submitters, who alone
 * poll them, may be waiting for that task.  Completions run in the
 * caller's context: it must not hold a lock that they take.  Polling may
 * sleep (a driver with BLK_MQ_F_BLOCKING), so the members are polled out
 * of the RCU section that finds them, a batch at a time.
 *
 * Return: whether polled requests of a member exist, started or not.  A
 * caller that finds none sleeps until it is woken, as it would without
 * polling; a polled read allocated after that is left to the block
 * layer's reaper.
 */
bool md_poll_members(struct mddev *mddev)
{
	struct request_queue *qs[MD_POLL_MEMBERS_BATCH];
	int first = 0, walked, nr, i;
	bool found = false;

	do {
		walked = md_get_member_queues(mddev, first, qs, &nr);
		for (i = 0; i < nr; i++) {
			if (blk_mq_poll_queues(qs[i]))
				found = true;
			blk_put_queue(qs[i]);
		}
		first += walked;
	} while (nr == MD_POLL_MEMBERS_BATCH);
	return found;
}
EXPORT_SYMBOL_GPL(md_poll_members);

int __init md_poll_init(void)
{
	md_poll_wq = alloc_workqueue("md_poll", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	return md_poll_wq ? 0 : -ENOMEM;
}

void md_poll_exit(void)
{
	destroy_workqueue(md_poll_wq);
}
