// SPDX-License-Identifier: MIT
/*
 * bench-ring: what one crossing costs on this machine, raw and through
 * axon, in one run and one table. See bench/README.md for each row.
 *
 *   floors (two processes, pinned to two CPUs when there are two):
 *     (a) spin round trip on a shared cache line
 *     (b) futex round trip (FUTEX_WAIT / FUTEX_WAKE on shared memory)
 *     (c) unix socket round trip (SOCK_SEQPACKET, 8 bytes)
 *   axon, libaxon against private axonds (sim backend):
 *     (d) NOP round trip, both sides spinning (axond --spin-us default)
 *     (e) NOP round trip, both sides asleep (--spin-us=0, AXON_SPIN_NS=0)
 *     (f) deferred NOP enqueue (get_sqe + fill + submit), axond draining
 *   axon through the CUDA shim (bench-shim, run from here):
 *     (g) cuStreamQuery, cuMemAlloc+cuMemFree 4 KiB, cuLaunchKernel(nop),
 *         cuStreamSynchronize
 *
 *   bench-ring [--build DIR] [--quick] [--axond-unpinned]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <axon/libaxon.h>
#include "bench.h"

/* ---- the table ----------------------------------------------------------- */

struct row {
	char key[8];		/* "a", "g2", ... */
	char name[96];
	char floor[8];		/* key of the floor it is compared with, "" */
	bool skipped;
	char reason[160];
	struct b_summary s;
};

static struct row rows[32];
static int nrows;
static char notes[16][200];
static int nnotes;

static struct row *add_row(const char *key, const char *name, const char *floor,
			   const struct b_summary *s)
{
	struct row *r = &rows[nrows < 31 ? nrows++ : 31];

	memset(r, 0, sizeof(*r));
	snprintf(r->key, sizeof(r->key), "%s", key);
	snprintf(r->name, sizeof(r->name), "%s", name);
	snprintf(r->floor, sizeof(r->floor), "%s", floor ? floor : "");
	if (s)
		r->s = *s;
	return r;
}

static void skip_row(const char *key, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void skip_row(const char *key, const char *name, const char *fmt, ...)
{
	struct row *r = add_row(key, name, NULL, NULL);
	va_list ap;

	r->skipped = true;
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
	fprintf(stderr, "bench-ring: %s skipped: %s\n", key, r->reason);
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	if (nnotes >= 16)
		return;
	va_start(ap, fmt);
	vsnprintf(notes[nnotes++], sizeof(notes[0]), fmt, ap);
	va_end(ap);
}

static const struct row *find_row(const char *key)
{
	int i;

	for (i = 0; i < nrows; i++)
		if (!strcmp(rows[i].key, key) && !rows[i].skipped)
			return &rows[i];
	return NULL;
}

static void print_table(void)
{
	const char *line = "------------------------------------------------------"
			   "------------------------------------------------------";
	int i;

	printf("\n%-58s %8s %9s %9s %9s  %s\n", "name", "samples", "p50 us", "p99 us",
	       "mean us", "ratio (p50 / floor p50)");
	printf("%.*s\n", 112, line);
	for (i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];
		const struct row *f = r->floor[0] ? find_row(r->floor) : NULL;
		char label[128];

		snprintf(label, sizeof(label), "(%s) %s", r->key, r->name);
		if (r->skipped) {
			printf("%-58.58s %8s  skipped: %s\n", label, "-", r->reason);
			continue;
		}
		printf("%-58.58s %8zu %9.3f %9.3f %9.3f  ", label, r->s.n, r->s.p50 / 1000.0,
		       r->s.p99 / 1000.0, r->s.mean / 1000.0);
		if (!r->floor[0])
			printf("%s\n", r->key[0] >= 'a' && r->key[0] <= 'c' && !r->key[1]
			       ? "floor" : "-");
		else if (f && f->s.p50 > 0)
			printf("%6.2fx (%s)\n", r->s.p50 / f->s.p50, f->key);
		else
			printf("  n/a (no floor %s)\n", r->floor);
	}
	printf("%.*s\n", 112, line);
	for (i = 0; i < nnotes; i++)
		printf("%s\n", notes[i]);
}

/* ---- helpers ------------------------------------------------------------- */

