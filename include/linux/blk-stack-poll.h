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
 * the upper bio completes; the displaced value travels with the list and
 * is put back before the upper bio can complete.  The upper bio's
 * ->bi_cookie, which a bio-based device has no other use for, says
 * whether ->bi_private heads a list and serves as the list's lock.
 * Nothing is marked in ->bi_opf or ->bi_flags: the former is copied into
 * every clone, and the latter is written without atomics by the block
 * layer (bio_inc_remaining()) from wherever a split is completed.
 *
 * Rules, for the driver:
 * - Links are added only while the upper bio is being submitted: from the
 *   driver's ->submit_bio() for it, including resubmissions of its split
 *   remainder from that same submit_bio() call, in task context (never
 *   from an interrupt: the list's lock spins).  A bio the driver
 *   resubmits later, from another context, must not be linked: clear
 *   REQ_POLLED on it first (bio_clear_polled()).
 * - A driver whose disk has BLK_FEAT_POLL_SPLIT keeps the parts of a
 *   polled bio it splits polled, splitting it itself (bio_split_polled())
 *   rather than having the rest submitted again, links their lower bios
 *   to the bio the submitter polls (bio_poll_upper()), and never waits in
 *   the submitter once a part may be linked: nobody polls the part until
 *   the submitter returns.  A part that would wait is sent later,
 *   unpolled.  The parts of a REQ_NOWAIT bio lose the flag, since none
 *   may fail with BLK_STS_AGAIN once another is sent; the driver keeps
 *   their lower bios from waiting for a tag the linked ones may hold.
 * - Any task may poll: io_uring polls a bio through a pointer that may by
 *   then name a reused bio (see iocb_bio_iopoll()), so ->poll_bio() can be
 *   called for a bio that another task polls, or is still submitting, or
 *   that another driver now owns.  bio_poll_links() takes the whole list
 *   while it polls; a concurrent poller finds it empty.  It gives back,
 *   untouched, the list of a bio now on a disk whose ->poll_bio() is not
 *   the caller.
 * - Each link holds a reference that keeps the upper bio from completing
 *   until the poll_one callback of bio_poll_links() reports the link
 *   done; the callback drops that reference, which may complete the upper
 *   bio.  After the callback returned true the link is not touched again.
 * - Or the lower bio's completion drops it, once bio_poll_link_del() has
 *   taken the link off the list, before the lower bio counts as done.
 */
#ifndef _LINUX_BLK_STACK_POLL_H
#define _LINUX_BLK_STACK_POLL_H

#include <linux/blk_types.h>

struct io_comp_batch;

/**
 * struct bio_poll_link - one lower bio to poll for an upper bio
 * @next: the next link of the same upper bio
 * @saved_private: in the first link of a list, the upper bio's ->bi_private
 *	that the list displaces
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

/* The ->poll_bio() method of a block device */
typedef int bio_poll_owner_fn(struct bio *bio, struct io_comp_batch *iob,
			      unsigned int flags);

void bio_poll_link_add(struct bio *bio, struct bio_poll_link *link);
bool bio_poll_link_del(struct bio *bio, struct bio_poll_link *link);
struct bio *bio_poll_upper(struct bio *bio);
int bio_poll_links(struct bio *bio, struct io_comp_batch *iob,
		   unsigned int flags, bio_poll_one_fn *poll_one,
		   bio_poll_owner_fn *owner);

#endif /* _LINUX_BLK_STACK_POLL_H */
