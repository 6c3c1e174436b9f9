/* SPDX-License-Identifier: MIT */
/*
 * tochain-ivshmem-server: an ivshmem server for QEMU's ivshmem-doorbell
 * devices, the host taking part as peer 0.
 *
 *   tochain-ivshmem-server -s SOCKET -m SHM_FILE [-n VECTORS] [-p MAX_PEERS]
 *                          [-S SIZE] [--no-host-peer]
 *
 * SHM_FILE is opened read-write (created and sized to SIZE bytes if -S is
 * given).  Prints "ready ..." once listening and "join ID" / "leave ID"
 * lines on stdout; runs until SIGINT or SIGTERM.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ivs_server.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void on_peer(void *arg, unsigned int id, bool joined)
{
	(void)arg;
	printf("%s %u\n", joined ? "join" : "leave", id);
	fflush(stdout);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: tochain-ivshmem-server -s SOCKET -m SHM_FILE [-n VECTORS]"
		" [-p MAX_PEERS] [-S SIZE] [--no-host-peer]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "shm", required_argument, NULL, 'm' },
		{ "vectors", required_argument, NULL, 'n' },
		{ "max-peers", required_argument, NULL, 'p' },
		{ "size", required_argument, NULL, 'S' },
		{ "no-host-peer", no_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ivs_server_config cfg = { .nvectors = 1, .host_peer = true };
	struct sigaction sa = { .sa_handler = on_signal };
	const char *shm = NULL;
	unsigned long long size = 0;
	struct ivs_server *s;
	char *end;
	int c, fd;

	while ((c = getopt_long(argc, argv, "s:m:n:p:S:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			cfg.socket_path = optarg;
			break;
		case 'm':
			shm = optarg;
			break;
		case 'n':
			cfg.nvectors = (unsigned int)strtoul(optarg, &end, 0);
			if (*end)
				goto bad;
			break;
		case 'p':
			cfg.max_peers = (unsigned int)strtoul(optarg, &end, 0);
			if (*end)
				goto bad;
			break;
		case 'S':
			size = strtoull(optarg, &end, 0);
			if (*end || size == 0)
				goto bad;
			break;
		case 'H':
			cfg.host_peer = false;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (!cfg.socket_path || !shm || optind != argc)
		goto bad;

	fd = open(shm, O_RDWR | O_CLOEXEC | (size ? O_CREAT : 0), 0600);
	if (fd < 0) {
		fprintf(stderr, "tochain-ivshmem-server: %s: %s\n", shm, strerror(errno));
		return 1;
	}
	if (size && ftruncate(fd, (off_t)size) < 0) {
		fprintf(stderr, "tochain-ivshmem-server: %s: %s\n", shm, strerror(errno));
		return 1;
	}
	cfg.shm_fd = fd;
	s = ivs_server_create(&cfg);
	if (!s) {
		fprintf(stderr, "tochain-ivshmem-server: %s: %s\n", cfg.socket_path,
			strerror(errno));
		return 1;
	}
	close(fd);
	ivs_server_set_callback(s, on_peer, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	printf("ready socket %s vectors %u host-peer %d\n", cfg.socket_path,
	       cfg.nvectors, ivs_server_host_id(s));
	fflush(stdout);
	while (!stop) {
		int ret = ivs_server_dispatch(s, 500);

		if (ret < 0 && ret != -EINTR) {
			fprintf(stderr, "tochain-ivshmem-server: %s\n", strerror(-ret));
			break;
		}
	}
	ivs_server_destroy(s);
	return 0;

bad:
	usage(stderr);
	return 2;
}
