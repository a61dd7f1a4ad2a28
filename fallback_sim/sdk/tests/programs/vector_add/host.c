#include <dpu.h>
#include <dpu_log.h>
#include <stdio.h>
#include <stdlib.h>
#define N 4096
int main(void) {
  struct dpu_set_t set, dpu; uint32_t i, nr;
  DPU_ASSERT(dpu_alloc(NR_DPUS, NULL, &set));
  DPU_ASSERT(dpu_load(set, "./bin/dpu_code", NULL));
  DPU_ASSERT(dpu_get_nr_dpus(set, &nr));
  uint32_t *buf = malloc(sizeof(uint32_t) * 3 * N * nr);
  for (i = 0; i < 2u*N*nr; i++) buf[(i / (2*N)) * 3 * N + i % (2*N)] = i;
  uint32_t n = N; DPU_ASSERT(dpu_copy_to(set, "n", 0, &n, 4));
  DPU_FOREACH(set, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, buf + i * 3 * N)); }
  DPU_ASSERT(dpu_push_xfer(set, DPU_XFER_TO_DPU, DPU_MRAM_HEAP_POINTER_NAME, 0, 2 * N * 4, DPU_XFER_DEFAULT));
  DPU_ASSERT(dpu_launch(set, DPU_SYNCHRONOUS));
  DPU_FOREACH(set, dpu, i) { DPU_ASSERT(dpu_prepare_xfer(dpu, buf + i * 3 * N + 2 * N)); }
  DPU_ASSERT(dpu_push_xfer(set, DPU_XFER_FROM_DPU, DPU_MRAM_HEAP_POINTER_NAME, 2 * N * 4, N * 4, DPU_XFER_DEFAULT));
  unsigned errors = 0;
  for (uint32_t d = 0; d < nr; d++) for (i = 0; i < N; i++) { uint32_t *b = buf + d*3*N; if (b[2*N+i] != b[i] + b[N+i]) errors++; }
  DPU_FOREACH(set, dpu) { DPU_ASSERT(dpu_log_read(dpu, stdout)); break; }
  printf("%u DPUs, %u errors\n", nr, errors);
  DPU_ASSERT(dpu_free(set));
  return errors != 0;
}
