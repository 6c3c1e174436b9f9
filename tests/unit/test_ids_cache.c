// SPDX-License-Identifier: MIT
/*
 * vnfs/ids cache of compiled databases (ids_cache.c): a second load of the
 * same rules uses the cached files; truncated, corrupted and foreign files
 * are rejected and rewritten; an unusable cache directory only costs the
 * compile.  Each load is checked by scanning: the rules still match.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ids.h"
#include "tc_check.h"

static char base[64], dir[128], rules[160], cache[160];

static const char *text =
	"alert tcp any any -> any any (content:\"evil\"; sid:1;)\n"
	"alert tcp any any -> any any (pcre:\"/bad[0-9]{12}x/\"; sid:2;)\n"
	"alert tcp any any -> any 80 (content:\"GET\"; http_method; "
	"uricontent:\"/etc/passwd\"; sid:3;)\n"
	"alert tcp any 80 -> any any (flow:to_client; content:\"root:\"; "
	"sid:4;)\n";

static void setup(void)
{
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/t.XXXXXX", base);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(rules, sizeof(rules), "%s/t.rules", dir);
	snprintf(cache, sizeof(cache), "%s/cache/ids", dir);
	f = fopen(rules, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* The cache files, sorted by name, into names[] (at most 16). */
static int list(char names[16][512])
{
	struct dirent **ents;
	int n = scandir(cache, &ents, NULL, alphasort), k = 0;

	for (int i = 0; i < n; i++) {
		if (ents[i]->d_name[0] != '.' && k < 16)
			snprintf(names[k++], 512, "%s/%s", cache,
				 ents[i]->d_name);
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
	return k;
}

static size_t file_size(const char *p)
{
	struct stat sb;

	ck_assert_int_eq(stat(p, &sb), 0);
	return (size_t)sb.st_size;
}

static void scan_one(struct ids_ruleset *rs, struct ids_worker *w,
		     enum ids_dir d, const char *payload, uint32_t sid)
{
	struct ids_flow_key key = { .family = AF_INET, .client_port = 40000,
				    .server_port = 80 };
	struct ids_flow *f = ids_flow_create(rs, &key);
	struct ids_verdict v;
	bool hit = false;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(ids_flow_scan(w, f, d, (const uint8_t *)payload,
				       strlen(payload), &v),
			 0);
	for (unsigned i = 0; i < v.nalerts; i++)
		hit |= v.alerts[i]->sid == sid;
	ck_assert_msg(hit, "sid %u should fire on '%s'", sid, payload);
	ids_flow_destroy(f);
}

/* Loads through the cache and checks every rule still matches (and only
 * when it should: a clean stream fires nothing). */
static void load_and_match(void)
{
	struct ids_diags diags = { 0 };
	struct ids_ruleset *rs = ids_ruleset_load_cached(rules, NULL, cache,
							 &diags);
	struct ids_worker *w = ids_worker_create();
	struct ids_flow_key key = { .family = AF_INET, .client_port = 40000,
				    .server_port = 80 };
	struct ids_flow *f;
	struct ids_verdict v;

	ck_assert_ptr_nonnull(rs);
	ck_assert_ptr_nonnull(w);
	ck_assert_uint_eq(diags.n, 0);
	ck_assert_uint_eq(ids_ruleset_nrules(rs), 4);
	scan_one(rs, w, IDS_TO_SERVER, "xx evil xx", 1);
	scan_one(rs, w, IDS_TO_SERVER, "a bad123456789012x b", 2);
	scan_one(rs, w, IDS_TO_SERVER, "GET /etc/passwd HTTP/1.1\r\n\r\n", 3);
	scan_one(rs, w, IDS_TO_CLIENT, "root:x:0:0", 4);
	f = ids_flow_create(rs, &key);
	ck_assert_int_eq(ids_flow_scan(w, f, IDS_TO_SERVER,
				       (const uint8_t *)"bad12345x", 9,
				       &v), 0);
	ck_assert_uint_eq(v.nalerts, 0);
	ids_flow_destroy(f);
	ids_worker_destroy(w);
	ids_ruleset_put(rs);
	ids_diags_free(&diags);
}

static char *slurp(const char *p, size_t *len)
{
	FILE *f = fopen(p, "rb");
	char *b;

	ck_assert_ptr_nonnull(f);
	*len = file_size(p);
	b = malloc(*len + 1);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(fread(b, 1, *len, f), *len);
	fclose(f);
	return b;
}

static void spit(const char *p, const void *b, size_t len)
{
	FILE *f = fopen(p, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(b, 1, len, f), len);
	fclose(f);
}

START_TEST(second_load_uses_cache)
{
	char a[16][512], b[16][512];
	struct stat before, after;
	int n, m;

	load_and_match();
	n = list(a);
	ck_assert_int_ge(n, 2);	/* raw per direction, http buffers */
	/* a compile would rewrite the file (a new inode): a hit does not */
	ck_assert_int_eq(stat(a[0], &before), 0);
	load_and_match();
	m = list(b);
	ck_assert_int_eq(m, n);
	ck_assert_int_eq(stat(b[0], &after), 0);
	ck_assert_uint_eq(before.st_ino, after.st_ino);	/* not rewritten */
	ck_assert_int_eq((int)(before.st_mode & 0777), 0600);
}
END_TEST

/* 0 truncate, 1 flip a database byte, 2 flip a key byte, 3 garbage,
 * 4 empty, 5 other rules' file under this name. */
START_TEST(bad_file_rejected)
{
	char a[16][512], other[512];
	size_t len, olen;
	char *orig, *b;
	struct stat before, after;
	int n;

	load_and_match();
	n = list(a);
	ck_assert_int_ge(n, 2);
	orig = slurp(a[0], &len);
	b = malloc(len);
	ck_assert_ptr_nonnull(b);
	memcpy(b, orig, len);
	switch (_i) {
	case 0:
		spit(a[0], b, len / 2);
		break;
	case 1:
		b[len - 5] ^= 0x40;
		spit(a[0], b, len);
		break;
	case 2:
		b[40] ^= 0x01;	/* in the key, after the 32-byte head */
		spit(a[0], b, len);
		break;
	case 3:
		memset(b, 'A', len);
		spit(a[0], b, len);
		break;
	case 4:
		spit(a[0], b, 0);
		break;
	default:
		snprintf(other, sizeof(other), "%s", a[1]);
		free(b);
		b = slurp(other, &olen);
		spit(a[0], b, olen);
		break;
	}
	ck_assert_int_eq(stat(a[0], &before), 0);
	load_and_match();	/* rejected: compiled, and rewritten */
	ck_assert_int_eq(stat(a[0], &after), 0);
	ck_assert_uint_ne(before.st_ino, after.st_ino);
	free(b);
	b = slurp(a[0], &olen);
	ck_assert_uint_eq(olen, len);
	ck_assert_mem_eq(b, orig, len);
	free(b);
	free(orig);
}
END_TEST

START_TEST(unusable_dir)
{
	FILE *f;

	/* the cache "directory" is a regular file: nothing can be cached */
	snprintf(cache, sizeof(cache), "%s/file", dir);
	f = fopen(cache, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	load_and_match();
	load_and_match();
}
END_TEST

START_TEST(other_rules_other_files)
{
	char a[16][512];
	FILE *f;
	int n;

	load_and_match();
	n = list(a);
	f = fopen(rules, "a");
	ck_assert_ptr_nonnull(f);
	fputs("alert tcp any any -> any any (content:\"worse\"; sid:5;)\n", f);
	fclose(f);
	{
		struct ids_ruleset *rs = ids_ruleset_load_cached(rules, NULL,
								 cache, NULL);

		ck_assert_ptr_nonnull(rs);
		ck_assert_uint_eq(ids_ruleset_nrules(rs), 5);
		ids_ruleset_put(rs);
	}
	ck_assert_int_eq(list(a), n + 2);	/* the raw db of each direction */
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ids_cache");
	TCase *tc = tcase_create("cache");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, second_load_uses_cache);
	tcase_add_loop_test(tc, bad_file_rejected, 0, 6);
	tcase_add_test(tc, unusable_dir);
	tcase_add_test(tc, other_rules_other_files);
	suite_add_tcase(s, tc);
	return s;
}

/* Every test's files live below one directory, removed whole at the end. */
int main(void)
{
	int rc;

	if (tc_tmpdir_make(base, sizeof(base)))
		return EXIT_FAILURE;
	rc = tc_run_suite(suite());
	tc_tmpdir_remove(base);
	return rc;
}
