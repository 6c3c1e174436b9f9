// SPDX-License-Identifier: MIT
/* Unit tests for lib/region/region.c: geometry, create, attach, validation, reset. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tochain/barrier.h>
#include <tochain/region.h>
#include "tc_check.h"

static const struct tcr_params P = {
	.name = "vm1", .kind = TCR_KIND_GUEST, .nbufs = 100, .slot_size = 2048,
	.nchannels = 3, .nchains = 2,
};

static char path[64];

static void setup(void)
{
	snprintf(path, sizeof(path), "/dev/shm/tochain-test-%d", getpid());
}

static void teardown(void)
{
	unlink(path);
}

START_TEST(geometry_is_aligned_and_ordered)
{
	struct tcr_geometry g;

	ck_assert_int_eq(tcr_geometry_compute(&P, &g), 0);
	ck_assert_uint_eq(g.ring_size, 128);	/* power of two >= nbufs */
	ck_assert_uint_eq(g.off_channels, TCR_PAGE);
	ck_assert_uint_eq(g.off_descs % TCR_CACHELINE, 0);
	ck_assert_uint_eq(g.off_chains % TCR_CACHELINE, 0);
	ck_assert_uint_eq(g.off_slots % TCR_PAGE, 0);
	ck_assert_uint_ge(g.off_descs, g.off_channels + 3ull * g.channel_size);
	ck_assert_uint_ge(g.off_chains, g.off_descs + 100ull * sizeof(struct tcr_desc));
	ck_assert_uint_ge(g.off_slots, g.off_chains + 2ull * sizeof(struct tcr_chain_counters));
	ck_assert_uint_eq(g.off_end, g.off_slots + 100ull * 2048);
	ck_assert_uint_eq(g.region_size % TCR_PAGE, 0);
}
END_TEST

START_TEST(geometry_rejects_bad_parameters)
{
	struct tcr_geometry g;
	struct tcr_params p;

#define BAD(field, value) do { p = P; p.field = value; \
	ck_assert_int_eq(tcr_geometry_compute(&p, &g), -EINVAL); } while (0)
	BAD(nbufs, 0);
	BAD(nbufs, TCR_MAX_BUFS + 1);
	BAD(slot_size, 32);
	BAD(slot_size, 100);
	BAD(slot_size, TCR_MAX_SLOT * 2);
	BAD(nchannels, 0);
	BAD(nchannels, TCR_MAX_CHANNELS + 1);
	BAD(nchains, TCR_MAX_CHAINS + 1);
	BAD(ring_size, 96);
	BAD(ring_size, 64);		/* smaller than nbufs */
	BAD(kind, 7);
#undef BAD
	ck_assert_int_eq(tcr_geometry_compute(NULL, &g), -EINVAL);
}
END_TEST

START_TEST(names)
{
	ck_assert(tcr_name_valid("web-1.in_a"));
	ck_assert(!tcr_name_valid(""));
	ck_assert(!tcr_name_valid(NULL));
	ck_assert(!tcr_name_valid("Web"));
	ck_assert(!tcr_name_valid("a/b"));
	ck_assert(!tcr_name_valid("0123456789012345678901234567890123"));
	ck_assert(tcr_name_valid("0123456789012345678901234567890"));	/* 31 */
}
END_TEST

START_TEST(create_then_attach_from_file)
{
	struct tcr_region *h = tcr_region_create(path, &P), *g, *v;

	ck_assert_ptr_nonnull(h);
	ck_assert_str_eq(tcr_region_header(h)->name, "vm1");
	ck_assert_uint_eq(tcr_region_header(h)->state, TCR_STATE_READY);
	ck_assert_uint_ne(tcr_region_header(h)->tsc_hz, 0);
	g = tcr_region_attach(path, TCR_ATTACH_GUEST);
	ck_assert_ptr_nonnull(g);
	ck_assert_mem_eq(&g->geo, &h->geo, sizeof(g->geo));
	/* Both map the same memory. */
	tcr_region_slot(h, 99)[5] = 0x5a;
	ck_assert_uint_eq(tcr_region_slot(g, 99)[5], 0x5a);
	v = tcr_region_attach(path, TCR_ATTACH_HOST | TCR_ATTACH_RDONLY);
	ck_assert_ptr_nonnull(v);
	ck_assert_uint_eq(tcr_region_slot(v, 99)[5], 0x5a);
	ck_assert_int_eq(tcr_region_reset(v), -EPERM);
	tcr_region_destroy(v);
	tcr_region_destroy(g);
	tcr_region_destroy(h);
}
END_TEST

