/* What the drop_in kernel and its host agree on. */
#ifndef DROP_IN_COMMON_H
#define DROP_IN_COMMON_H

#define MRAM_BYTES (64u << 20)
/* A plain MRAM offset (no MRAM base), past the heap start. */
#define OFFSET_WORD_AT (1u << 20)
/* Heap offsets of the odd-size writes: 1 byte (2,048 on a DPU) and 12 bytes (8 on a DPU). */
#define ODD_WRITE_AT 4096u
#define TWELVE_WRITE_AT 8192u
/* Heap offset of the word read as `p + (uint32_t)(a - b)` with p = heap + WRAPPED_AT + 8, a - b = -8. */
#define WRAPPED_AT 16384u
#define ODD_WRITE_WORDS 256u
#define ODD_WRITE_PATTERN 0x5EED000000000000ull
/* 4 KiB of locals on a 1 KiB stack. */
#define DEEP_STACK_WORDS 512u

#endif
