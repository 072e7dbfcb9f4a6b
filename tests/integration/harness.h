/* SPDX-License-Identifier: MIT */
/*
 * harness.h - what every integration test shares: a private axond for the
 * test, its stats document, child client programs, and raw rings.
 *
 * A test's main() typically does
 *
 *	h_init(argc, argv);			// finds $AXON_BUILD
 *	h_require_file(h_kernel_path("cubin"));	// exit 77 when missing
 *	h_daemon_start(&h_daemon, "4G", NULL);	// exports AXON_ADDR
 *	... Check suite ...
 *	return h_finish(failed);		// stops axond, asserts exit 0
 *
 * Children inherit AXON_ADDR and die with the test (PR_SET_PDEATHSIG), so a
 * test killed by its timeout leaves nothing behind. Nothing here sleeps to
 * synchronise: waits poll a condition (a socket accepting, a stats field, a
 * process exiting) every few milliseconds up to a deadline.
 *
 * Failures are reported with h_fail() (prints, returns -1) so that helpers
 * can be used both inside Check tests (ck_assert_msg(h_x() == 0, ...)) and
 * in plain code.
 */
#ifndef AXON_TESTS_HARNESS_H
#define AXON_TESTS_HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <limits.h>
#include <sys/types.h>

#include <axon/libaxon.h>
#include "../../tools/common/json.h"

/* Exit codes of test programs (tests/run-tests.sh). */
#define H_PASS	0
#define H_FAIL	1
#define H_SKIP	77

/* Timeouts are multiplied by this under sanitizers (slower by ~3x). */
#if defined(__SANITIZE_ADDRESS__)
#define H_SLOW	4
#else
#define H_SLOW	1
#endif
#define H_MS(ms)	((int)(ms) * H_SLOW)

struct h_daemon {
	pid_t pid;		/* 0 when not running */
	char dir[96];		/* the test's private temp dir */
	char sock[108];		/* sun_path's size */
	char addr[120];		/* "unix:" sock */
	char log[128];		/* axond's stderr */
	int exit_status;	/* after stop: wait status */
};

/* The daemon most tests use. */
extern struct h_daemon h_daemon;

/* ---- set-up ------------------------------------------------------------ */

/* Reads AXON_BUILD / AXON_SRC (or derives them from argv[0]). */
void h_init(int argc, char **argv);
const char *h_build(void);
/* "$AXON_BUILD/<rel>" in one of a few rotating static buffers. */
const char *h_path(const char *rel);
/* $AXON_BUILD/tests/bin/<name> */
const char *h_bin(const char *name);
/* $AXON_BUILD/tests/data/kernels.<ext> ("cubin", "fatbin", "ptx") */
const char *h_kernel_path(const char *ext);
/* Exit 77 with the reason when path does not exist. */
void h_require_file(const char *path);
/* Exit 77 with a message naming the file. */
void h_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Prints "harness: error: <msg>" to stderr; returns -1. */
int h_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "harness: <msg>" to stderr. */
void h_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- the daemon -------------------------------------------------------- */

/*
 * Start axond --backend=sim --listen unix:<dir>/axond.sock --sim-mem=<mem>
 * plus the NULL-terminated extra arguments; stderr to <dir>/axond.log. Waits
 * (bounded) until it answers a stats request; exports AXON_ADDR. Returns 0
 * or -1 (the log is printed).
 */
int h_daemon_start(struct h_daemon *d, const char *sim_mem, const char *const *extra);
/*
 * SIGTERM, then wait (bounded) and require exit status 0. Prints the log
 * when that fails or when print_log is set. Removes the temp dir when all
 * went well and $AXON_KEEP_LOGS is unset. Returns 0 or -1.
 */
int h_daemon_stop(struct h_daemon *d, bool print_log);
/* Whether the process still runs (reaps it if it exited). */
bool h_daemon_running(struct h_daemon *d);
void h_daemon_print_log(const struct h_daemon *d);

/*
 * For a test's main: stop the daemon (printing its log if the test failed)
 * and return the exit code: H_FAIL if failed or the daemon did not exit 0.
 */
int h_finish(bool failed);

/*
 * A test's whole main() for Check suites: start h_daemon (sim_mem, extra
 * axond arguments), run the tests add() puts into one TCase (timeout in
 * seconds, already scaled by H_SLOW here), stop the daemon. Returns the
 * exit code. Tests run forked (CK_FORK=no runs them in-process).
 */
struct TCase;
/* seconds * H_SLOW, capped below run-tests.sh's limit ($AXON_TEST_TIMEOUT). */
double h_test_timeout(int seconds);
int h_check_main(const char *name, const char *sim_mem, const char *const *extra,
		 void (*add)(struct TCase *tc), int timeout_s);

/* ---- stats ------------------------------------------------------------- */

/*
 * The raw stats document (a malloc'd string in *json), every step bounded
 * by timeout_ms. 0, or a negative errno with a message in err.
 */
int h_read_stats(const struct h_daemon *d, char **json, char *err, size_t errlen,
		 int timeout_ms);
/* Fetch and parse the stats document; NULL (with a message) on failure. */
struct json *h_stats(const struct h_daemon *d);
/* The same, with the raw text kept (caller frees *text). */
struct json *h_stats_text(const struct h_daemon *d, char **text);
/* Print the document (for failure messages). */
void h_stats_print(const struct h_daemon *d);

