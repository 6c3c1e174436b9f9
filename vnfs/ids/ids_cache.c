// SPDX-License-Identifier: MIT
/*
 * The cache of compiled Hyperscan databases: a reload of an unchanged
 * ruleset, or a VNF restart, deserializes what the last compile built
 * instead of compiling again (Hyperscan's compile is nearly all of a
 * load's time).
 *
 * Key: everything hs_compile_multi is given (every expression, flag and
 * id, the mode) plus the Hyperscan version and the platform it tunes for.
 * The file name is a 64-bit hash of that key; the file holds the key
 * itself, compared byte for byte on a hit, so a hash collision can only
 * cost a compile.  File: magic, key length, database length, FNV-1a of
 * key + database, key, hs_serialize_database() output.
 *
 * Trust: the cache directory belongs to the host (root, mode 0700 when we
 * create it).  Still, a file that is truncated, corrupted, written by
 * another version or for another platform, or for another key is
 * rejected (NULL: the caller compiles and overwrites it), never trusted
 * in part.  Writes go to a temporary file renamed into place, so readers
 * see whole files only; concurrent writers of one key write equal bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ids_cache.h"

#define CACHE_MAGIC	"TOCIDSC1"
#define CACHE_MAX	(512u << 20)	/* larger files are not ours */

struct blob {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

static void blob_add(struct blob *b, const void *p, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n > b->cap) {
		size_t ncap = (b->len + n) * 2;
		uint8_t *np = realloc(b->p, ncap);

		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = ncap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void blob_u32(struct blob *b, uint32_t v)
{
	blob_add(b, &v, sizeof(v));
}

static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

#define FNV_SEED 0xcbf29ce484222325ULL

/* The key blob of @in; false when out of memory. */
static bool make_key(const struct ids_cache_input *in, struct blob *k)
{
	hs_platform_info_t plat;
	const char *ver = hs_version();

	memset(k, 0, sizeof(*k));
	memset(&plat, 0, sizeof(plat));
	if (hs_populate_platform(&plat) != HS_SUCCESS)
		return false;
	blob_add(k, ver, strlen(ver) + 1);
	blob_add(k, &plat, sizeof(plat));
	blob_u32(k, in->mode);
	blob_u32(k, (uint32_t)in->n);
	for (size_t i = 0; i < in->n; i++) {
		size_t len = strlen(in->exprs[i]);

		blob_u32(k, in->flags[i]);
		blob_u32(k, in->ids[i]);
		blob_u32(k, (uint32_t)len);
		blob_add(k, in->exprs[i], len);
	}
	if (k->oom) {
		free(k->p);
		return false;
	}
	return true;
}

static void cache_path(char *out, size_t len, const char *dir,
		       const struct blob *k)
{
	snprintf(out, len, "%s/%016" PRIx64 ".hsdb", dir,
		 fnv1a(FNV_SEED, k->p, k->len));
}

struct file_head {
	char magic[8];
	uint64_t key_len, db_len, sum;
};

hs_database_t *ids_cache_get(const char *dir, const struct ids_cache_input *in)
{
	struct file_head h;
	struct blob k;
	char path[4096];
	hs_database_t *db = NULL;
	uint8_t *buf = NULL;
	struct stat sb;
	int fd;

	if (!dir || !*dir || !make_key(in, &k))
		return NULL;
	cache_path(path, sizeof(path), dir, &k);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		goto out_key;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) ||
	    (uint64_t)sb.st_size < sizeof(h) || (uint64_t)sb.st_size > CACHE_MAX)
		goto out_close;
	buf = malloc((size_t)sb.st_size);
	if (!buf || read(fd, buf, (size_t)sb.st_size) != sb.st_size)
		goto out_close;
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, CACHE_MAGIC, 8) || h.key_len != k.len ||
	    h.db_len != (uint64_t)sb.st_size - sizeof(h) - h.key_len ||
	    h.key_len > (uint64_t)sb.st_size - sizeof(h))
		goto out_close;
	if (fnv1a(FNV_SEED, buf + sizeof(h), (size_t)(h.key_len + h.db_len)) !=
	    h.sum || memcmp(buf + sizeof(h), k.p, k.len))
		goto out_close;
	if (hs_deserialize_database((const char *)buf + sizeof(h) + k.len,
				    (size_t)h.db_len, &db) != HS_SUCCESS)
		db = NULL;
out_close:
	free(buf);
	close(fd);
out_key:
	free(k.p);
	return db;
}

/* mkdir -p, 0700 for what it creates. */
static int make_dirs(const char *dir)
{
	char tmp[4096];

	if (snprintf(tmp, sizeof(tmp), "%s", dir) >= (int)sizeof(tmp))
		return -1;
	for (char *c = tmp + 1; *c; c++) {
		if (*c != '/')
			continue;
		*c = 0;
		if (mkdir(tmp, 0700) && errno != EEXIST)
			return -1;
		*c = '/';
	}
	if (mkdir(tmp, 0700) && errno != EEXIST)
		return -1;
	return 0;
}

void ids_cache_put(const char *dir, const struct ids_cache_input *in,
		   const hs_database_t *db)
{
	struct file_head h;
	char *ser = NULL, path[4096], tmp[4096 + 16];
	size_t slen = 0;
	struct blob k;
	bool ok;
	FILE *f;
	int fd;

	if (!dir || !*dir || !make_key(in, &k))
		return;
	if (make_dirs(dir) ||
	    hs_serialize_database(db, &ser, &slen) != HS_SUCCESS)
		goto out_key;
	cache_path(path, sizeof(path), dir, &k);
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0)
		goto out_ser;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		goto out_ser;
	}
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, CACHE_MAGIC, sizeof(h.magic));
	h.key_len = k.len;
	h.db_len = slen;
	h.sum = fnv1a(fnv1a(FNV_SEED, k.p, k.len), (const uint8_t *)ser, slen);
	ok = fwrite(&h, sizeof(h), 1, f) == 1 &&
	     fwrite(k.p, 1, k.len, f) == k.len &&
	     fwrite(ser, 1, slen, f) == slen;
	ok = (fclose(f) == 0) && ok;
	if (!ok || rename(tmp, path))
		unlink(tmp);
out_ser:
	free(ser);	/* hs_serialize_database uses the misc allocator: malloc */
out_key:
	free(k.p);
}