/*
 * A TOE that starts again on a region a guest still has mapped formats it
 * in place: same file, never shrunk (the guest's pages stay), the next
 * generation, so the guest sees the reset.
 */
START_TEST(create_again_formats_in_place)
{
	struct tcr_region *h = tcr_region_create(path, &P), *g, *h2;
	struct stat st0, st1;
	size_t big;
	int fd;

	ck_assert_ptr_nonnull(h);
	g = tcr_region_attach(path, TCR_ATTACH_GUEST);	/* the guest's mapping */
	ck_assert_ptr_nonnull(g);
	ck_assert_uint_eq(tcr_region_header(g)->generation, 1);
	tcr_region_destroy(h);	/* the TOE goes away; the guest stays */
	ck_assert_int_eq(stat(path, &st0), 0);
	/* a region file larger than the new geometry needs, e.g. an earlier TOE's */
	big = g->map_size + 16 * TCR_PAGE;
	fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)big), 0);
	close(fd);

	h2 = tcr_region_create(path, &P);
	ck_assert_ptr_nonnull(h2);
	ck_assert_int_eq(stat(path, &st1), 0);
	ck_assert_uint_eq(st1.st_ino, st0.st_ino);
	ck_assert_uint_eq((uint64_t)st1.st_size, big);	/* not shrunk */
	ck_assert_uint_eq(tcr_region_header(h2)->region_size, big);
	/* the guest's old mapping is the new region: READY, next generation */
	ck_assert_uint_eq(tc_load_acquire(&tcr_region_header(g)->state), TCR_STATE_READY);
	ck_assert_uint_eq(tcr_region_header(g)->generation, 2);
	ck_assert(tcr_region_stale(g));
	tcr_region_slot(h2, 3)[0] = 0x77;
	ck_assert_uint_eq(tcr_region_slot(g, 3)[0], 0x77);
	tcr_region_destroy(g);
	tcr_region_destroy(h2);
}
END_TEST

START_TEST(create_rejects_bad_input)
{
	struct tcr_params p = P;

	p.name = "Bad";
	ck_assert_ptr_null(tcr_region_create(path, &p));
	ck_assert_int_eq(errno, EINVAL);
	p = P;
	p.nbufs = 0;
	ck_assert_ptr_null(tcr_region_create(path, &p));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(tcr_region_create("/nonexistent-dir/x", &P));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_ptr_null(tcr_region_create_mem(tc_map(4096), 4096, &P));
	ck_assert_int_eq(errno, ENOSPC);
}
END_TEST

START_TEST(attach_validates_every_header_field)
{
	struct tcr_region *h = tcr_region_create(path, &P);
	struct tcr_header *hd = tcr_region_header(h), saved = *hd;

	ck_assert_ptr_nonnull(h);
#define CORRUPT(stmt, err) do { *hd = saved; stmt; \
	ck_assert_ptr_null(tcr_region_attach(path, TCR_ATTACH_HOST)); \
	ck_assert_int_eq(errno, err); } while (0)
	CORRUPT(hd->magic ^= 1, EBADMSG);
	CORRUPT(hd->version = 2, EPROTONOSUPPORT);
	CORRUPT(hd->header_size = 64, EBADMSG);
	CORRUPT(hd->state = TCR_STATE_FORMATTING, EAGAIN);
	CORRUPT(hd->state = TCR_STATE_DEAD, EAGAIN);
	CORRUPT(hd->region_size = h->map_size * 2, EBADMSG);
	CORRUPT(hd->region_size = TCR_PAGE, EBADMSG);
	CORRUPT(hd->nbufs = 1000000, EBADMSG);
	CORRUPT(hd->nbufs = 0, EBADMSG);
	CORRUPT(hd->slot_size = 65, EBADMSG);
	CORRUPT(hd->ring_size = 0, EBADMSG);
	CORRUPT(hd->ring_size = 64, EBADMSG);
	CORRUPT(hd->nchannels = 1000, EBADMSG);
	CORRUPT(hd->kind = 9, EBADMSG);
	CORRUPT(hd->off_descs += 64, EBADMSG);
	CORRUPT(hd->off_slots -= 4096, EBADMSG);
	CORRUPT(hd->off_chains = 0, EBADMSG);
	CORRUPT(hd->off_channels = 8, EBADMSG);
	CORRUPT(hd->off_end = ~0ull, EBADMSG);
	CORRUPT(hd->channel_size = 1, EBADMSG);
	CORRUPT(hd->ring_bytes = 1, EBADMSG);
	CORRUPT(memset(hd->name, 'A', sizeof(hd->name)), EBADMSG);
	CORRUPT(hd->name[0] = 0, EBADMSG);
