/* SPDX-License-Identifier: MIT */
/* axond's log (log.c): one line per event, with level and time. */
#ifndef AXOND_LOG_H
#define AXOND_LOG_H

extern int axond_verbose;
void axond_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define LOG_ERR 0
#define LOG_WARN 1
#define LOG_INFO 2
#define LOG_DEBUG 3
extern char axond_log_tag[32];
extern int axond_log_fd;
#define log_err(...)	axond_log(LOG_ERR, __VA_ARGS__)
#define log_warn(...)	axond_log(LOG_WARN, __VA_ARGS__)
#define log_info(...)	axond_log(LOG_INFO, __VA_ARGS__)
#define log_debug(...)	axond_log(LOG_DEBUG, __VA_ARGS__)

#endif
