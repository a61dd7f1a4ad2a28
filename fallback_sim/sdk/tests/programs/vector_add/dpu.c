#include <stdint.h>
#include <defs.h>
#include <mram.h>
#include <barrier.h>
#include <stdio.h>
__host uint32_t n;
BARRIER_INIT(b, NR_TASKLETS);
int main(void) {
  uint32_t base = (uint32_t)DPU_MRAM_HEAP_POINTER;
  __dma_aligned uint32_t a[64], c[64];
  for (uint32_t i = me()*64; i < n; i += 64*NR_TASKLETS) {
    mram_read((__mram_ptr void*)(base + i*4), a, 256);
    mram_read((__mram_ptr void*)(base + (n + i)*4), c, 256);
    for (int k = 0; k < 64; k++) c[k] += a[k];
    mram_write(c, (__mram_ptr void*)(base + (2*n + i)*4), 256);
  }
  barrier_wait(&b);
  if (me() == 0) printf("done %u\n", n);
  return 0;
}
