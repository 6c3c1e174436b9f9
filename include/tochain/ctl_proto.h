/* SPDX-License-Identifier: MIT */
/*
 * The control protocol between sfc-ctl (or any client) and tochaind
 * (ctl_*), version 1.  Documented for users in docs/CONTROL-PROTOCOL.md.
 *
 * Framing: a stream UNIX socket; one request per connection: the client
 * writes one JSON object terminated by '\n' (at most CTL_MAX_MSG bytes),
 * the daemon answers with one JSON object terminated by '\n' and closes.
 *
 *   request   {"v": 1, "cmd": "vm.add", "args": {...}}
 *   reply     {"v": 1, "ok": true, "result": {...}}
 *             {"v": 1, "ok": false, "error": "one line naming the problem"}
 *
 * A request with another "v" is refused with an error naming the
 * versions the daemon speaks.  Anything that is not one well-formed JSON
 * object within the size limit is refused and changes nothing.
 */
#ifndef TOCHAIN_CTL_PROTO_H
#define TOCHAIN_CTL_PROTO_H

#include <jansson.h>
#include <stddef.h>

#define CTL_VERSION		1
#define CTL_MAX_MSG		(256 * 1024)
#define CTL_DEFAULT_SOCKET	"/run/tochain/ctl.sock"
#define CTL_TIMEOUT_MS		60000

/*
 * Read one '\n'-terminated message of at most CTL_MAX_MSG bytes from @fd
 * within @timeout_ms and parse it as a JSON object.  Returns the object,
 * or NULL with *err (a static string) saying why.
 */
json_t *ctl_recv(int fd, int timeout_ms, const char **err);

/* Write @msg as one line.  0 or -errno. */
int ctl_send(int fd, const json_t *msg);

/* Daemon: the reply objects {"v":1,"ok":true,"result":@result (stolen, NULL: {})}
 * and {"v":1,"ok":false,"error":"..."} (the message is cut at 511 bytes). */
json_t *ctl_reply_ok(json_t *result);
json_t *ctl_reply_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Client: connect to @path, send {"v":1,"cmd":@cmd,"args":@args} (args
 * stolen), return the reply object or NULL with errno set. */
json_t *ctl_call(const char *path, const char *cmd, json_t *args, const char **err);

/* The same, waiting at most @timeout_ms for the reply. */
json_t *ctl_call_timeout(const char *path, const char *cmd, json_t *args, int timeout_ms,
			 const char **err);

#endif /* TOCHAIN_CTL_PROTO_H */
