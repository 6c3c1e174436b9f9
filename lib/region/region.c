// SPDX-License-Identifier: MIT
/*
 * Region create/attach/reset and part addressing; the contract is in
 * include/tochain/region.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <tochain/barrier.h>
#include <tochain/region.h>
#include <tochain/ring.h>
#include <tochain/tsc.h>

#ifndef HUGETLBFS_MAGIC
#define HUGETLBFS_MAGIC 0x958458f6
#endif

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static uint32_t pow2_at_least(uint32_t v)
{
	uint32_t p = TCR_MIN_RING;

	while (p < v)
		p <<= 1;
	return p;
}

bool tcr_name_valid(const char *name)
{
	size_t n;

	if (!name)
		return false;
	n = strnlen(name, TCR_NAME_MAX);
	if (n == 0 || n >= TCR_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return false;
	}
	return true;
}

int tcr_geometry_compute(const struct tcr_params *p, struct tcr_geometry *g)
{
	uint64_t off;

	if (!p || !g)
		return -EINVAL;
	if (p->kind != TCR_KIND_GUEST && p->kind != TCR_KIND_HOST)
		return -EINVAL;
	if (p->nbufs == 0 || p->nbufs > TCR_MAX_BUFS)
		return -EINVAL;
	if (p->slot_size < TCR_MIN_SLOT || p->slot_size > TCR_MAX_SLOT ||
	    p->slot_size % TCR_CACHELINE)
		return -EINVAL;
	if (p->nchannels == 0 || p->nchannels > TCR_MAX_CHANNELS)
		return -EINVAL;
	if (p->nchains > TCR_MAX_CHAINS)
		return -EINVAL;
	if (p->ring_size && (p->ring_size & (p->ring_size - 1)))
		return -EINVAL;
	memset(g, 0, sizeof(*g));
	g->kind = p->kind;
	g->nbufs = p->nbufs;
	g->slot_size = p->slot_size;
	g->nchannels = p->nchannels;
	g->nchains = p->nchains;
	/* A ring can hold every buffer: a full ring never loses a buffer. */
	g->ring_size = p->ring_size ? p->ring_size : pow2_at_least(p->nbufs);
	if (g->ring_size < p->nbufs || g->ring_size > TCR_MAX_RING)
		return -EINVAL;
	g->ring_bytes = (uint32_t)tcr_ring_bytes(g->ring_size);
	g->channel_size = (uint32_t)(sizeof(struct tcr_channel) +
				     (uint64_t)TCR_CH_NRINGS * g->ring_bytes);

	off = sizeof(struct tcr_header);
	g->off_channels = off;
	off += (uint64_t)g->nchannels * g->channel_size;
	g->off_descs = align_up(off, TCR_CACHELINE);
	off = g->off_descs + (uint64_t)g->nbufs * sizeof(struct tcr_desc);
	g->off_chains = align_up(off, TCR_CACHELINE);
	off = g->off_chains + (uint64_t)g->nchains * sizeof(struct tcr_chain_counters);
	g->off_slots = align_up(off, TCR_PAGE);
	g->off_end = g->off_slots + (uint64_t)g->nbufs * g->slot_size;
	g->region_size = align_up(g->off_end, TCR_PAGE);
	if (g->region_size > (1ull << 40))
		return -E2BIG;
	return 0;
}

