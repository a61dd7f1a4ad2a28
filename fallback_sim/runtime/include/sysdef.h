/*
 * sysdef.h: the DPU runtime's basic system types.
 */
#ifndef DPUSIM_SYSDEF_H
#define DPUSIM_SYSDEF_H

/* A tasklet id (what me() returns). */
typedef unsigned int sysname_t;
typedef sysname_t thread_id_t;

#endif /* DPUSIM_SYSDEF_H */
