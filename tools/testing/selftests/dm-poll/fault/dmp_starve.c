// SPDX-License-Identifier: GPL-2.0
/*
 * dmp_starve - starve one mempool of an md array or a DM device for the
 * tasks of one name,
 * as memory pressure would once others hold the pool's reserve: the pool's
 * allocator fails for them, and its reserve is taken away and stays empty
 * (elements freed meanwhile go back to the allocator), so that a task that
 * may wait waits until the starvation ends.  A task
 * that must not sleep in md's submission (io_uring's ring task, issuing a
 * REQ_NOWAIT bio or the parts of a split polled one) then shows whether md
 * allocates without waiting and unwinds, or waits for a reserve that only
 * its own polling refills.
 *
 *   comm=NAME        the tasks starved: those named NAME, io_uring's workers
 *                    excepted, in task context only
 *   io_workers=1     io_uring's workers are starved too, whatever their name
 *   pool=MD:POOL     starve POOL of the array /dev/MD: "clone" (its
 *                    io_clone_set, md_account_bio()'s clones), "bio" (its
 *                    bio_set: splits, raid1 and raid10 member clones),
 *                    "r1bio" or "r10bio" (raid1's and raid10's per-bio
 *                    state), "split" (the array disk's bio_split: the
 *                    parts md_submit_polled() and the block layer split
 *                    off), "clone-pi" or "bio-pi" (the integrity payload
 *                    pools of io_clone_set and bio_set, which a member
 *                    with protection information draws on); an empty
 *                    value gives the pool back
 *   pool=dm-N:POOL   starve POOL of the bio-based DM device /dev/dm-N: "io"
 *                    (io_bs, each bio's dm_io and first clone) or "bs"
 *                    (bs, the other clones), or "io-pi" or "bs-pi" (their
 *                    integrity payload pools), with lend=1 only: a task
 *                    waiting for a hidden reserve would hold up a suspend
 *   lend=1           starve the allocator only: the reserve stays and is
 *                    lent to the starved tasks, as when memory is short and
 *                    the reserve full; whoever holds its elements then holds
 *                    up the next task that needs one (read when pool= is set)
 *   stat_starved     allocations that failed because of the starvation
 *
 * The device is held open while starved, so that it cannot be stopped or
 * removed; an array must not change level meanwhile (the pool would go
 * with its personality), nor a DM device's table be swapped (a bio-based
 * table swap replaces the pools: giving one back then only warns).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/blkdev.h>
#include <linux/delay.h>
#include <linux/file.h>
#include <linux/mempool.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "dm-core.h"
#include "md.h"
#include "raid1.h"
#include "raid10.h"

/* The starved pool, its own allocator and the reserve hidden from it */
struct dmps_starved {
	struct file		*bdev_file;
	struct mapped_device	*dm;		/* a DM device's, or NULL */
	struct dm_md_mempools	*dm_pools;	/* the pool's, while it lasts */
	mempool_t		*pool;
	mempool_alloc_t		*alloc;
	int			min_nr;
	int			curr_nr;
	bool			hidden;		/* the reserve, not lent */
	char			name[64];
};

static DEFINE_MUTEX(dmps_lock);		/* serialises pool= and unload */
static struct dmps_starved dmps;	/* under dmps_lock */
static char dmps_comm[TASK_COMM_LEN];
static bool dmps_lend;
static bool dmps_io_workers;
static atomic_long_t dmps_starved_allocs = ATOMIC_LONG_INIT(0);
/* Calls of dmps_alloc() in progress, which may still call dmps.alloc */
static atomic_t dmps_callers = ATOMIC_INIT(0);

static bool dmps_starves_current(void)
{
	char comm[TASK_COMM_LEN];

	if (!in_task())
		return false;
	if (current->flags & PF_IO_WORKER)
		return READ_ONCE(dmps_io_workers);
	get_task_comm(comm, current);
	return !strncmp(comm, dmps_comm, TASK_COMM_LEN);
}

static void *dmps_alloc(gfp_t gfp, void *pool_data)
{
	mempool_alloc_t *alloc = READ_ONCE(dmps.alloc);
	void *element = NULL;

	atomic_inc(&dmps_callers);
	if (dmps_starves_current())
		atomic_long_inc(&dmps_starved_allocs);
	else
		element = alloc(gfp, pool_data);
	atomic_dec(&dmps_callers);
	return element;
}

