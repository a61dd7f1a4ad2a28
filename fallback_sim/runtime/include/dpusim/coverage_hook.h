/*
 * Included before every kernel source (the builder's -include): the block hook preserves every register on
 * x86-64 (harness/hook.S), and clang, told so, keeps a kernel's values in registers across the hook's calls
 * rather than spilling them around every basic block, which the block costs would count as DPU loads and stores.
 * Clang's coverage instrumentation calls the declaration it finds in the module, and a declaration reaches the
 * module only when used: the reference below uses it and goes in a section the link discards (dpusim.ld). GCC's
 * instrumentation ignores the attribute, so its kernels keep the spills.
 */
#ifndef DPUSIM_COVERAGE_HOOK_H
#define DPUSIM_COVERAGE_HOOK_H
#if defined(__x86_64__) && defined(__clang__)
void __sanitizer_cov_trace_pc(void) __attribute__((no_caller_saved_registers));
__attribute__((used, section(".discard.dpusim"))) static void *const __dpusim_coverage_hook_reference =
    (void *)__sanitizer_cov_trace_pc;
#endif
#endif
