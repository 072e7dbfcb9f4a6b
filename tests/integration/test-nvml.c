// SPDX-License-Identifier: MIT
/*
 * integration-nvml: axon's libnvidia-ml.so.1 ($AXON_BUILD/lib, built from
 * libnvml-shim/) through tests/bin/nvml against a private axond (sim).
 * Each part of the client (tests/integration/nvml.c says what each checks)
 * runs in a process of its own:
 *
 *   uninit, init        UNINITIALIZED before init and after the last
 *                       shutdown; init/shutdown reference counting
 *   identity, pci       count, name, UUID, compute capability, versions,
 *                       PCI info and look-ups, as the driver API answers
 *   memory, procs       memory from cuDeviceTotalMem/cuMemGetInfo; no
 *                       processes listed (isolation)
 *   refuse              forged handles, NULLs, bad indices, short buffers
 *   unsupported         NOT_SUPPORTED answers, logged only with AXON_LOG
 *   errors, exports     nvmlErrorString; only NVML names exported
 *   nodaemon            AXON_ADDR naming no daemon: init DRIVER_NOT_LOADED
 *   hold                while the client holds NVML initialised: the daemon
 *                       lists it as a client, it maps our libnvidia-ml and
 *                       libcuda and no other, holds no /dev/nvidia* fd
 *
 * Every part also checks its own process for /dev/nvidia* descriptors and
 * mappings and foreign libraries. After each: nothing left in the daemon.
 */
#include <check.h>
#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define RUN_MS	H_MS(60000)
#define IDLE_MS	H_MS(5000)

static void run_part(const char *part)
{
	int rc = h_run_bin(RUN_MS, "nvml", part, NULL);

	ck_assert_msg(rc == 0, "nvml %s: exit %d", part, rc);
	ck_assert_msg(h_wait_idle(&h_daemon, IDLE_MS) == 0,
		      "the daemon still holds something after nvml %s exited", part);
}

#define PART(name)				\
	START_TEST(test_##name)			\
	{					\
		run_part(#name);		\
	}					\
	END_TEST

PART(uninit)
PART(init)
PART(identity)
PART(pci)
PART(memory)
PART(procs)
PART(refuse)
PART(unsupported)
PART(errors)
PART(exports)

/* No daemon at AXON_ADDR: nvmlInit fails cleanly (DRIVER_NOT_LOADED). */
START_TEST(test_nodaemon)
{
	const char *env = getenv("AXON_ADDR");
	char addr[PATH_MAX + 16], *saved = env ? strdup(env) : NULL;
	int rc;

	snprintf(addr, sizeof(addr), "unix:%s/no-such.sock", h_daemon.dir);
	setenv("AXON_ADDR", addr, 1);
	rc = h_run_bin(RUN_MS, "nvml", "nodaemon", NULL);
	if (saved)
		setenv("AXON_ADDR", saved, 1);
	else
		unsetenv("AXON_ADDR");
	free(saved);
	ck_assert_msg(rc == 0, "nvml nodaemon: exit %d", rc);
}
END_TEST

/* The libraries pid maps: ours only. */
static void check_maps(pid_t pid)
{
	char path[64], line[PATH_MAX + 256], cuda[PATH_MAX], nvml[PATH_MAX];
	bool saw_cuda = false, saw_nvml = false;
	FILE *f;

	ck_assert(realpath(h_path("lib/libcuda.so.1"), cuda) != NULL);
	ck_assert(realpath(h_path("lib/libnvidia-ml.so.1"), nvml) != NULL);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot read %s", path);
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');
		const char *base;

		if (!p)
			continue;
		p[strcspn(p, "\n")] = '\0';
		ck_assert_msg(strncmp(p, "/dev/nvidia", 11), "nvml maps %s", p);
		base = strrchr(p, '/') + 1;
		if (!strncmp(base, "libcuda.so", 10)) {
			ck_assert_msg(!strcmp(p, cuda), "nvml maps a foreign libcuda: %s", p);
			saw_cuda = true;
		}
		if (!strncmp(base, "libnvidia-ml", 12)) {
			ck_assert_msg(!strcmp(p, nvml), "nvml maps a foreign libnvidia-ml: %s", p);
			saw_nvml = true;
		}
	}
	fclose(f);
	ck_assert_msg(saw_cuda && saw_nvml, "nvml does not map %s and %s", cuda, nvml);
}

static void check_fds(pid_t pid)
{
	char dir[64], link[PATH_MAX + 64], target[PATH_MAX];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	ck_assert_msg(d != NULL, "cannot read %s", dir);
	while ((de = readdir(d))) {
		ssize_t n;

		snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		ck_assert_msg(strncmp(target, "/dev/nvidia", 11), "nvml holds fd %s on %s",
			      de->d_name, target);
	}
	closedir(d);
}

START_TEST(test_hold)
{
	const struct json *c;
	struct json *doc;
	int fd = -1, rc;
	pid_t pid;

	pid = h_spawn_bin(&fd, "nvml", "hold", NULL);
	ck_assert(pid > 0);
	ck_assert_msg(h_wait_line(fd, "holding", RUN_MS) == 0, "nvml never held");
	check_maps(pid);
	check_fds(pid);

	/* NVML went through axond: the memory query made a context there. */
	doc = h_stats(&h_daemon);
	ck_assert(doc != NULL);
	c = h_stats_client(doc, pid);
	if (!c)
		h_stats_print(&h_daemon);
	ck_assert_msg(c != NULL, "nvml (pid %d) is not a client of the daemon", (int)pid);
	ck_assert_str_eq(json_str(json_get(c, "comm"), "?"), "nvml");
	ck_assert_uint_ge(h_client_u64(c, "handles.contexts"), 1);
	ck_assert_uint_ge(h_client_u64(c, "ops.by_op.MEM_GET_INFO"), 1);
	json_free(doc);

	kill(pid, SIGUSR1);
	h_drain(fd, RUN_MS);
	close(fd);
	rc = h_wait_child(pid, RUN_MS, "nvml hold");
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(h_wait_client_gone(&h_daemon, pid, IDLE_MS), 0);
	ck_assert_int_eq(h_wait_idle(&h_daemon, IDLE_MS), 0);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_uninit);
	tcase_add_test(tc, test_init);
	tcase_add_test(tc, test_identity);
	tcase_add_test(tc, test_pci);
	tcase_add_test(tc, test_memory);
	tcase_add_test(tc, test_procs);
	tcase_add_test(tc, test_refuse);
	tcase_add_test(tc, test_unsupported);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_exports);
	tcase_add_test(tc, test_nodaemon);
	tcase_add_test(tc, test_hold);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	h_require_file(h_path("lib/libnvidia-ml.so.1"));
	return h_check_main("integration-nvml", "4G", NULL, add_tests, 120);
}
