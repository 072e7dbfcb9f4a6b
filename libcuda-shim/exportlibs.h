/* SPDX-License-Identifier: MIT */
/* Private driver tables for the math libraries (exportlibs.c). */
#ifndef AXON_SHIM_EXPORTLIBS_H
#define AXON_SHIM_EXPORTLIBS_H

const void *shim_export_ctxid_table(void);	/* 21318c60-... */
const void *shim_export_fft_table(void);	/* 6e163fbe-... */
const void *shim_export_lt_table(void);		/* 1734dc26-... */

#endif
