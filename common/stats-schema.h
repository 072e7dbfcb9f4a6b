/* SPDX-License-Identifier: MIT */
/*
 * The stats document's schema version (Documentation/abi.md, "Stats"):
 * axond writes it as the top-level "schema"; axonctl and axon-top refuse a
 * document of a version above the one they were built with. It changes
 * only when a reader of the old version would misread the document (a
 * field removed, renamed or given another meaning); new fields do not
 * change it, readers ignore fields they do not know.
 */
#ifndef AXON_STATS_SCHEMA_H
#define AXON_STATS_SCHEMA_H

#define AXON_STATS_SCHEMA	1

#endif
