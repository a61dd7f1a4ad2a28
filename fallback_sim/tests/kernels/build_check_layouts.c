/*
 * build_check_layouts.c: variables the host reaches by name, some laid out differently on a DPU, for the
 * build checks (tests/build_checks.rs). Nothing here runs: main only keeps the variables in use.
 *
 * Different on a DPU (pointers, size_t and uintptr_t are 4 bytes there, 8 in a simulated kernel):
 *   args         __host        struct dpu_args { char *buffer; size_t length; uint32_t flags; }: 24 bytes here, 12 on a DPU
 *   cursor       __host        size_t: 8 bytes here, 4 on a DPU
 *   nodes        __mram_noinit struct node { uint32_t value; uintptr_t next; } [64]: `[0].next` at offset 8 here, 4 on a DPU
 * The same on both (long is 8 bytes and 8-aligned on a DPU, as here):
 *   samples      __mram        struct sample { int32_t key; long value; } [128]
 *   params       __host        struct params { uint32_t count; uint64_t seed; uint32_t words[4]; }
 *   plain_words  __host        uint64_t[8]
 *   scratch      (WRAM global, not host-visible) struct dpu_args
 */
#include <defs.h>
#include <mram.h>
#include <stddef.h>
#include <stdint.h>

struct dpu_args {
    char *buffer;
    size_t length;
    uint32_t flags;
};

struct node {
    uint32_t value;
    uintptr_t next;
};

struct sample {
    int32_t key;
    long value;
};

struct params {
    uint32_t count;
    uint64_t seed;
    uint32_t words[4];
};

__host struct dpu_args args;
__host size_t cursor;
__mram_noinit struct node nodes[64];

__mram struct sample samples[128];
__host struct params params;
__host uint64_t plain_words[8];
struct dpu_args scratch;

int main(void)
{
    scratch = args;
    cursor = scratch.length + params.count + (uint32_t)plain_words[me()];
    return 0;
}