#undef CORRUPT
	*hd = saved;
	tcr_region_destroy(h);
}
END_TEST

START_TEST(attach_rejects_short_and_odd_files)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "short", 5), 5);
	close(fd);
	ck_assert_ptr_null(tcr_region_attach(path, TCR_ATTACH_HOST));
	ck_assert_int_eq(errno, EBADMSG);
	ck_assert_ptr_null(tcr_region_attach("/dev/shm", TCR_ATTACH_HOST));
	ck_assert_ptr_null(tcr_region_attach(path, 0));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(tcr_region_attach("/nonexistent", TCR_ATTACH_GUEST));
	ck_assert_int_eq(errno, ENOENT);
}
END_TEST

START_TEST(attach_mem_and_truncated_mapping)
{
	size_t size = 4u << 20;
	void *m = tc_map(size);
	struct tcr_region *h = tcr_region_create_mem(m, size, &P), *g;

	ck_assert_ptr_nonnull(h);
	g = tcr_region_attach_mem(m, size, TCR_ATTACH_GUEST);
	ck_assert_ptr_nonnull(g);
	tcr_region_destroy(g);
	/* A mapping shorter than the header claims is refused. */
	ck_assert_ptr_null(tcr_region_attach_mem(m, TCR_PAGE, TCR_ATTACH_HOST));
	ck_assert_int_eq(errno, EBADMSG);
	ck_assert_ptr_null(tcr_region_attach_mem(m, 100, TCR_ATTACH_HOST));
	tcr_region_destroy(h);
	munmap(m, size);
}
END_TEST

START_TEST(reset_bumps_generation_and_clears)
{
	struct tcr_region *h = tcr_region_create(path, &P), *g;

	g = tcr_region_attach(path, TCR_ATTACH_GUEST);
	ck_assert_ptr_nonnull(g);
	ck_assert(!tcr_region_stale(g));
	tcr_region_desc(h, 3)->len = 77;
	tcr_region_chain(h, 1)->arrivals = 5;
	tcr_region_header(h)->generation = 999;	/* the guest scribbles */
	ck_assert(tcr_region_stale(g));
	ck_assert_int_eq(tcr_region_reset(h), 0);
	ck_assert_uint_eq(tcr_region_header(h)->generation, 2);	/* host's own count */
	ck_assert_uint_eq(tcr_region_desc(h, 3)->len, 0);
	ck_assert_uint_eq(tcr_region_desc(h, 3)->slot, 3);
	ck_assert_uint_eq(tcr_region_chain(h, 1)->arrivals, 0);
	ck_assert(tcr_region_stale(g));
	tcr_region_destroy(g);
	g = tcr_region_attach(path, TCR_ATTACH_GUEST);
	ck_assert(!tcr_region_stale(g));
	tcr_region_kill(h);
	ck_assert(tcr_region_stale(g));
	tcr_region_destroy(g);
	tcr_region_destroy(h);
}
END_TEST

START_TEST(part_accessors_check_ranges)
{
	struct tcr_region *h = tcr_region_create(path, &P);

	ck_assert_ptr_nonnull(tcr_region_desc(h, 99));
	ck_assert_ptr_null(tcr_region_desc(h, 100));
	ck_assert_ptr_null(tcr_region_slot(h, 100));
	ck_assert_ptr_null(tcr_region_chain(h, 2));
	ck_assert_ptr_null(tcr_region_channel(h, 3));
	ck_assert_ptr_null(tcr_region_ring_mem(h, 0, TCR_CH_NRINGS));
	ck_assert_ptr_null(tcr_region_ring_mem(h, 3, TCR_CH_FREE));
	/* The last slot ends inside the mapping. */
	ck_assert_uint_le((uint64_t)(tcr_region_slot(h, 99) + 2048 - h->base), h->map_size);
	tcr_region_destroy(h);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("region_region");
	TCase *tc = tcase_create("region");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, geometry_is_aligned_and_ordered);
	tcase_add_test(tc, geometry_rejects_bad_parameters);
	tcase_add_test(tc, names);
	tcase_add_test(tc, create_then_attach_from_file);
	tcase_add_test(tc, create_again_formats_in_place);
	tcase_add_test(tc, create_rejects_bad_input);
	tcase_add_test(tc, attach_validates_every_header_field);
	tcase_add_test(tc, attach_rejects_short_and_odd_files);
	tcase_add_test(tc, attach_mem_and_truncated_mapping);
	tcase_add_test(tc, reset_bumps_generation_and_clears);
	tcase_add_test(tc, part_accessors_check_ranges);
	suite_add_tcase(s, tc);
	return tc_run_suite(s);
}