/*
 * Starve @pool: make its allocator fail and, unless it is lent, hide its
 * reserve and keep mempool_free() from refilling it (with min_nr 0 it
 * frees every element).  A hidden reserve stays where mempool keeps it,
 * as it keeps it (poisoned for KASAN): only mempool may move it.
 *
 * mempool poisons what it puts in its reserve, and unpoisons what it
 * takes out, only while ->alloc is its own (kasan_poison_element()): a
 * lent reserve is taken out before ->alloc changes and given back after,
 * unpoisoned, so that KASAN does not take its use for a use after free.
 */
static int dmps_starve(mempool_t *pool, bool lend)
{
	void **lent = NULL;
	unsigned long flags;
	int n = 0;

	if (lend) {
		lent = kmalloc_array(pool->min_nr, sizeof(*lent), GFP_KERNEL);
		if (!lent)
			return -ENOMEM;
		for (; n < pool->min_nr; n++) {
			lent[n] = mempool_alloc_preallocated(pool);
			if (!lent[n])
				break;
		}
	}
	dmps.pool = pool;
	dmps.alloc = pool->alloc;
	dmps.hidden = !lend;
	spin_lock_irqsave(&pool->lock, flags);
	if (dmps.hidden) {
		dmps.min_nr = pool->min_nr;
		dmps.curr_nr = pool->curr_nr;
		pool->curr_nr = 0;
		WRITE_ONCE(pool->min_nr, 0);
	}
	WRITE_ONCE(pool->alloc, dmps_alloc);
	spin_unlock_irqrestore(&pool->lock, flags);
	while (n)
		mempool_free(lent[--n], pool);
	kfree(lent);
	return 0;
}

/* Give the starved pool back its allocator and its reserve */
static void dmps_feed(void)
{
	mempool_t *pool = dmps.pool;
	unsigned long flags;

	if (!pool)
		return;
	/* A table swap freed the pool, with its allocator: leave it */
	if (WARN_ON_ONCE(dmps.dm && READ_ONCE(dmps.dm->mempools) != dmps.dm_pools))
		goto out;
	spin_lock_irqsave(&pool->lock, flags);
	WRITE_ONCE(pool->alloc, dmps.alloc);
	if (dmps.hidden) {
		pool->curr_nr = dmps.curr_nr;
		WRITE_ONCE(pool->min_nr, dmps.min_nr);
	}
	spin_unlock_irqrestore(&pool->lock, flags);
	/* What mempool_free() would have done, had it refilled the reserve */
	wake_up(&pool->wait);
out:
	dmps.dm = NULL;
	dmps.pool = NULL;
	fput(dmps.bdev_file);
	dmps.bdev_file = NULL;
	dmps.name[0] = '\0';
	/*
	 * A caller may have read the old ->alloc and not be in dmps_alloc()
	 * yet, or have left dmps_callers and not returned: a tasks grace
	 * period waits for those, preempted there; dmps_callers for those in
	 * the pool's own allocator, which may sleep.
	 */
	synchronize_rcu_tasks();
	while (atomic_read(&dmps_callers))
		usleep_range(1000, 2000);
	synchronize_rcu_tasks();
	module_put(THIS_MODULE);
}

/*
 * The integrity payload pool of @bs, or NULL: a bio set has one only where
 * its clones go to a device with protection information.
 */
static mempool_t *dmps_pi_pool(struct bio_set *bs)
{
#ifdef CONFIG_BLK_DEV_INTEGRITY
	if (mempool_initialized(&bs->bio_integrity_pool))
		return &bs->bio_integrity_pool;
#endif
	return NULL;
}

