/*
 * dpusim_switch(void **save_sp, void *load_sp): saves the callee-saved registers and the floating-point control
 * state (without MXCSR's exception flags) on the current stack, stores the stack pointer in *save_sp, and
 * resumes the context saved at load_sp (loading its floating-point state only when it differs from the current
 * one, as it almost never does).
 * Tasklets are coroutines on one thread, so this is all a tasklet switch needs (no signal mask, no syscall).
 * The frame layout must match dpusim_prepare_stack in tasklets.c.
 */
#if defined(__x86_64__)
    .text
    .globl dpusim_switch
    .type dpusim_switch, @function
dpusim_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    /* The saved word is built in a register: reading 8 bytes back from the two narrower stores above would
     * stall on store forwarding. MXCSR's exception flags (bits 0-5) are left out: they are status, not
     * state the ABI preserves, and float code sets them at different times in different tasklets, which
     * would make the contexts differ at nearly every switch. */
    movl (%rsp), %eax
    andl $0xffc0, %eax
    movzwl 4(%rsp), %ecx
    shlq $32, %rcx
    orq %rcx, %rax
    movq %rax, (%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    /* ldmxcsr and fldcw take a tenth of a switch's time: load them only when the resumed context's differ. */
    cmpq (%rsp), %rax
    jne 1f
2:
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
1:
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    jmp 2b
    .size dpusim_switch, . - dpusim_switch
#elif defined(__aarch64__)
    .text
    .globl dpusim_switch
    .type dpusim_switch, %function
dpusim_switch:
    sub sp, sp, #176
    stp x19, x20, [sp, #0]
    stp x21, x22, [sp, #16]
    stp x23, x24, [sp, #32]
    stp x25, x26, [sp, #48]
    stp x27, x28, [sp, #64]
    stp x29, x30, [sp, #80]
    stp d8, d9, [sp, #96]
    stp d10, d11, [sp, #112]
    stp d12, d13, [sp, #128]
    stp d14, d15, [sp, #144]
    mrs x9, fpcr
    str x9, [sp, #160]
    mov x10, sp
    str x10, [x0]
    mov sp, x1
    ldp x19, x20, [sp, #0]
    ldp x21, x22, [sp, #16]
    ldp x23, x24, [sp, #32]
    ldp x25, x26, [sp, #48]
    ldp x27, x28, [sp, #64]
    ldp x29, x30, [sp, #80]
    ldp d8, d9, [sp, #96]
    ldp d10, d11, [sp, #112]
    ldp d12, d13, [sp, #128]
    ldp d14, d15, [sp, #144]
    ldr x10, [sp, #160]
    cmp x9, x10
    b.eq 1f
    msr fpcr, x10
1:
    add sp, sp, #176
    ret
    .size dpusim_switch, . - dpusim_switch
#else
#error "the DPU simulator runs on x86-64 and aarch64 Linux only"
#endif
    .section .note.GNU-stack, "", %progbits