/* Write the whole formatted state; magic and READY are published last. */
static void format(struct tcr_region *r, const struct tcr_params *p, uint64_t generation)
{
	struct tcr_header *h = (struct tcr_header *)r->base;
	const struct tcr_geometry *g = &r->geo;
	const struct tcr_tsc_cal *cal = tcr_tsc_calibration();

	tc_store_release(&h->state, TCR_STATE_FORMATTING);
	tc_store_relaxed(&h->magic, 0);
	memset(r->base + sizeof(*h), 0, g->off_slots - sizeof(*h));
	h->version = TCR_LAYOUT_VERSION;
	h->header_size = sizeof(*h);
	h->region_size = r->map_size;
	h->kind = p->kind;
	memset(h->name, 0, sizeof(h->name));
	memcpy(h->name, p->name, strlen(p->name));
	h->nbufs = g->nbufs;
	h->slot_size = g->slot_size;
	h->nchannels = g->nchannels;
	h->ring_size = g->ring_size;
	h->nchains = g->nchains;
	h->channel_size = g->channel_size;
	h->ring_bytes = g->ring_bytes;
	h->reserved0 = 0;
	h->off_channels = g->off_channels;
	h->off_descs = g->off_descs;
	h->off_chains = g->off_chains;
	h->off_slots = g->off_slots;
	h->off_end = g->off_end;
	h->tsc_hz = cal->hz;
	h->tsc_mult = cal->mult;
	h->tsc_shift = cal->shift;
	memset(h->reserved, 0, sizeof(h->reserved));
	for (uint32_t i = 0; i < g->nbufs; i++) {
		struct tcr_desc *d = tcr_region_desc(r, i);

		d->slot = i;
		d->flow = TCR_FLOW_NONE;
	}
	for (uint32_t i = 0; i < g->nchains; i++)
		tcr_region_chain(r, i)->chain_id = i;
	tc_store_relaxed(&h->generation, generation);
	r->generation = generation;
	tc_store_relaxed(&h->magic, TCR_MAGIC);
	/* Pairs with the load-acquire of state in tcr_region_stale() and attach. */
	tc_store_release(&h->state, TCR_STATE_READY);
}

static struct tcr_region *handle_new(void *base, size_t size, int fd, uint32_t flags,
				     bool owns)
{
	struct tcr_region *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->base = base;
	r->map_size = size;
	r->fd = fd;
	r->flags = flags;
	r->owns_mapping = owns;
	return r;
}

struct tcr_region *tcr_region_create_mem(void *base, size_t size, const struct tcr_params *p)
{
	struct tcr_region *r;
	struct tcr_geometry g;
	int err;

	if (!base || !tcr_name_valid(p ? p->name : NULL)) {
		errno = EINVAL;
		return NULL;
	}
	err = tcr_geometry_compute(p, &g);
	if (err) {
		errno = -err;
		return NULL;
	}
	if (g.region_size > size || size % TCR_PAGE) {
		errno = ENOSPC;
		return NULL;
	}
	r = handle_new(base, size, -1, TCR_ATTACH_HOST, false);
	if (!r)
		return NULL;
	r->geo = g;
	memcpy(r->name, p->name, strlen(p->name) + 1);
	format(r, p, 1);
	return r;
}

static uint64_t backing_align(int fd)
{
	struct statfs sfs;

	if (fstatfs(fd, &sfs) == 0 && (unsigned long)sfs.f_type == HUGETLBFS_MAGIC)
		return (uint64_t)sfs.f_bsize;
	return TCR_PAGE;
}

struct tcr_region *tcr_region_create(const char *path, const struct tcr_params *p)
{
	const struct tcr_header *h;
	struct tcr_region *r;
	struct tcr_geometry g;
	uint64_t size, old_gen;
	struct stat st;
	void *base;
	int fd, err;

	if (!path || !p || !tcr_name_valid(p->name)) {
		errno = EINVAL;
		return NULL;
	}
	err = tcr_geometry_compute(p, &g);
	if (err) {
		errno = -err;
		return NULL;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st))
		goto out_close;
	/*
	 * Format in place: a guest (QEMU's memory backend, a stand-in
	 * process) may have the file mapped, and truncating it would take its
	 * pages away under it (SIGBUS beyond the end).  The file only grows;
	 * a larger one keeps its size, which the header then says.
	 */
	size = align_up(g.region_size, backing_align(fd));
	if ((uint64_t)st.st_size > size)
		size = (uint64_t)st.st_size;
	else if ((uint64_t)st.st_size < size && ftruncate(fd, (off_t)size))
		goto out_close;
	base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		goto out_close;
	r = handle_new(base, size, fd, TCR_ATTACH_HOST, true);
	if (!r)
		goto out_unmap;
	r->geo = g;
	memcpy(r->name, p->name, strlen(p->name) + 1);
	/*
	 * A region formatted before (a TOE restarted) gets the next
	 * generation, so that whoever is still attached to the old one sees
	 * it reset.  The old value is anyone's to have written: only "differs
	 * from it" matters.
	 */
	h = (const struct tcr_header *)base;
	old_gen = st.st_size >= (off_t)sizeof(*h) && tc_load_relaxed(&h->magic) == TCR_MAGIC ?
		tc_load_relaxed(&h->generation) : 0;
	format(r, p, old_gen + 1 ? old_gen + 1 : 1);
	return r;

