// SPDX-License-Identifier: GPL-2.0
/*
 * Polling for bio-based stacking drivers.  The representation, and the
 * rules a driver follows, are described in <linux/blk-stack-poll.h>.
 */
#include <linux/atomic.h>
#include <linux/bio.h>
#include <linux/blk-stack-poll.h>
#include <linux/export.h>
#include <linux/lockdep.h>
#include <linux/preempt.h>
#include <linux/processor.h>

#include "blk.h"

/*
 * The upper bio's ->bi_cookie says what its ->bi_private holds.  A
 * bio-based device has no hardware queue for the cookie to name, and
 * bio_poll() only tells BLK_QC_T_NONE, nothing to poll, from the rest:
 *
 *   BLK_QC_T_NONE        ->bi_private is the submitter's
 *   BIO_POLL_LIST        ->bi_private heads a list of links
 *   BIO_POLL_LIST_BUSY   someone is changing the list or ->bi_private:
 *                        nobody else reads or writes either
 *
 * A task moves the cookie to BIO_POLL_LIST_BUSY with a cmpxchg (acquire)
 * and out of it with a store (release), with preemption off in between:
 * it stays busy for a few stores only, never across a poll, so that
 * waiting for it can spin.  Only tasks wait for it, never an interrupt,
 * which could spin for the task it interrupted; bio_poll_link_del(),
 * which any context may call, tries once and gives up.
 *
 * Neither state is 0, the cookie bio_reset() leaves: a bio freed, reused
 * and reset (->bi_private then the caller's, an on-stack completion for
 * submit_bio_wait()) must not look like a list to a task polling it
 * through a stale pointer (see iocb_bio_iopoll()).  Such a task may also
 * read the cookie of a bio's life on this device and ->bi_bdev of its next
 * life on a blk-mq device, whose blk_mq_poll() finds no hardware queue of
 * these numbers.  Neither is a segment count that zone write plugging may
 * leave in the same field (->__bi_nr_segments).
 */
#define BIO_POLL_LIST		(BLK_QC_T_NONE - 2)
#define BIO_POLL_LIST_BUSY	(BLK_QC_T_NONE - 1)

/*
 * How far bio_poll_link_del() looks for a link.  A large bio split into
 * many pieces makes a long list whose oldest links, which complete first,
 * are at its end: leave those to the poller rather than walk the list for
 * every piece.
 */
#define BIO_POLL_DEL_MAX	8

/*
 * Make @bio's list busy, with preemption off until the unlock; return
 * whether ->bi_private heads a list.
 */
static bool bio_poll_list_lock(struct bio *bio)
{
	blk_qc_t old;

	lockdep_assert_once(in_task());
	preempt_disable();
	for (;;) {
		old = READ_ONCE(bio->bi_cookie);
		if (old != BIO_POLL_LIST_BUSY &&
		    try_cmpxchg_acquire(&bio->bi_cookie, &old,
					BIO_POLL_LIST_BUSY))
			return old == BIO_POLL_LIST;
		cpu_relax();
	}
}

/*
 * Put the chain of links @first .. @last in front of @bio's list, which
 * may be empty.  The first link of a list keeps the ->bi_private that the
 * list displaces.
 */
static void bio_poll_list_push(struct bio *bio, struct bio_poll_link *first,
			       struct bio_poll_link *last)
{
	struct bio_poll_link *head = NULL;
	void *saved_private;

	if (bio_poll_list_lock(bio)) {
		head = bio->bi_private;
		saved_private = head->saved_private;
	} else {
		saved_private = bio->bi_private;
	}
	last->next = head;
	first->saved_private = saved_private;
	bio->bi_private = first;
	/* Unlock: pairs with the acquire of whoever takes the list next */
	smp_store_release(&bio->bi_cookie, BIO_POLL_LIST);
	preempt_enable();
}

/*
 * Take @bio's whole list, if it has one and nobody else is changing it,
 * and give @bio its ->bi_private back.
 */
static struct bio_poll_link *bio_poll_list_take(struct bio *bio)
{
	blk_qc_t old = BIO_POLL_LIST;
	struct bio_poll_link *list;

	lockdep_assert_once(in_task());
	preempt_disable();
	if (!try_cmpxchg_acquire(&bio->bi_cookie, &old, BIO_POLL_LIST_BUSY)) {
		preempt_enable();
		return NULL;
	}
	list = bio->bi_private;
	bio->bi_private = list->saved_private;
	/* Unlock: pairs with the acquire in bio_poll_list_lock() */
	smp_store_release(&bio->bi_cookie, BLK_QC_T_NONE);
	preempt_enable();
	return list;
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
	bio_poll_list_push(bio, link, link);
}
EXPORT_SYMBOL_GPL(bio_poll_link_add);

