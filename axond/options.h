/* SPDX-License-Identifier: MIT */
/* axond's command line (options.c). */
#ifndef AXOND_OPTIONS_H
#define AXOND_OPTIONS_H

struct axond;

/* axond's options into d->cfg, defaults first (the fuzzers' in-process
 * daemon, tests/fuzz/, starts from them too); 0 or -EINVAL. */
int axond_parse_args(struct axond *d, int argc, char **argv);

#endif