out_unmap:
	err = errno;
	munmap(base, size);
	errno = err;
out_close:
	err = errno;
	close(fd);
	errno = err;
	return NULL;
}

/*
 * Validate the header of a mapping of @size bytes.  Each field is read
 * once into a local; the geometry is recomputed from the parameters and
 * every stored offset must match it.
 */
static int validate(struct tcr_region *r, size_t size)
{
	const struct tcr_header *h = (const struct tcr_header *)r->base;
	struct tcr_params p;
	struct tcr_geometry g;
	char name[TCR_NAME_MAX];
	uint64_t region_size;
	int err;

	if (size < sizeof(*h))
		return -EBADMSG;
	if (tc_load_acquire(&h->state) != TCR_STATE_READY)
		return -EAGAIN;
	if (tc_load_relaxed(&h->magic) != TCR_MAGIC)
		return -EBADMSG;
	if (tc_load_relaxed(&h->version) != TCR_LAYOUT_VERSION)
		return -EPROTONOSUPPORT;
	if (tc_load_relaxed(&h->header_size) != sizeof(*h))
		return -EBADMSG;
	memcpy(name, (const char *)h->name, sizeof(name));
	name[TCR_NAME_MAX - 1] = '\0';
	memset(&p, 0, sizeof(p));
	p.name = name;
	p.kind = tc_load_relaxed(&h->kind);
	p.nbufs = tc_load_relaxed(&h->nbufs);
	p.slot_size = tc_load_relaxed(&h->slot_size);
	p.nchannels = tc_load_relaxed(&h->nchannels);
	p.nchains = tc_load_relaxed(&h->nchains);
	p.ring_size = tc_load_relaxed(&h->ring_size);
	if (!tcr_name_valid(name) || p.ring_size == 0)
		return -EBADMSG;
	err = tcr_geometry_compute(&p, &g);
	if (err)
		return -EBADMSG;
	region_size = tc_load_relaxed(&h->region_size);
	if (region_size > size || g.region_size > region_size)
		return -EBADMSG;
	if (tc_load_relaxed(&h->channel_size) != g.channel_size ||
	    tc_load_relaxed(&h->ring_bytes) != g.ring_bytes ||
	    tc_load_relaxed(&h->off_channels) != g.off_channels ||
	    tc_load_relaxed(&h->off_descs) != g.off_descs ||
	    tc_load_relaxed(&h->off_chains) != g.off_chains ||
	    tc_load_relaxed(&h->off_slots) != g.off_slots ||
	    tc_load_relaxed(&h->off_end) != g.off_end)
		return -EBADMSG;
	r->geo = g;
	r->generation = tc_load_relaxed(&h->generation);
	memcpy(r->name, name, sizeof(name));
	return 0;
}

struct tcr_region *tcr_region_attach_mem(void *base, size_t size, uint32_t flags)
{
	struct tcr_region *r;
	int err;

	if (!base || !(flags & (TCR_ATTACH_HOST | TCR_ATTACH_GUEST))) {
		errno = EINVAL;
		return NULL;
	}
	r = handle_new(base, size, -1, flags, false);
	if (!r)
		return NULL;
	err = validate(r, size);
	if (err) {
		free(r);
		errno = -err;
		return NULL;
	}
	return r;
}

struct tcr_region *tcr_region_attach(const char *path, uint32_t flags)
{
	int prot = (flags & TCR_ATTACH_RDONLY) ? PROT_READ : PROT_READ | PROT_WRITE;
	struct tcr_region *r;
	struct stat st;
	void *base;
	int fd, err;

