/* SPDX-License-Identifier: MIT */
/*
 * attack.h - what the attack tests share beyond the integration
 * harness: raw connections to the harness daemon (hellos of any kind, silent
 * ones), descriptors passed as a client passes pinned memory, and readings of
 * the daemon process (its descriptors, its resident memory) to compare with a
 * baseline after an attack.
 */
#ifndef AXON_TESTS_ATTACK_H
#define AXON_TESTS_ATTACK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "harness.h"

/* A connected, blocking SOCK_SEQPACKET socket to d, or -1 (message printed). */
int a_connect_raw(const struct h_daemon *d);
/*
 * Send a hello of kind (AXON_HELLO_*) with the current ABI and read the
 * welcome into *w (NULL: not read). Returns the welcome's status, or
 * INT32_MIN when nothing came back within timeout_ms.
 */
int32_t a_hello(int sock, uint32_t kind, uint64_t target_client, uint32_t target_pid,
		struct axon_welcome *w, int timeout_ms);
/* Send a message of len bytes carrying fd (SCM_RIGHTS); 0 or -errno. */
int a_send_fd(int sock, const void *buf, size_t len, int fd);

/*
 * For tests that compare the daemon's resident memory with a baseline: under
 * AddressSanitizer freed memory waits in a quarantine (256 MB by default)
 * and would read as growth. Sets ASAN_OPTIONS for the daemon the harness
 * starts next with a quarantine of 0. No effect in plain builds.
 */
void a_lean_sanitizer(void);

/* Open descriptors of process pid (/proc/pid/fd), -1 on error. */
int a_proc_fds(pid_t pid);
/*
 * The RLIMIT_NOFILE that leaves process pid exactly nfree descriptor
 * numbers free, -1 on error.
 */
int a_proc_fd_limit(pid_t pid, int nfree);
/*
 * SIGSTOP pid and wait until it is stopped: kill() returns before the
 * signal takes effect, and a test building one exact epoll batch must know
 * the daemon is not running any more. 0, or -1 (message printed).
 */
int a_stop(pid_t pid);
/* Resident set of process pid in KiB (/proc/pid/status VmRSS), -1 on error. */
long a_proc_rss_kb(pid_t pid);
/* Memory mappings of process pid (/proc/pid/maps lines), -1 on error. */
int a_proc_maps(pid_t pid);

#endif /* AXON_TESTS_ATTACK_H */