/* The pool @what of @mddev, or NULL if it has none */
static mempool_t *dmps_md_pool(struct mddev *mddev, const char *what)
{
	int level = mddev->pers ? mddev->pers->level : -1;

	if (!strcmp(what, "clone-pi"))
		return dmps_pi_pool(&mddev->io_clone_set);
	if (!strcmp(what, "bio-pi"))
		return dmps_pi_pool(&mddev->bio_set);
	if (!strcmp(what, "clone"))
		return &mddev->io_clone_set.bio_pool;
	if (!strcmp(what, "bio"))
		return &mddev->bio_set.bio_pool;
	if (!strcmp(what, "r1bio") && level == 1)
		return &((struct r1conf *)mddev->private)->r1bio_pool;
	if (!strcmp(what, "r10bio") && level == 10)
		return &((struct r10conf *)mddev->private)->r10bio_pool;
	if (!strcmp(what, "split") && mddev->gendisk)
		return &mddev->gendisk->bio_split.bio_pool;
	return NULL;
}

/*
 * The pool @what of the DM device @md, under its suspend_lock, or NULL if
 * it has none: no table yet, or request-based (no io_bs).
 */
static mempool_t *dmps_dm_pool(struct mapped_device *md, const char *what)
{
	struct dm_md_mempools *pools = md->mempools;
	mempool_t *pool = NULL;

	if (!pools)
		return NULL;
	if (!strcmp(what, "io"))
		pool = &pools->io_bs.bio_pool;
	else if (!strcmp(what, "bs"))
		pool = &pools->bs.bio_pool;
	else if (!strcmp(what, "io-pi"))
		pool = dmps_pi_pool(&pools->io_bs);
	else if (!strcmp(what, "bs-pi"))
		pool = dmps_pi_pool(&pools->bs);
	return pool && mempool_initialized(pool) ? pool : NULL;
}

/* Starve @what of the md array @disk; 0 or an error */
static int dmps_starve_md(struct gendisk *disk, const char *what)
{
	struct mddev *mddev = disk->private_data;
	mempool_t *pool;
	int ret;

	ret = mddev_lock(mddev);
	if (ret)
		return ret;
	pool = dmps_md_pool(mddev, what);
	if (pool) {
		ret = dmps_starve(pool, READ_ONCE(dmps_lend));
		if (!ret)
			__module_get(THIS_MODULE);
	} else {
		pr_err("pool %s refused: no such pool (clone, bio, r1bio, r10bio, split, clone-pi, bio-pi)\n",
		       what);
		ret = -EINVAL;
	}
	mddev_unlock(mddev);
	return ret;
}

/*
 * Starve @what of the DM device @disk, its reserve lent.  Its pools are
 * read under its suspend_lock, which a table swap holds; dmps_feed()
 * looks whether they are still the device's.
 */
static int dmps_starve_dm(struct gendisk *disk, const char *what)
{
	struct mapped_device *md = disk->private_data;
	mempool_t *pool;
	int ret = 0;

	if (!READ_ONCE(dmps_lend)) {
		pr_err("pool %s refused: a DM pool is starved with lend=1 only\n",
		       what);
		return -EINVAL;
	}
	mutex_lock(&md->suspend_lock);
	pool = dmps_dm_pool(md, what);
	if (pool) {
		ret = dmps_starve(pool, true);
		if (!ret) {
			__module_get(THIS_MODULE);
			dmps.dm = md;
			dmps.dm_pools = md->mempools;
		}
	} else {
		pr_err("pool %s refused: no such pool (io, bs, io-pi, bs-pi), no table, or not bio-based\n",
		       what);
		ret = -EINVAL;
	}
	mutex_unlock(&md->suspend_lock);
	return ret;
}

static int dmps_pool_set_locked(const char *val)
{
	char path[64], *what;
	struct gendisk *disk;
	struct file *file;
	int ret;

	dmps_feed();
	if (!*val)
		return 0;
	if (!*dmps_comm) {
		pr_err("pool=%s refused: set comm= first\n", val);
		return -EINVAL;
	}
	what = strchr(val, ':');
	if (!what || what == val || strchr(val, '/') ||
	    snprintf(path, sizeof(path), "/dev/%.*s", (int)(what - val), val) >=
	    sizeof(path)) {
		pr_err("pool=%s refused: must be MD:POOL or dm-N:POOL\n", val);
		return -EINVAL;
	}
	what++;
	file = bdev_file_open_by_path(path, BLK_OPEN_READ, NULL, NULL);
	if (IS_ERR(file)) {
		pr_err("pool=%s refused: cannot open %s\n", val, path);
		return PTR_ERR(file);
	}
	/* md names its disks mdN and DM dm-N, and nobody else does */
	disk = file_bdev(file)->bd_disk;
	if (!strncmp(disk->disk_name, "dm-", 3)) {
		ret = dmps_starve_dm(disk, what);
	} else if (!strncmp(disk->disk_name, "md", 2)) {
		ret = dmps_starve_md(disk, what);
	} else {
		pr_err("pool=%s refused: %s is neither md nor DM\n", val, path);
		ret = -EINVAL;
	}
	if (ret)
		goto out_put;
	dmps.bdev_file = file;
	strscpy(dmps.name, val);
	pr_info("starving %s for %s%s\n", val, dmps_comm,
		dmps.hidden ? "" : ", its reserve lent");
	return 0;

out_put:
	fput(file);
	return ret;
}