	if (!path || !(flags & (TCR_ATTACH_HOST | TCR_ATTACH_GUEST))) {
		errno = EINVAL;
		return NULL;
	}
	fd = open(path, ((flags & TCR_ATTACH_RDONLY) ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st))
		goto out_close;
	if (S_ISREG(st.st_mode)) {
		if (st.st_size < (off_t)sizeof(struct tcr_header)) {
			errno = EBADMSG;
			goto out_close;
		}
	} else if (!S_ISCHR(st.st_mode)) {
		errno = EINVAL;
		goto out_close;
	}
	/* A character device (guest driver) reports no size: map the header first. */
	if (!S_ISREG(st.st_mode)) {
		const struct tcr_header *h;
		uint64_t rs;

		base = mmap(NULL, TCR_PAGE, PROT_READ, MAP_SHARED, fd, 0);
		if (base == MAP_FAILED)
			goto out_close;
		h = base;
		rs = tc_load_relaxed(&h->region_size);
		munmap(base, TCR_PAGE);
		if (rs < TCR_PAGE || rs > (1ull << 40) || rs % TCR_PAGE) {
			errno = EBADMSG;
			goto out_close;
		}
		st.st_size = (off_t)rs;
	}
	base = mmap(NULL, (size_t)st.st_size, prot, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		goto out_close;
	r = handle_new(base, (size_t)st.st_size, fd, flags, true);
	if (!r)
		goto out_unmap;
	err = validate(r, (size_t)st.st_size);
	if (err) {
		free(r);
		errno = -err;
		goto out_unmap;
	}
	return r;

out_unmap:
	err = errno;
	munmap(base, (size_t)st.st_size);
	errno = err;
out_close:
	err = errno;
	close(fd);
	errno = err;
	return NULL;
}

void tcr_region_destroy(struct tcr_region *r)
{
	if (!r)
		return;
	if (r->owns_mapping)
		munmap(r->base, r->map_size);
	if (r->fd >= 0)
		close(r->fd);
	free(r);
}

int tcr_region_reset(struct tcr_region *r)
{
	struct tcr_params p = {
		.name = r->name,
		.kind = r->geo.kind,
		.nbufs = r->geo.nbufs,
		.slot_size = r->geo.slot_size,
		.nchannels = r->geo.nchannels,
		.nchains = r->geo.nchains,
		.ring_size = r->geo.ring_size,
	};

	if (!(r->flags & TCR_ATTACH_HOST) || (r->flags & TCR_ATTACH_RDONLY))
		return -EPERM;
	format(r, &p, r->generation + 1);
	return 0;
}

bool tcr_region_stale(const struct tcr_region *r)
{
	const struct tcr_header *h = tcr_region_header(r);

	return tc_load_acquire(&h->state) != TCR_STATE_READY ||
	       tc_load_relaxed(&h->generation) != r->generation;
}

void tcr_region_kill(struct tcr_region *r)
{
	tc_store_release(&tcr_region_header(r)->state, TCR_STATE_DEAD);
}

struct tcr_header *tcr_region_header(const struct tcr_region *r)
{
	return (struct tcr_header *)r->base;
}

struct tcr_channel *tcr_region_channel(const struct tcr_region *r, uint32_t ch)
{
	if (ch >= r->geo.nchannels)
		return NULL;
	return (struct tcr_channel *)(r->base + r->geo.off_channels +
				      (uint64_t)ch * r->geo.channel_size);
}

void *tcr_region_ring_mem(const struct tcr_region *r, uint32_t ch, enum tcr_channel_ring ring)
{
	uint8_t *c = (uint8_t *)tcr_region_channel(r, ch);

	if (!c || (unsigned int)ring >= TCR_CH_NRINGS)
		return NULL;
	return c + sizeof(struct tcr_channel) + (uint64_t)ring * r->geo.ring_bytes;
}

struct tcr_desc *tcr_region_desc(const struct tcr_region *r, uint32_t idx)
{
	if (idx >= r->geo.nbufs)
		return NULL;
	return (struct tcr_desc *)(r->base + r->geo.off_descs) + idx;
}

uint8_t *tcr_region_slot(const struct tcr_region *r, uint32_t idx)
{
	if (idx >= r->geo.nbufs)
		return NULL;
	return r->base + r->geo.off_slots + (uint64_t)idx * r->geo.slot_size;
}

struct tcr_chain_counters *tcr_region_chain(const struct tcr_region *r, uint32_t chain)
{
	if (chain >= r->geo.nchains)
		return NULL;
	return (struct tcr_chain_counters *)(r->base + r->geo.off_chains) + chain;
}
