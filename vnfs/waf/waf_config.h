/*
 * WAF configuration files: the text form of struct waf_config, for
 * `sfc-ctl vnf add NAME --kind waf --rules FILE` (example:
 * vnfs/waf/conf/waf.conf.example).
 *
 *   # comment
 *   crs_dir = /usr/share/modsecurity-crs     # "none": no CRS
 *   paranoia_level = 2                       # 1..4
 *   inspect_response = yes                   # yes/no, on/off, true/false, 1/0
 *   request_body_limit = 1M                  # bytes, K/M suffixes (x1024)
 *   response_body_limit = 512K
 *   inbound_threshold = 5
 *   outbound_threshold = 4
 *   max_header_bytes = 64K
 *   pre_rules = exclusions-before.conf       # repeatable, in order
 *   rules = site.conf                        # repeatable, in order
 *   deny_page = denied.html                  # the page of a deny (waf_answer.h)
 *
 * Relative paths are taken from the directory of the configuration file.
 * The file is trusted as much as the operator who wrote it, but every
 * value is checked; an unknown key is an error (a typo must not silently
 * weaken the WAF).
 */
#ifndef TOCHAIN_WAF_CONFIG_H
#define TOCHAIN_WAF_CONFIG_H

#include <stddef.h>

#include "waf_engine.h"

#define WAF_CONFIG_MAX_FILES 32

/* A loaded configuration: cfg points into the strings this owns. */
struct waf_config_file {
	struct waf_config cfg;
	char *crs_dir;
	char *pre[WAF_CONFIG_MAX_FILES];
	char *extra[WAF_CONFIG_MAX_FILES];
	char *deny_page;	/* deny_page's template (cfg.deny_page), NULL: built-in */
};

/*
 * Parses path into *out (which the caller releases with waf_config_free,
 * also after a failure).  Returns 0, or -errno with a message naming the
 * line in err:
 *   -ENOENT/-EACCES  the file cannot be opened
 *   -EINVAL          unknown key, bad value, too many rule files
 *   -ENOMEM          out of memory
 */
int waf_config_load(const char *path, struct waf_config_file *out,
		    char *err, size_t errlen);
void waf_config_free(struct waf_config_file *c);

#endif