static int cpu_srv = -1, cpu_cli = -1;	/* echo side / axond; client side */
static bool quick, axond_unpinned;
static cpu_set_t all_cpus;		/* what we may use, for --axond-unpinned */

static unsigned long iters(unsigned long n)
{
	return quick ? n / 10 : n;
}

static inline void relax(unsigned int *spins)
{
	/* With one CPU for both sides, spinning only burns the slice. */
	if (cpu_cli < 0 && ++*spins % 16 == 0)
		sched_yield();
	else
		__builtin_ia32_pause();
}

static void *shared_page(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

static pid_t fork_pinned(int cpu)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		b_pin(cpu);
	}
	return pid;
}

static void reap(pid_t pid, const char *what)
{
	int status;

	if (waitpid(pid, &status, 0) == pid &&
	    (!WIFEXITED(status) || WEXITSTATUS(status) != 0))
		fprintf(stderr, "bench-ring: %s child ended with status 0x%x\n", what, status);
}

/* ---- (t) the timer ------------------------------------------------------- */

static void bench_timer(void)
{
	const unsigned long n = iters(100000);
	struct b_samples s;
	struct b_summary r;
	unsigned long i;

	b_init(&s, n);
	for (i = 0; i < n + n / 10; i++) {
		uint64_t t0 = b_now(), t1 = b_now();

		if (i >= n / 10)
			b_add(&s, t1 - t0);
	}
	r = b_summarize(&s);
	add_row("t", "timer: two back-to-back clock_gettime", NULL, &r);
	b_free(&s);
}

/* ---- (a) spin ping-pong -------------------------------------------------- */

struct pingpong {
	_Alignas(64) uint64_t ping;
	_Alignas(64) uint64_t pong;
	_Alignas(64) uint32_t word;	/* futex */
};

static void bench_spin(void)
{
	const unsigned long n = iters(100000), warm = n / 10;
	struct pingpong *pp = shared_page(sizeof(*pp));
	struct b_samples s;
	struct b_summary r;
	unsigned int spins = 0;
	unsigned long i;
	pid_t pid;

	pid = fork_pinned(cpu_srv);
	if (pid == 0) {
		uint64_t last = 0, v;

		for (;;) {
			while ((v = __atomic_load_n(&pp->ping, __ATOMIC_ACQUIRE)) == last)
				relax(&spins);
			if (v == UINT64_MAX)
				_exit(0);
			__atomic_store_n(&pp->pong, v, __ATOMIC_RELEASE);
			last = v;
		}
	}
	b_pin(cpu_cli);
	b_init(&s, n);
	for (i = 1; i <= warm + n; i++) {
		uint64_t t0 = b_now(), t1;

		__atomic_store_n(&pp->ping, i, __ATOMIC_RELEASE);
		while (__atomic_load_n(&pp->pong, __ATOMIC_ACQUIRE) != i)
			relax(&spins);
		t1 = b_now();
		if (i > warm)
			b_add(&s, t1 - t0);
	}
	__atomic_store_n(&pp->ping, UINT64_MAX, __ATOMIC_RELEASE);
	reap(pid, "spin");
	r = b_summarize(&s);
	add_row("a", "spin round trip, shared cache line, 2 procs", NULL, &r);
	b_free(&s);
	munmap(pp, sizeof(*pp));
}

/* ---- (b) futex ping-pong ------------------------------------------------- */

static long futex(uint32_t *w, int op, uint32_t val)
{
	return syscall(SYS_futex, w, op, val, NULL, NULL, 0);
}

