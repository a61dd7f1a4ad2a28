/*
 * built_ins.h: on a DPU, wrappers of the compiler's DPU-only __builtin_* instructions. They have no meaning in
 * a simulated DPU binary, so this header is intentionally empty: it exists so that kernels including it build.
 */
#ifndef DPUSIM_BUILT_INS_H
#define DPUSIM_BUILT_INS_H
#endif /* DPUSIM_BUILT_INS_H */
