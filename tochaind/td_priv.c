// SPDX-License-Identifier: MIT
/* What the whole folder shares: the log, saving the state; see td_priv.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "td_priv.h"

void td_log(const char *fmt, ...)
{
	char ts[32];
	time_t now = time(NULL);
	va_list ap;

	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", gmtime(&now));
	fprintf(stderr, "%s tochaind: ", ts);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* A string argument, or NULL; @bad is set when present but not a string. */
const char *td_arg_str(json_t *args, const char *key, int *bad)
{
	json_t *v = json_object_get(args, key);

	if (!v)
		return NULL;
	if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v)) {
		*bad = 1;
		return NULL;
	}
	return json_string_value(v);
}

int td_save(struct daemon *d)
{
	int err = td_state_save(d->state_path, &d->st);

	if (err)
		td_log("cannot save state to %s: %s", d->state_path, strerror(-err));
	return err;
}

unsigned int td_ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned int)n : 1;
}
