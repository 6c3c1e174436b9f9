/* SPDX-License-Identifier: MIT */
/*
 * Private header of the guest runtime: the doorbell (gl_wake.c), the one
 * place that knows how a wake-up travels between this process and its TOE.
 * The caller holds mu or owns the struct alone.
 */
#ifndef TOCHAIN_GL_WAKE_H
#define TOCHAIN_GL_WAKE_H

#include "gl_vm.h"

struct gl_wake {
	int efd_mine;	/* the TOE writes it to wake us (in a VM: gl_vm.h) */
	int efd_host;	/* we write it to wake the TOE (-1 in a VM) */
	struct gl_vm_wake vm;	/* in a VM: the link's doorbell (vm.dev >= 0) */
};
/* The fd a sleeper adds to its real wait. */
int gl_wake_fd(const struct gl_wake *w);
void gl_wake_host(struct gl_wake *w);
void gl_wake_drain(struct gl_wake *w);
void gl_wake_close(struct gl_wake *w);

#endif /* TOCHAIN_GL_WAKE_H */