static void bench_futex(void)
{
	const unsigned long n = iters(20000), warm = n / 10;
	struct pingpong *pp = shared_page(sizeof(*pp));
	struct b_samples s;
	struct b_summary r;
	unsigned long i;
	pid_t pid;

	/* word: 0 = the echo side's turn to wait, 1 = request, 2 = stop. */
	pid = fork_pinned(cpu_srv);
	if (pid == 0) {
		for (;;) {
			uint32_t v;

			while ((v = __atomic_load_n(&pp->word, __ATOMIC_ACQUIRE)) == 0)
				futex(&pp->word, FUTEX_WAIT, 0);
			if (v == 2)
				_exit(0);
			__atomic_store_n(&pp->word, 0, __ATOMIC_RELEASE);
			futex(&pp->word, FUTEX_WAKE, 1);
		}
	}
	b_pin(cpu_cli);
	b_init(&s, n);
	for (i = 0; i < warm + n; i++) {
		uint64_t t0 = b_now(), t1;

		__atomic_store_n(&pp->word, 1, __ATOMIC_RELEASE);
		futex(&pp->word, FUTEX_WAKE, 1);
		while (__atomic_load_n(&pp->word, __ATOMIC_ACQUIRE) == 1)
			futex(&pp->word, FUTEX_WAIT, 1);
		t1 = b_now();
		if (i >= warm)
			b_add(&s, t1 - t0);
	}
	__atomic_store_n(&pp->word, 2, __ATOMIC_RELEASE);
	futex(&pp->word, FUTEX_WAKE, 1);
	reap(pid, "futex");
	r = b_summarize(&s);
	add_row("b", "futex round trip (WAIT/WAKE), 2 procs", NULL, &r);
	b_free(&s);
	munmap(pp, sizeof(*pp));
}

/* ---- (c) unix socket ping-pong ------------------------------------------ */

static void bench_socket(void)
{
	const unsigned long n = iters(20000), warm = n / 10;
	struct b_samples s;
	struct b_summary r;
	unsigned long i;
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		skip_row("c", "unix socket round trip", "socketpair: %s", strerror(errno));
		return;
	}
	pid = fork_pinned(cpu_srv);
	if (pid == 0) {
		uint64_t v;

		close(sv[0]);
		while (recv(sv[1], &v, sizeof(v), 0) == sizeof(v))
			if (send(sv[1], &v, sizeof(v), 0) != sizeof(v))
				_exit(1);
		_exit(0);
	}
	close(sv[1]);
	b_pin(cpu_cli);
	b_init(&s, n);
	for (i = 0; i < warm + n; i++) {
		uint64_t t0 = b_now(), v = i, t1;

		if (send(sv[0], &v, sizeof(v), 0) != sizeof(v) ||
		    recv(sv[0], &v, sizeof(v), 0) != sizeof(v) || v != i) {
			fprintf(stderr, "bench-ring: socket ping-pong failed\n");
			exit(1);
		}
		t1 = b_now();
		if (i >= warm)
			b_add(&s, t1 - t0);
	}
	close(sv[0]);
	reap(pid, "socket");
	r = b_summarize(&s);
	add_row("c", "unix socket round trip (SEQPACKET, 8 B), 2 procs", NULL, &r);
	b_free(&s);
}

/* ---- private daemons ------------------------------------------------------ */

struct daemon {
	pid_t pid;
	char dir[128];
	char sock[160];
	char addr[176];
	char log[160];
};

static char build_dir[PATH_MAX];