/* daemon.clients and the length of the clients array (-1 if missing). */
int h_stats_nclients(const struct json *doc);
/* The (first) client whose pid is pid, or NULL. */
const struct json *h_stats_client(const struct json *doc, pid_t pid);
/* The client whose id is id, or NULL. */
const struct json *h_stats_client_id(const struct json *doc, uint64_t id);
/* A numeric field of a client by dotted path ("handles.streams"),
 * UINT64_MAX when missing. */
uint64_t h_client_u64(const struct json *client, const char *path);

/*
 * Wait until no client is connected and nothing is allocated or reserved
 * (daemon.clients == 0, clients == [], daemon.mem_used == 0,
 * daemon.mem_reserved == 0, windows.used == 0 where windows are kept).
 * Returns 0, or -1 after timeout_ms with the last document printed.
 */
int h_wait_idle(const struct h_daemon *d, int timeout_ms);
/* Wait until no client with this pid is listed. */
int h_wait_client_gone(const struct h_daemon *d, pid_t pid, int timeout_ms);

/*
 * Poll the stats until pred(doc, arg) is true; 0, or -1 on timeout (the
 * last document is printed with what).
 */
typedef bool (*h_stats_pred)(const struct json *doc, void *arg);
int h_wait_stats(const struct h_daemon *d, h_stats_pred pred, void *arg,
		 int timeout_ms, const char *what);

/* ---- child processes --------------------------------------------------- */

/*
 * Start argv[0] (a path) with argv. When out_fd is not NULL the child's
 * stdout goes to a pipe whose read end is returned there (its stderr stays
 * the test's); otherwise both are inherited. The child gets SIGKILL if the
 * test dies. Returns the pid or -1.
 */
pid_t h_spawn(char *const argv[], int *out_fd);
/*
 * Wait for pid up to timeout_ms; on timeout it is killed (SIGKILL) and
 * reaped. Returns the exit code (0..255), 128+signal for a signal, or -1 on
 * timeout/error (with a message naming what).
 */
int h_wait_child(pid_t pid, int timeout_ms, const char *what);
/* Spawn and wait; returns as h_wait_child. */
int h_run(char *const argv[], int timeout_ms);
/*
 * The same for $AXON_BUILD/tests/bin/<prog> with the NULL-terminated
 * arguments that follow.
 */
int h_run_bin(int timeout_ms, const char *prog, ...) __attribute__((sentinel));
pid_t h_spawn_bin(int *out_fd, const char *prog, ...) __attribute__((sentinel));
/*
 * Read fd (a child's stdout) until a line containing needle arrives; the
 * lines read are echoed to our stdout. 0, or -1 on EOF/timeout.
 */
int h_wait_line(int fd, const char *needle, int timeout_ms);
/* Read whatever is left on fd, echoing it, until EOF (bounded). */
void h_drain(int fd, int timeout_ms);

/* Monotonic milliseconds. */
uint64_t h_now_ms(void);
/* Sleep a little (a polling step, not synchronisation). */
void h_poll_pause(void);

/* ---- raw rings (libaxon) ----------------------------------------------- */

/* Connect to the harness daemon; 0 or -1 with a message. Bounded by an
 * alarm (SIGALRM ends the process if the daemon never answers). */
int h_ring_connect(struct axon_ring *r, const struct h_daemon *d);

/*
 * Submit one SQE (a copy of *tmpl; user_data is replaced by a fresh value)
 * and wait for its completion. *cqe (if not NULL) receives it. Returns 0,
 * or -ETIMEDOUT / -EPIPE / -EBUSY (SQ full). Completions with other
 * user_data (late ones) are consumed and ignored.
 */
int h_ring_sync(struct axon_ring *r, const struct axon_sqe *tmpl,
		struct axon_cqe *cqe, int timeout_ms);
/*
 * Same, returning cqe.res, or INT32_MIN when no completion came (a message
 * is printed).
 */
int32_t h_ring_res(struct axon_ring *r, const struct axon_sqe *tmpl,
		   uint64_t *aux0, uint64_t *aux1);
/* Submit one SQE without waiting (deferred ops); 0 or -errno. */
int h_ring_post(struct axon_ring *r, const struct axon_sqe *tmpl);

/* Common raw steps; each returns 0 or -1 with a message. */
int h_ring_ctx_create(struct axon_ring *r, uint64_t *ctx, uint64_t *stream);
/* MEM_MAP [va_base + off, +len) in ctx (sync). */
int h_ring_map(struct axon_ring *r, uint64_t ctx, uint64_t off, uint64_t len,
	       uint64_t *addr);

/* Pass a host-memory descriptor to the daemon under cookie; 0 or -errno. */
int h_send_hostmem_fd(struct axon_ring *r, int fd, uint64_t cookie);
/*
 * HOSTMEM_REGISTER [*host + off, +len) of the memfd fd (size bytes, mapped
 * shared at *host), as the shim does it: axond maps the memfd at the
 * client's own address, and where its own mappings sit there (they move
 * with ASLR) it answers ALREADY_MAPPED and maps nothing; the region then
 * moves elsewhere (never into the device window) and asks again, up to 16
 * times. *host follows the region; the bytes stay, being the memfd's. The
 * descriptor is sent before every try. Returns cqe.res; the daemon's
 * axon_hostmem_info lands at the start of the data area.
 */
int32_t h_hostmem_register(struct axon_ring *r, int fd, uint64_t cookie, unsigned char **host,
			   size_t size, uint64_t off, uint64_t len, uint64_t flags);

#endif /* AXON_TESTS_HARNESS_H */
