// SPDX-License-Identifier: GPL-2.0
/*
 * Polled I/O through md: see md-poll.h.
 */
#include <linux/bio.h>
#include <linux/blk-stack-poll.h>
#include <linux/workqueue.h>

#include "md.h"

/* Send a lower bio that failed with BLK_STS_AGAIN again; here it may wait. */
static void md_poll_retry_work(struct work_struct *work)
{
	struct md_poll_node *node = container_of(work, struct md_poll_node,
						 retry_work);
	struct bio *lower = node->bio;

	lower->bi_status = BLK_STS_OK;
	lower->bi_opf &= ~(REQ_NOWAIT | REQ_POLLED);
	/* bio_endio() dropped the cgroup association; this task's will do */
	bio_associate_blkg(lower);
	submit_bio_noacct(lower);
}

static void md_poll_lower_endio(struct bio *lower)
{
	struct md_poll_node *node = lower->bi_private;

	/*
	 * A REQ_NOWAIT lower bio the device below had no room for.  Its
	 * BLK_STS_AGAIN would reach the submitter only when polled, after
	 * submit_bio() returned, too late to retry, and the submitter must
	 * not wait for room either: it is the task that polls the bios that
	 * hold it.  Send it again from a worker, by interrupt; the link
	 * stays until it is done.
	 */
	if (lower->bi_status == BLK_STS_AGAIN &&
	    (lower->bi_opf & REQ_NOWAIT)) {
		INIT_WORK(&node->retry_work, md_poll_retry_work);
		queue_work(md_wq, &node->retry_work);
		return;
	}
	/*
	 * A polled lower bio may carry REQ_NOWAIT so that its submitter never
	 * waits for a tag; that is all it meant.  raid1 and raid10 take a
	 * failed REQ_NOWAIT read for one its caller would rather see fail
	 * than wait for, and do not try another mirror: a device error would
	 * reach the submitter although a mirror holds the data.  Leave it on
	 * BLK_STS_NOTSUPP, which polling or REQ_NOWAIT itself may cause (a
	 * member that lost its poll queues): no mirror is to blame for it.
	 */
	if (lower->bi_status && lower->bi_status != BLK_STS_NOTSUPP)
		lower->bi_opf &= ~REQ_NOWAIT;
	/* Pairs with the acquires in md_poll_one(): the status is set */
	smp_store_release(&node->done, true);
}

/**
 * md_submit_lower - send a lower bio, linked for polling if it is polled
 * @node: the node embedded in the object that owns @lower
 * @bio: the bio md is serving: the bio it received, or a split of it
 * @lower: the bio to send below on behalf of @bio
 *
 * Call this only from the submission of @bio, in its submitter's context.
 * A REQ_POLLED @lower is linked to the bio that @bio's submitter polls and
 * completes when that poller finds it done.
 */
void md_submit_lower(struct md_poll_node *node, struct bio *bio,
		     struct bio *lower)
{
	if (lower->bi_opf & REQ_POLLED) {
		node->bio = lower;
		node->end_io = lower->bi_end_io;
		node->private = lower->bi_private;
		node->done = false;
		lower->bi_end_io = md_poll_lower_endio;
		lower->bi_private = node;
		/*
		 * Linking before the submit is safe: nothing polls the node
		 * before it is linked, and its ->bi_end_io only marks it.
		 */
		bio_poll_link_add(bio_poll_upper(bio), &node->link);
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

	md_submit_lower(&md_io_clone->poll_node, md_io_clone->orig_bio, clone);
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
	lower->bi_private = node->private;
	lower->bi_end_io = node->end_io;
	lower->bi_end_io(lower);
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