static void print_log(const struct daemon *d)
{
	char line[512];
	FILE *f = fopen(d->log, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		fprintf(stderr, "  axond| %s", line);
	fclose(f);
}

static int daemon_start(struct daemon *d, const char *tag, const char *spin_arg)
{
	char bin[PATH_MAX + 16], listen[200], *json, err[256] = "";
	char kernels[PATH_MAX + 48];
	uint64_t t0;
	pid_t pid;

	memset(d, 0, sizeof(*d));
	snprintf(bin, sizeof(bin), "%s/bin/axond", build_dir);
	/* as every sim daemon of the tree is started (axond/sim/kernels-abi.h) */
	snprintf(kernels, sizeof(kernels), "--sim-kernels=%s/lib/axon-sim-kernels.so",
		 build_dir);
	snprintf(d->dir, sizeof(d->dir), "/tmp/axon-bench-%s-XXXXXX", tag);
	if (!mkdtemp(d->dir)) {
		perror("mkdtemp");
		return -1;
	}
	snprintf(d->sock, sizeof(d->sock), "%s/s.sock", d->dir);
	snprintf(d->addr, sizeof(d->addr), "unix:%s", d->sock);
	snprintf(d->log, sizeof(d->log), "%s/axond.log", d->dir);
	snprintf(listen, sizeof(listen), "--listen=unix:%s", d->sock);
	pid = fork_pinned(cpu_srv);
	if (pid == 0 && axond_unpinned)
		sched_setaffinity(0, sizeof(all_cpus), &all_cpus);
	if (pid == 0) {
		const char *argv[] = { bin, "--backend=sim", listen, "--sim-mem=4G", "-q",
				       kernels, spin_arg, NULL };
		int fd = open(d->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(bin, (char *const *)argv);
		fprintf(stderr, "exec %s: %s\n", bin, strerror(errno));
		_exit(127);
	}
	d->pid = pid;
	t0 = b_now();
	while (axon_read_stats(d->addr, &json, err, sizeof(err)) != 0) {
		int status;

		if (waitpid(pid, &status, WNOHANG) == pid || b_now() - t0 > 10000000000ull) {
			fprintf(stderr, "bench-ring: axond (%s) did not start: %s\n", tag, err);
			print_log(d);
			kill(pid, SIGKILL);
			d->pid = 0;
			return -1;
		}
		usleep(2000);
	}
	free(json);
	return 0;
}

static void daemon_stop(struct daemon *d)
{
	int status;

	if (d->pid <= 0)
		return;
	kill(d->pid, SIGTERM);
	if (waitpid(d->pid, &status, 0) == d->pid &&
	    (!WIFEXITED(status) || WEXITSTATUS(status))) {
		fprintf(stderr, "bench-ring: axond exited with status 0x%x\n", status);
		print_log(d);
	}
	unlink(d->log);
	unlink(d->sock);
	rmdir(d->dir);
	d->pid = 0;
}

static int ring_connect(const struct daemon *d, struct axon_ring *r)
{
	char err[256] = "";
	int ret = axon_connect(d->addr, NULL, r, err, sizeof(err));

	if (ret)
		fprintf(stderr, "bench-ring: axon_connect(%s): %s\n", d->addr, err);
	return ret;
}

/* ---- (d), (e) NOP round trips --------------------------------------------- */

static int nop_rtt(struct axon_ring *r, uint64_t ud)
{
	const struct axon_cqe *c;
	struct axon_sqe *sqe = axon_get_sqe(r);
	int ret;

	if (!sqe)
		return -EBUSY;
	axon_prep_nop(sqe);
	sqe->user_data = ud;
	ret = axon_submit(r);
	if (ret != 1)
		return ret < 0 ? ret : -EIO;
	ret = axon_wait_cqe(r, &c, 10ull * 1000000000);
	if (ret)
		return ret;
	if (c->user_data != ud || c->res)
		return -EPROTO;
	axon_cqe_seen(r);
	return 0;
}

static void bench_nop(const struct daemon *d, const char *key, const char *name,
		      const char *floor, unsigned long n, bool sleepy)
{
	const unsigned long warm = n / 10;
	struct axon_ring r;
	struct b_samples s;
	struct b_summary sum;
	unsigned long i;
	int ret;

	if (ring_connect(d, &r)) {
		skip_row(key, name, "cannot connect");
		return;
	}
	if (sleepy)
		r.spin_ns = 0;	/* as AXON_SPIN_NS=0 */
	b_init(&s, n);
	for (i = 0; i < warm + n; i++) {
		uint64_t t0 = b_now(), t1;

		ret = nop_rtt(&r, i);
		t1 = b_now();
		if (ret) {
			skip_row(key, name, "NOP %lu failed: %s", i, strerror(-ret));
			goto out;
		}
		if (i == warm) {
			r.doorbells = 0;
			r.sleeps = 0;
		}
		if (i >= warm)
			b_add(&s, t1 - t0);
	}
	sum = b_summarize(&s);
	add_row(key, name, floor, &sum);
	note("(%s) %lu NOPs: %llu doorbells rung, %llu futex sleeps (client spin %u ns)",
	     key, n, (unsigned long long)r.doorbells, (unsigned long long)r.sleeps,
	     r.spin_ns);
out:
	b_free(&s);
	axon_close(&r);
}

/* ---- (f) deferred enqueue ----------------------------------------------- */

static void bench_enqueue(const struct daemon *d)
{
	const char *name = "deferred NOP enqueue: get_sqe+fill+submit (batch 8)";
	const unsigned long n = iters(100000), warm = n / 10;
	const unsigned int batch = 8;
	struct axon_ring r;
	struct b_samples s;
	struct b_summary sum;
	uint64_t ud = 0, waits = 0;
	unsigned long i;

	if (ring_connect(d, &r)) {
		skip_row("f", name, "cannot connect");
		return;
	}
	b_init(&s, n / batch);
	for (i = 0; i < (warm + n) / batch; i++) {
		unsigned int spins = 0, k;
		uint64_t t0, t1;

		/* Untimed: room for the whole batch. */
		while (axon_sq_space(&r) < batch) {
			relax(&spins);
			waits++;
		}
		t0 = b_now();
		for (k = 0; k < batch; k++) {
			struct axon_sqe *sqe = axon_get_sqe(&r);

			axon_prep_nop(sqe);
			sqe->flags = AXON_SQE_F_DEFERRED;
			sqe->user_data = ud++;
			axon_submit(&r);
		}
		t1 = b_now();
		if (i == warm / batch) {
			r.doorbells = 0;
			waits = 0;
		}
		if (i >= warm / batch)
			b_add(&s, (t1 - t0) * 1000 / batch);	/* ps per op */
	}
	/* All taken, none failed, none completed. */
	if (nop_rtt(&r, UINT64_MAX) || axon_read_once(&r.dpage->pending_error)) {
		skip_row("f", name, "deferred NOPs failed");
	} else {
		sum = b_summarize_ps(&s);
		add_row("f", name, "a", &sum);
		note("(f) %lu deferred NOPs: %llu doorbells rung, %llu polls waiting for "
		     "SQ room (untimed)", n, (unsigned long long)r.doorbells,
		     (unsigned long long)waits);
	}
	b_free(&s);
	axon_close(&r);
}

/* ---- (g) through the shim ------------------------------------------------ */

static void bench_shim(const struct daemon *d)
{
	char bin[PATH_MAX + 32], cubin[PATH_MAX + 32], line[512];
	int pfd[2];
	FILE *f;
	pid_t pid;
	bool any = false;

	snprintf(bin, sizeof(bin), "%s/bench/bench-shim", build_dir);
	snprintf(cubin, sizeof(cubin), "%s/tests/data/kernels.cubin", build_dir);
	if (access(bin, X_OK)) {
		skip_row("g", "CUDA shim calls", "no %s", bin);
		return;
	}
	if (pipe(pfd)) {
		perror("pipe");
		return;
	}
	pid = fork_pinned(cpu_cli);
	if (pid == 0) {
		char nstr[32];
		const char *argv[] = { bin, cubin, nstr, NULL };

		snprintf(nstr, sizeof(nstr), "%d", quick ? 10 : 1);
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		setenv("AXON_ADDR", d->addr, 1);
		execv(bin, (char *const *)argv);
		fprintf(stderr, "exec %s: %s\n", bin, strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *fld[8], *save = NULL, *p;
		int nf = 0;

		line[strcspn(line, "\n")] = 0;
		for (p = strtok_r(line, "\t", &save); p && nf < 8; p = strtok_r(NULL, "\t", &save))
			fld[nf++] = p;
		if (nf == 7 && !strcmp(fld[0], "ROW")) {
			struct b_summary sum = {
				.n = strtoul(fld[3], NULL, 10), .p50 = strtod(fld[4], NULL),
				.p99 = strtod(fld[5], NULL), .mean = strtod(fld[6], NULL),
			};
			char key[8], *name = fld[1], *sp = strchr(fld[1], ' ');

			/* "g1 name..." */
			if (sp) {
				snprintf(key, sizeof(key), "%.*s", (int)(sp - name), name);
				name = sp + 1;
			} else {
				snprintf(key, sizeof(key), "g");
			}
			add_row(key, name, fld[2][0] == '-' ? NULL : fld[2], &sum);
			any = true;
		} else if (nf == 3 && !strcmp(fld[0], "SKIP")) {
			char *sp = strchr(fld[1], ' ');

			if (sp)
				*sp++ = 0;
			skip_row(fld[1], sp ? sp : fld[1], "%s", fld[2]);
			any = true;
		} else if (nf >= 2 && !strcmp(fld[0], "NOTE")) {
			note("%s", fld[1]);
		} else if (nf) {
			fprintf(stderr, "bench-shim: %s\n", fld[0]);
		}
	}
	if (f)
		fclose(f);
	reap(pid, "bench-shim");
	if (!any)
		skip_row("g", "CUDA shim calls", "bench-shim printed nothing");
}

/* ---- main ---------------------------------------------------------------- */

static void header(void)
{
	struct utsname u;
	char model[256] = "?", line[512], date[64];
	FILE *f = fopen("/proc/cpuinfo", "r");
	time_t now = time(NULL);
	double load[3] = { 0 };
	cpu_set_t set;

	if (f) {
		while (fgets(line, sizeof(line), f)) {
			char *c = strchr(line, ':');

			if (!strncmp(line, "model name", 10) && c) {
				snprintf(model, sizeof(model), "%s", c + 2);
				model[strcspn(model, "\n")] = 0;
				break;
			}
		}
		fclose(f);
	}
	uname(&u);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S %Z", localtime(&now));
	getloadavg(load, 3);
	sched_getaffinity(0, sizeof(set), &set);
	printf("axon bench-ring, %s\n", date);
	printf("machine: %s, %s, %ld cores online (%d usable), Linux %s\n", u.machine,
	       model, sysconf(_SC_NPROCESSORS_ONLN), CPU_COUNT(&set), u.release);
	printf("load average at start: %.2f %.2f %.2f\n", load[0], load[1], load[2]);
	if (cpu_cli >= 0 && axond_unpinned)
		printf("pinning: echo side on CPU %d, client on CPU %d, axond unpinned\n",
		       cpu_srv, cpu_cli);
	else if (cpu_cli >= 0)
		printf("pinning: echo side / axond (all its threads) on CPU %d, client "
		       "on CPU %d\n", cpu_srv, cpu_cli);
	else
		printf("pinning: none (one usable CPU: both sides share it)\n");
	printf("units: microseconds, CLOCK_MONOTONIC; warm-up iterations (10%%) are "
	       "not counted\n");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "build", required_argument, NULL, 'b' },
		{ "quick", no_argument, NULL, 'q' },
		{ "axond-unpinned", no_argument, NULL, 'u' },
		{ 0 }
	};
	struct daemon spin, sleepy;
	int o;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'b':
			snprintf(build_dir, sizeof(build_dir), "%s", optarg);
			break;
		case 'q':
			quick = true;
			break;
		case 'u':
			axond_unpinned = true;
			break;
		default:
			fprintf(stderr, "usage: bench-ring [--build DIR] [--quick] "
				"[--axond-unpinned]\n");
			return 2;
		}
	}
	if (!build_dir[0]) {
		/* $(BUILD)/bench/bench-ring -> $(BUILD) */
		ssize_t n = readlink("/proc/self/exe", build_dir, sizeof(build_dir) - 1);
		char *sl;

		build_dir[n > 0 ? n : 0] = 0;
		for (o = 0; o < 2; o++)
			if ((sl = strrchr(build_dir, '/')))
				*sl = 0;
	}
	signal(SIGPIPE, SIG_IGN);
	sched_getaffinity(0, sizeof(all_cpus), &all_cpus);
	b_pick_cpus(&cpu_srv, &cpu_cli);
	header();

	bench_timer();
	bench_spin();
	bench_futex();
	bench_socket();

	if (daemon_start(&spin, "spin", "--spin-us=50") == 0) {
		bench_nop(&spin, "d", "axon NOP round trip, spinning (libaxon)", "a",
			  iters(100000), false);
		bench_enqueue(&spin);
	} else {
		skip_row("d", "axon NOP round trip, spinning", "axond did not start");
		skip_row("f", "deferred NOP enqueue", "axond did not start");
	}
	if (daemon_start(&sleepy, "sleepy", "--spin-us=0") == 0)
		bench_nop(&sleepy, "e", "axon NOP round trip, both asleep (spin 0)", "b",
			  iters(20000), true);
	else
		skip_row("e", "axon NOP round trip, both asleep", "axond did not start");
	daemon_stop(&sleepy);
	if (spin.pid > 0)
		bench_shim(&spin);
	daemon_stop(&spin);

	print_table();
	return 0;
}
