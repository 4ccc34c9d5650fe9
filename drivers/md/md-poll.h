/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Polled I/O through md.
 *
 * md serves a polled bio, the upper bio, by sending lower bios to its
 * members: the upper bio's own clone for linear and raid0, a read from one
 * mirror for raid1 and raid10.  md_submit_lower() links a lower bio sent
 * from the upper bio's submission to the upper bio with the block layer's
 * stacked poll list, <linux/blk-stack-poll.h>, and md_poll_bio() polls it.
 *
 * Completion: a linked lower bio's ->bi_end_io only marks it done; the
 * poller that finds it done runs the lower bio's own completion.  So the
 * upper bio, which the lower bio's completion completes, stays in flight
 * for as long as the link is listed, as the poll list requires, and the
 * object that owns the lower bio and embeds the node (struct md_io_clone,
 * struct r1bio, struct r10bio) lives until the poller is done with it.
 *
 * A linked lower bio that the device below fails with BLK_STS_AGAIN (no
 * tag for a REQ_NOWAIT bio) is sent again from a worker, by interrupt: the
 * poller would see the error too late to retry, and must not wait for a
 * tag its own polled bios may hold.
 *
 * Lower bios md sends later, from its thread or from a plug callback, must
 * not be polled: they are sent with REQ_POLLED cleared and complete by
 * interrupt; so are all writes to raid1 and raid10.
 */
#ifndef _MD_POLL_H
#define _MD_POLL_H

#include <linux/blk-stack-poll.h>
#include <linux/workqueue.h>

struct bio;
struct io_comp_batch;

/**
 * struct md_poll_node - a polled lower bio and its deferred completion
 * @link: in the poll list of the upper bio
 * @bio: the lower bio
 * @end_io: @bio's own ->bi_end_io, run by the poller
 * @private: @bio's own ->bi_private
 * @done: @bio has completed; written once, by its ->bi_end_io
 * @retry_work: sends @bio again after a BLK_STS_AGAIN
 */
struct md_poll_node {
	struct bio_poll_link	link;
	struct bio		*bio;
	bio_end_io_t		*end_io;
	void			*private;
	bool			done;
	struct work_struct	retry_work;
};

void md_submit_lower(struct md_poll_node *node, struct bio *bio,
		     struct bio *lower);
void md_submit_clone(struct bio *clone);
int md_poll_bio(struct bio *bio, struct io_comp_batch *iob,
		unsigned int flags);

#endif /* _MD_POLL_H */
