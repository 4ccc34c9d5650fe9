/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Polled I/O through md.
 *
 * md serves a polled bio, the upper bio, by sending lower bios to its
 * members: the upper bio's own clone for linear and raid0, a read from one
 * mirror for raid1 and raid10.  md_submit_lower() links a lower bio sent
 * from the upper bio's submission to the upper bio with the block layer's
 * stacked poll list, <linux/blk-stack-poll.h>, and md_poll_bio() polls it.
 * Under dm-raid the upper bio is DM's clone, on DM's disk: DM polls it
 * through the target, which calls md_poll_clone().
 *
 * Completion: a linked lower bio's ->bi_end_io takes its link off the
 * list and runs the lower bio's own completion, so that the upper bio
 * completes in the same poll pass.  Where it cannot (a poller holds the
 * list), it only marks the node done, and that poller runs the lower
 * bio's own completion.  So the upper bio, which the lower bio's
 * completion completes, stays in flight for as long as the link is
 * listed, as the poll list requires, and the object that owns the lower
 * bio and embeds the node (struct md_io_clone, struct r1bio, struct
 * r10bio) lives until nothing can poll the node any more.
 *
 * A linked lower bio that the device below refuses at submission, with
 * BLK_STS_AGAIN (no tag for a REQ_NOWAIT bio) or BLK_STS_NOTSUPP (it lost
 * its poll queues), is sent again once, unpolled, from a worker: the
 * poller would see the error too late to retry, and must not wait for a
 * tag its own polled bios may hold.
 *
 * Linear and raid0 arrays (BLK_FEAT_POLL_SPLIT) poll the parts of the
 * polled bios they split at their limits or at a member or chunk
 * boundary: each part's lower bio is linked to the bio the submitter
 * polls.  All the parts are served from the submission of that bio: md
 * splits it to the array's limits itself (md_submit_polled()), raid0
 * maps both parts of a chunk split at once and linear serves the rest of
 * a bio across a member in place, so that nothing makes the rest wait for
 * a frozen queue, throttles it or hands it to a rescuer while parts are
 * linked that only the submitter will poll.  The parts run under one
 * active_io reference, taken before the first is sent, so that a suspend
 * waits for them all, never they for it.  A part that cannot be allocated
 * without waiting is sent from a worker, unpolled (md_defer_polled()).
 * REQ_NOWAIT bios are split too: the parts lose the flag, so that none
 * fails with BLK_STS_AGAIN once another was sent, and their lower bios
 * get it back, so that none waits for a tag.
 *
 * Where the submitter must not sleep, for a REQ_NOWAIT bio or a part of a
 * split polled bio, linear and raid0 clone without waiting
 * (md_submit_gfp()): once memory is short, a mempool's reserve returns
 * only with the bios that hold it, the submitter's own polled bios among
 * them, and the parts split before this one are not even sent.  What
 * cannot be allocated so is unwound before anything of it is sent: a
 * REQ_NOWAIT bio fails with BLK_STS_AGAIN, a part is sent from a worker
 * (md_wouldblock_or_defer()).  raid1 and raid10 allocate a REQ_NOWAIT
 * bio's r1bio or r10bio, its accounting clone and a read's mirror clone
 * without waiting too.  They still allocate with GFP_NOIO, REQ_NOWAIT or
 * not, the mirror clones of a write, from the bio_set that polled reads'
 * mirror clones come from, raid10's discards, the flushes of
 * md_flush_request() and raid1's write-behind copies, as do the blocking
 * bios of a task that also polls.  None of them waits for a reserve that
 * the task's own polled bios hold: a polled bio that may hold an element
 * of one of md's reserves, its clones', its split's or its r1bio's or
 * r10bio's, goes by interrupt, or is unwound where its submitter must not
 * wait (md_poll_unpoll_lent()).  The integrity payload that a member
 * with protection information adds to a polled clone comes from
 * kmalloc(), not from the integrity pool of md's bio set
 * (bio_integrity_alloc()).
 *
 * A task that waits for the array's I/O to drain (a suspend, a quiesce,
 * raid1's and raid10's freezes but the read-error one) waits for polled
 * bios that only their submitters poll, and those may be waiting for it,
 * with their next bio.  It polls the members' poll queues meanwhile
 * (md_poll_members()).  A member that is itself a stacking driver is not
 * polled so; the block layer's reaper bounds what that costs.
 *
 * raid1 and raid10 poll none of the bios they split: they clear
 * REQ_POLLED on both parts, as the block layer does, since the rest may
 * wait for a barrier; REQ_NOWAIT bios that they would split fail whole
 * (md_split_would_block()).  Lower bios md sends later, from its thread
 * or from a plug callback, must not be polled either: they are sent with
 * REQ_POLLED cleared and complete by interrupt; so are all writes to
 * raid1 and raid10.
 */