static int dmps_pool_set(const char *val, const struct kernel_param *kp)
{
	char buf[64];
	int ret;

	if (strscpy(buf, val) < 0)
		return -EINVAL;
	strim(buf);
	mutex_lock(&dmps_lock);
	ret = dmps_pool_set_locked(buf);
	mutex_unlock(&dmps_lock);
	return ret;
}

static int dmps_pool_get(char *buf, const struct kernel_param *kp)
{
	int ret;

	mutex_lock(&dmps_lock);
	ret = sysfs_emit(buf, "%s\n", dmps.name);
	mutex_unlock(&dmps_lock);
	return ret;
}

static const struct kernel_param_ops dmps_pool_ops = {
	.set	= dmps_pool_set,
	.get	= dmps_pool_get,
};

static int dmps_comm_set(const char *val, const struct kernel_param *kp)
{
	char buf[TASK_COMM_LEN];
	size_t len = strcspn(val, "\n");

	if (len >= TASK_COMM_LEN) {
		pr_err("comm=%.*s refused: longer than a task's name\n",
		       (int)len, val);
		return -EINVAL;
	}
	memset(buf, 0, sizeof(buf));
	memcpy(buf, val, len);
	mutex_lock(&dmps_lock);
	memcpy(dmps_comm, buf, sizeof(dmps_comm));
	mutex_unlock(&dmps_lock);
	return 0;
}

static int dmps_comm_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", dmps_comm);
}

static const struct kernel_param_ops dmps_comm_ops = {
	.set	= dmps_comm_set,
	.get	= dmps_comm_get,
};

static int dmps_stat_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&dmps_starved_allocs));
}

/* The counter is read only; insmod would otherwise call ->set with a value */
static int dmps_stat_set(const char *val, const struct kernel_param *kp)
{
	pr_err("%s is a counter and cannot be set\n", kp->name);
	return -EINVAL;
}

static const struct kernel_param_ops dmps_stat_ops = {
	.set	= dmps_stat_set,
	.get	= dmps_stat_get,
};

module_param_cb(comm, &dmps_comm_ops, NULL, 0644);
MODULE_PARM_DESC(comm, "name of the tasks starved");
module_param_named(io_workers, dmps_io_workers, bool, 0644);
MODULE_PARM_DESC(io_workers, "starve io_uring's workers too");
module_param_named(lend, dmps_lend, bool, 0644);
MODULE_PARM_DESC(lend, "leave the reserve to be lent to the starved tasks");
module_param_cb(pool, &dmps_pool_ops, NULL, 0644);
MODULE_PARM_DESC(pool, "MD:POOL (clone, bio, r1bio, r10bio, split, clone-pi, bio-pi) or dm-N:POOL (io, bs, io-pi, bs-pi) to starve; empty: none");
module_param_cb(stat_starved, &dmps_stat_ops, NULL, 0444);
MODULE_PARM_DESC(stat_starved, "allocations failed by the starvation");

static void __exit dmps_exit(void)
{
	/* A starved pool holds a module reference: nothing is starved here */
	WARN_ON_ONCE(dmps.pool);
}

static int __init dmps_init(void)
{
	return 0;
}

module_init(dmps_init);
module_exit(dmps_exit);
MODULE_DESCRIPTION("starves an md or DM device's mempool for a task, for the dm-poll selftests");
MODULE_LICENSE("GPL");
