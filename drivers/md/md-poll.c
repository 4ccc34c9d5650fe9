// SPDX-License-Identifier: GPL-2.0
/*
 * Polled I/O through md: see md-poll.h.
 */
#include <linux/bio.h>
#include <linux/blk-stack-poll.h>
#include <linux/blkdev.h>

#include "md.h"

static void md_poll_lower_endio(struct bio *lower)
{
	struct md_poll_node *node = lower->bi_private;

	/* Pairs with the acquires in md_poll_one(): the status is set */
	smp_store_release(&node->done, true);
}

/**
 * md_split_polled - cut a polled bio to what the array takes at once
 * @bio: a polled bio md received
 *
 * bio_split_to_limits() fails a REQ_NOWAIT bio that needs splitting with
 * BLK_STS_AGAIN, and clears REQ_POLLED on a bio it splits: io_uring then
 * retries it by interrupt.  Cut a polled bio to the array's max_sectors
 * instead, send the rest back and go on with the front; both stay polled
 * and link to @bio, which is what the submitter polls.  Neither may fail
 * with BLK_STS_AGAIN once the other is on its way, so both lose
 * REQ_NOWAIT.  Segment limits are left to the members.
 *
 * Return: the bio to go on with, or NULL if @bio was ended.
 */
struct bio *md_split_polled(struct bio *bio)
{
	unsigned int max_sectors = queue_max_sectors(bdev_get_queue(bio->bi_bdev));
	struct bio *split;

	if (bio_sectors(bio) <= max_sectors)
		return bio;

	bio->bi_opf &= ~REQ_NOWAIT;
	split = bio_split(bio, max_sectors, GFP_NOIO,
			  &bio->bi_bdev->bd_disk->bio_split);
	if (IS_ERR(split)) {
		bio->bi_status = errno_to_blk_status(PTR_ERR(split));
		bio_endio(bio);
		return NULL;
	}
	bio_chain(split, bio);
	trace_block_split(split, bio->bi_iter.bi_sector);
	md_submit_rest(bio);
	return split;
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
		/*
		 * It completes in the poller, after submit_bio() returned:
		 * too late for the submitter to retry a BLK_STS_AGAIN.
		 */
		lower->bi_opf &= ~REQ_NOWAIT;
		node->bio = lower;
		node->end_io = lower->bi_end_io;
		node->private = lower->bi_private;
		node->done = false;
		lower->bi_end_io = md_poll_lower_endio;
		lower->bi_private = node;
		/* Still queued on current->bio_list: it cannot complete yet. */
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
	return bio_poll_links(bio, iob, flags, md_poll_one);
}