/**
 * bio_poll_link_del - unlink a lower bio that has completed
 * @bio: the upper bio
 * @link: a link added to @bio with bio_poll_link_add()
 *
 * Lets the completion of a lower bio drop the link's reference on @bio
 * itself, rather than leave that to the next poll of @bio, so that @bio
 * completes with the batch its lower bio completed in.  Never waits, so
 * any context may call it: it fails while another task changes or polls
 * @bio's list, for a link not added yet, and for one far down a long
 * list.  The caller must then leave the link to a poller, as without it.
 *
 * Return: true if @link was on @bio's list and is no longer: the caller
 * drops the link's reference.  False if a poller of @bio will find @link.
 */
bool bio_poll_link_del(struct bio *bio, struct bio_poll_link *link)
{
	blk_qc_t old = BIO_POLL_LIST;
	struct bio_poll_link *head, **pp;
	unsigned int n;
	bool found;

	preempt_disable();
	if (!try_cmpxchg_acquire(&bio->bi_cookie, &old, BIO_POLL_LIST_BUSY)) {
		preempt_enable();
		return false;
	}
	head = bio->bi_private;
	for (pp = &head, n = 0; *pp && *pp != link && n < BIO_POLL_DEL_MAX;
	     pp = &(*pp)->next, n++)
		;
	found = *pp == link;
	if (found) {
		*pp = link->next;
		if (!head) {
			bio->bi_private = link->saved_private;
			old = BLK_QC_T_NONE;
		} else {
			/* The first link keeps the displaced ->bi_private */
			if (link == bio->bi_private)
				head->saved_private = link->saved_private;
			bio->bi_private = head;
		}
	}
	/* Unlock: pairs with the acquire of whoever takes the list next */
	smp_store_release(&bio->bi_cookie, old);
	preempt_enable();
	return found;
}
EXPORT_SYMBOL_GPL(bio_poll_link_del);

/**
 * bio_poll_upper - the bio to link a part of a split polled bio to
 * @bio: a polled bio a driver serves: one it received, or a part that it
 *	or the block layer split off and chained to the rest
 *
 * A driver with BLK_FEAT_POLL_SPLIT keeps polled the parts of the polled
 * bios it splits, but the submitter polls only the bio it submitted, to
 * which the parts are chained: link the lower bios of a part to that bio.
 * Only chains within one disk count.  A bio that heads a list is the one
 * polled: its ->bi_private is not a parent to follow.
 *
 * Return: the bio to link @bio's lower bios to, @bio itself if it is not
 * such a part.
 */
struct bio *bio_poll_upper(struct bio *bio)
{
	struct bio *parent;

	while (bio->bi_end_io == bio_chain_endio &&
	       READ_ONCE(bio->bi_cookie) == BLK_QC_T_NONE) {
		parent = bio->bi_private;
		if (parent->bi_bdev->bd_disk != bio->bi_bdev->bd_disk)
			break;
		bio = parent;
	}
	return bio;
}
EXPORT_SYMBOL_GPL(bio_poll_upper);

/**
 * bio_poll_links - poll the lower bios linked to an upper bio
 * @bio: the upper bio
 * @iob: completion batch passed to ->poll_bio()
 * @flags: BLK_POLL_* flags passed to ->poll_bio()
 * @poll_one: called for each link; returns true once the link is done
 * @owner: the caller, the ->poll_bio() method of the driver that linked
 *	the lower bios
 *
 * Meant to be called from a stacking driver's ->poll_bio().  Takes the
 * links off @bio, gives @bio its ->bi_private back, polls each link and
 * puts back the links that are not done.  Another task polling @bio at
 * the same time finds no links and returns at once; so does a task that
 * polls @bio through a stale pointer after @bio was reused on a disk of
 * another driver.
 *
 * Return: 1 when every link taken is done, after which the caller must not
 * touch @bio; 0 while some remain, or if there was nothing to take.
 */
int bio_poll_links(struct bio *bio, struct io_comp_batch *iob,
		   unsigned int flags, bio_poll_one_fn *poll_one,
		   bio_poll_owner_fn *owner)
{
	struct bio_poll_link *link, *next, *first = NULL, *last = NULL;

	/*
	 * ->bi_private is back before any link is polled: the link that
	 * completes last completes @bio, whose ->bi_end_io reads it.
	 */
	link = bio_poll_list_take(bio);
	if (!link)
		return 0;
	/*
	 * bio_poll() chose @owner from the disk @bio was on when it looked;
	 * @bio may since have been freed and reused on a disk of another
	 * driver, whose links @poll_one cannot read.  The links taken keep
	 * @bio from completing, so its disk holds still now: give such a
	 * list back untouched.
	 */
	if (unlikely(bio->bi_bdev->bd_disk->fops->poll_bio != owner)) {
		for (last = link; last->next; last = last->next)
			;
		bio_poll_list_push(bio, link, last);
		return 0;
	}
	for (; link; link = next) {
		next = link->next;
		if (poll_one(link, iob, flags))
			continue;
		link->next = first;
		first = link;
		if (!last)
			last = link;
	}
	if (!first)
		return 1;
	/* The links left hold @bio: it has not completed. */
	bio_poll_list_push(bio, first, last);
	return 0;
}
EXPORT_SYMBOL_GPL(bio_poll_links);
