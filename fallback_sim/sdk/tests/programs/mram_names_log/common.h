#ifndef _COMMON_H_
#define _COMMON_H_

#include <stdint.h>

#define TABLE_LEN 1024         /* uint64_t elements of the broadcast table */
#define CHUNK 64               /* elements per mram_read */
#define INIT_LEN 4

typedef struct {
    uint64_t factor;
    uint32_t dpu_id;
    uint32_t launch;
} dpu_params_t;

#endif
