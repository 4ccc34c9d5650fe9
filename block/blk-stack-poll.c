// SPDX-License-Identifier: GPL-2.0
/*
 * Polling for bio-based stacking drivers.  The representation, and the
 * rules a driver follows, are described in <linux/blk-stack-poll.h>.
 */
#include <linux/bio.h>
#include <linux/blk-stack-poll.h>
#include <linux/export.h>

static struct bio_poll_link **bio_poll_head(struct bio *bio)
{
	return (struct bio_poll_link **)&bio->bi_private;
}

/**
 * bio_poll_link_add - link a lower bio to be polled for an upper bio
 * @bio: the upper bio, being submitted with REQ_POLLED
 * @link: the link, embedded in the object that owns the lower bio
 *
 * The first link displaces @bio's ->bi_private and makes bio_poll() call
 * the driver's ->poll_bio() for @bio.  Only call this while @bio is being
 * submitted, and with a reference that keeps @bio from completing until
 * the link is polled done.
 */
void bio_poll_link_add(struct bio *bio, struct bio_poll_link *link)
{
	struct bio_poll_link **head = bio_poll_head(bio);

	if (!bio_flagged(bio, BIO_POLL_LINKED)) {
		link->saved_private = bio->bi_private;
		link->next = NULL;
		bio_set_flag(bio, BIO_POLL_LINKED);
		/* Any cookie but BLK_QC_T_NONE lets bio_poll() reach ->poll_bio */
		bio->bi_cookie = ~BLK_QC_T_NONE;
	} else {
		link->saved_private = (*head)->saved_private;
		link->next = *head;
	}
	*head = link;
}
EXPORT_SYMBOL_GPL(bio_poll_link_add);

/**
 * bio_poll_links - poll the lower bios linked to an upper bio
 * @bio: the upper bio
 * @iob: completion batch passed to ->poll_bio()
 * @flags: BLK_POLL_* flags passed to ->poll_bio()
 * @poll_one: called for each link; returns true once the link is done
 *
 * Meant to be called from a stacking driver's ->poll_bio().  Links that
 * are done leave the list; when none is left, @bio has its ->bi_private
 * back and may have completed.
 *
 * Return: 1 when every link is done, after which the caller must not touch
 * @bio; 0 while some remain, or if nothing was linked to @bio.
 */
int bio_poll_links(struct bio *bio, struct io_comp_batch *iob,
		   unsigned int flags, bio_poll_one_fn *poll_one)
{
	struct bio_poll_link *link, *next, *pending = NULL;

	if (!bio_flagged(bio, BIO_POLL_LINKED))
		return 0;

	/*
	 * Put ->bi_private back before polling: the link that completes last
	 * completes @bio, whose ->bi_end_io reads it.  While links remain,
	 * nothing else touches @bio (see the rules in the header).
	 */
	link = *bio_poll_head(bio);
	bio->bi_private = link->saved_private;
	bio_clear_flag(bio, BIO_POLL_LINKED);

	for (; link; link = next) {
		next = link->next;
		if (!poll_one(link, iob, flags)) {
			link->next = pending;
			pending = link;
		}
	}
	if (!pending)
		return 1;

	bio_set_flag(bio, BIO_POLL_LINKED);
	*bio_poll_head(bio) = pending;
	return 0;
}
EXPORT_SYMBOL_GPL(bio_poll_links);
