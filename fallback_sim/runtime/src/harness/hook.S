/*
 * __sanitizer_cov_trace_pc, the block hook (clock.c says what it does), for x86-64: it preserves every register,
 * general-purpose and SSE, so that a kernel calling it may keep any value in a register across the call.
 *
 * Clang compiles the kernels' calls to it so (dpusim/coverage_hook.h declares it no_caller_saved_registers). An
 * ordinary call clobbers nine of x86-64's sixteen general-purpose registers, and the hook is called at every
 * basic block: the kernel would keep its values in the six callee-saved registers and spill the rest to the
 * stack around every block, and the block costs would count those spills as DPU loads and stores, which a DPU,
 * with 24 registers and no such calls, does not execute.
 *
 * Fast path, in one register, %rbp (which compilers allocate last): the return address less
 * __dpusim_kernel_text is the call's site; __dpusim_site_runs[site]++ and run.budget -=
 * __dpusim_site_instructions[site] (the budget is at offset 0 of `run`, asserted in clock.c). Each register it
 * uses costs a store and a load per block, so it uses one.
 * The harness is linked at fixed addresses below 2 GiB, so the tables are absolute 32-bit displacements. A
 * negative budget takes the slow path, which saves the caller-saved registers and calls clock_budget_spent,
 * which may switch tasklets: the saved registers stay on the tasklet's own stack meanwhile.
 */
#if defined(__x86_64__)
    .text
    .globl __sanitizer_cov_trace_pc
    .type __sanitizer_cov_trace_pc, @function
__sanitizer_cov_trace_pc:
    pushq %rbp
    movq 8(%rsp), %rbp
    subq $__dpusim_kernel_text, %rbp
    addq $1, __dpusim_site_runs(,%rbp,8)
    movl __dpusim_site_instructions(,%rbp,4), %ebp
    subq %rbp, run(%rip)
    js 1f
    popq %rbp
    ret
1:
    /* At entry %rsp was 8 past a multiple of 16: after ten pushes and 264 bytes it is a multiple of 16, as the
     * call needs. */
    pushq %rax
    pushq %rcx
    pushq %rdx
    pushq %rsi
    pushq %rdi
    pushq %r8
    pushq %r9
    pushq %r10
    pushq %r11
    subq $264, %rsp
    movaps %xmm0, 0(%rsp)
    movaps %xmm1, 16(%rsp)
    movaps %xmm2, 32(%rsp)
    movaps %xmm3, 48(%rsp)
    movaps %xmm4, 64(%rsp)
    movaps %xmm5, 80(%rsp)
    movaps %xmm6, 96(%rsp)
    movaps %xmm7, 112(%rsp)
    movaps %xmm8, 128(%rsp)
    movaps %xmm9, 144(%rsp)
    movaps %xmm10, 160(%rsp)
    movaps %xmm11, 176(%rsp)
    movaps %xmm12, 192(%rsp)
    movaps %xmm13, 208(%rsp)
    movaps %xmm14, 224(%rsp)
    movaps %xmm15, 240(%rsp)
    call clock_budget_spent
    movaps 0(%rsp), %xmm0
    movaps 16(%rsp), %xmm1
    movaps 32(%rsp), %xmm2
    movaps 48(%rsp), %xmm3
    movaps 64(%rsp), %xmm4
    movaps 80(%rsp), %xmm5
    movaps 96(%rsp), %xmm6
    movaps 112(%rsp), %xmm7
    movaps 128(%rsp), %xmm8
    movaps 144(%rsp), %xmm9
    movaps 160(%rsp), %xmm10
    movaps 176(%rsp), %xmm11
    movaps 192(%rsp), %xmm12
    movaps 208(%rsp), %xmm13
    movaps 224(%rsp), %xmm14
    movaps 240(%rsp), %xmm15
    addq $264, %rsp
    popq %r11
    popq %r10
    popq %r9
    popq %r8
    popq %rdi
    popq %rsi
    popq %rdx
    popq %rcx
    popq %rax
    popq %rbp
    ret
    .size __sanitizer_cov_trace_pc, . - __sanitizer_cov_trace_pc
#endif
    .section .note.GNU-stack, "", %progbits