#ifndef _MD_POLL_H
#define _MD_POLL_H

#include <linux/bio.h>
#include <linux/blk-stack-poll.h>
#include <linux/llist.h>

struct bio;
struct io_comp_batch;
struct mddev;

/**
 * struct md_poll_node - a polled lower bio and its deferred completion
 * @link: in the poll list of the upper bio
 * @mddev: the array that sends @bio
 * @bio: the lower bio
 * @upper: the upper bio @bio is sent for
 * @end_io: @bio's own ->bi_end_io, run once @bio is unlinked
 * @private: @bio's own ->bi_private
 * @resend: in the array's list of lower bios to send again
 * @size: @bio's size as sent, to tell a refused bio from a started one
 * @done: @bio has completed; written once, by its ->bi_end_io
 * @resent: @bio was sent again once, unpolled
 */
struct md_poll_node {
	struct bio_poll_link	link;
	struct mddev		*mddev;
	struct bio		*bio;
	struct bio		*upper;
	bio_end_io_t		*end_io;
	void			*private;
	struct llist_node	resend;
	unsigned int		size;
	bool			done;
	bool			resent;
};

/*
 * Whether @bio is a part of a split polled bio, or the rest such parts are
 * chained to, whose other parts may be linked.  BIO_CHAIN may also be set
 * for a flush; such a bio is only treated as a part needlessly.
 */
static inline bool md_poll_is_part(struct bio *bio)
{
	return bio_poll_upper(bio) != bio || bio_flagged(bio, BIO_CHAIN);
}

/**
 * md_poll_unpoll_lent - send by interrupt a polled bio that may hold a reserve
 * @lower: a polled lower bio, not sent yet, that it or what it is sent
 *	with (its clone, its split, its r1bio) may hold an element of a
 *	mempool's reserve
 * @may_wait: its submitter may wait
 *
 * Once memory is short, md's mempools lend their reserves, and a polled
 * lower bio holds what it was allocated until its submitter polls it.
 * That submitter's next blocking bio (a pwrite() between polled reads, a
 * journal commit) may wait for the same reserve: it would wait for its
 * own polling.  So such a bio goes by interrupt, and gives back what it
 * holds so, unless its submitter must not wait (a REQ_NOWAIT bio, a part
 * of a split polled bio): then the caller unwinds it, as when the
 * allocation fails.
 *
 * Return: false if the caller must unwind @lower unsent.
 */
static inline bool md_poll_unpoll_lent(struct bio *lower, bool may_wait)
{
	if (!may_wait)
		return false;
	bio_clear_polled(lower);
	return true;
}

void md_submit_lower(struct mddev *mddev, struct md_poll_node *node,
		     struct bio *bio, struct bio *lower);
void md_submit_clone(struct bio *clone);
int md_poll_bio(struct bio *bio, struct io_comp_batch *iob,
		unsigned int flags);
int md_poll_clone(struct bio *clone, struct io_comp_batch *iob,
		  unsigned int flags);
void md_poll_resend_work(struct work_struct *work);
bool md_poll_members(struct mddev *mddev);
int md_poll_init(void);
void md_poll_exit(void);

#endif /* _MD_POLL_H */
