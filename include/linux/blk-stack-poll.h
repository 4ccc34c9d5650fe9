/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Polling for bio-based stacking drivers.
 *
 * A stacking driver (device-mapper, md) that gets a polled bio, the upper
 * bio, and sends polled bios of its own to the devices below, the lower
 * bios, must find those again when the submitter polls the upper bio
 * through ->poll_bio().  The driver embeds a struct bio_poll_link in the
 * object that owns each lower bio, links it to the upper bio with
 * bio_poll_link_add() as it submits, and calls bio_poll_links() from its
 * ->poll_bio().
 *
 * Representation: the list head lives in the upper bio's ->bi_private,
 * which belongs to whoever submitted the upper bio and is only read when
 * the upper bio completes; the displaced value travels in every link and
 * is put back before the upper bio can complete.  BIO_POLL_LINKED in
 * ->bi_flags marks a bio whose ->bi_private is a list head.  No clone or
 * split inherits ->bi_flags, so the marker never reaches a lower driver,
 * and it cannot collide with a driver's use of REQ_DRV.
 *
 * Rules, for the driver:
 * - Links are added only while the upper bio is being submitted: from the
 *   driver's ->submit_bio() for it, including resubmissions of its split
 *   remainder from that same submit_bio() call.  A bio is polled only
 *   after submit_bio() returned, so adding and polling never overlap.  A
 *   bio the driver resubmits later, from another context, must not be
 *   linked: clear REQ_POLLED on it first (bio_clear_polled()).
 * - One poller at a time: ->poll_bio() of an upper bio is called by its
 *   submitter only (io_uring's iopoll, or the task waiting for the bio).
 * - Each link holds a reference that keeps the upper bio from completing
 *   until the poll_one callback of bio_poll_links() reports the link
 *   done; the callback drops that reference, which may complete the upper
 *   bio.  After the callback returned true the link is not touched again.
 */
#ifndef _LINUX_BLK_STACK_POLL_H
#define _LINUX_BLK_STACK_POLL_H

#include <linux/blk_types.h>

struct io_comp_batch;

/**
 * struct bio_poll_link - one lower bio to poll for an upper bio
 * @next: the next link of the same upper bio
 * @saved_private: the upper bio's ->bi_private while the list displaces it
 */
struct bio_poll_link {
	struct bio_poll_link	*next;
	void			*saved_private;
};

/**
 * typedef bio_poll_one_fn - poll one link
 * @link: the link
 * @iob: completion batch passed to ->poll_bio()
 * @flags: BLK_POLL_* flags passed to ->poll_bio()
 *
 * Poll the lower bio behind @link, typically with bio_poll().  Return
 * true once it has completed and the link's reference on the upper bio
 * has been dropped; false to be called again on the next poll.
 */
typedef bool bio_poll_one_fn(struct bio_poll_link *link,
			     struct io_comp_batch *iob, unsigned int flags);

void bio_poll_link_add(struct bio *bio, struct bio_poll_link *link);
int bio_poll_links(struct bio *bio, struct io_comp_batch *iob,
		   unsigned int flags, bio_poll_one_fn *poll_one);

#endif /* _LINUX_BLK_STACK_POLL_H */
