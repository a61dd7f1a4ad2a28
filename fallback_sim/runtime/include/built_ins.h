/*
 * built_ins.h: the SDK's __builtin_<instruction>_<operands> wrappers of single DPU instructions, with host
 * equivalents. Each is a statement that writes its first argument, as the SDK's inline assembly does:
 *
 *   uint32_t ones; __builtin_cao_rr(ones, word);      // ones = number of set bits of word
 *   __builtin_lsl_rri(shifted, word, "3");            // immediates are string literals, as in the SDK
 *   __builtin_nop_();
 *
 * Provided: nop; the 32-bit register forms (_rrr, and _rri where the instruction has one) of add, sub, rsub,
 * and, or, xor, nand, nor, nxor, andn, orn, lsl, lsr, asr, rol, ror; the counts cao, clz, clo, cls and the
 * extensions extsb, extsh, extub, extuh (_rr); the 8x8-bit multiplies mul_{sl,sh,ul,uh}_{sl,sh,ul,uh}_rrr; and
 * cmpb4_rrr. Forms with a condition and a jump target (_rrrci, ...), 64-bit destinations (_s/_u) and the DMA,
 * boot and timer instructions have no host meaning and are not provided: a kernel using one fails to link,
 * naming it. Shift amounts use their low five bits, as the DPU does.
 */
#ifndef DPUSIM_BUILT_INS_H
#define DPUSIM_BUILT_INS_H

#include <stdint.h>

/* An instruction's immediate, given as a string literal ("12", "-3", "0x1f"). */
static inline uint32_t __dpusim_builtin_immediate(const char *text)
{
    int negative = *text == '-';
    text += negative || *text == '+';
    uint32_t base = 10;
    if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
        base = 16;
        text += 2;
    }
    uint32_t value = 0;
    for (; *text != '\0'; text++) {
        uint32_t digit = (*text >= '0' && *text <= '9')   ? (uint32_t)(*text - '0')
                         : (*text >= 'a' && *text <= 'f') ? (uint32_t)(*text - 'a' + 10)
                         : (*text >= 'A' && *text <= 'F') ? (uint32_t)(*text - 'A' + 10)
                                                          : base;
        if (digit >= base)
            break;
        value = value * base + digit;
    }
    return negative ? (uint32_t)0 - value : value;
}

static inline uint32_t __dpusim_rotate_left(uint32_t value, uint32_t shift)
{
    shift &= 31;
    return shift == 0 ? value : (value << shift) | (value >> (32 - shift));
}

static inline uint32_t __dpusim_count_leading_zeros(uint32_t value)
{
    return value == 0 ? 32 : (uint32_t)__builtin_clz(value);
}

/* Leading bits equal to the sign bit, the sign bit included. */
static inline uint32_t __dpusim_count_leading_sign(uint32_t value)
{
    return __dpusim_count_leading_zeros((value & 0x80000000u) ? ~value : value);
}

/* Each byte of the result is 1 where the bytes of a and b are equal, else 0. */
static inline uint32_t __dpusim_compare_bytes(uint32_t a, uint32_t b)
{
    uint32_t result = 0;
    for (uint32_t byte = 0; byte < 4; byte++)
        if (((a >> (8 * byte)) & 0xFF) == ((b >> (8 * byte)) & 0xFF))
            result |= 1u << (8 * byte);
    return result;
}

#define __builtin_nop_() ((void)0)

/* One-register, two-register and register-immediate forms of an operation on 32-bit words a and b. */
#define __DPUSIM_BUILTIN_RRR(result, ra, rb, expression)                                                              \
    do {                                                                                                              \
        uint32_t a = (uint32_t)(ra), b = (uint32_t)(rb);                                                              \
        (result) = (expression);                                                                                      \
    } while (0)
#define __DPUSIM_BUILTIN_RR(result, ra, expression)                                                                   \
    do {                                                                                                              \
        uint32_t a = (uint32_t)(ra);                                                                                  \
        (result) = (expression);                                                                                      \
    } while (0)
#define __DPUSIM_BUILTIN_RRI(result, ra, imm, expression)                                                             \
    __DPUSIM_BUILTIN_RRR(result, ra, __dpusim_builtin_immediate(imm), expression)

#define __builtin_add_rrr(rc, ra, rb) __DPUSIM_BUILTIN_RRR(rc, ra, rb, a + b)
#define __builtin_add_rri(rc, ra, imm) __DPUSIM_BUILTIN_RRI(rc, ra, imm, a + b)
#define __builtin_sub_rrr(rc, ra, rb) __DPUSIM_BUILTIN_RRR(rc, ra, rb, a - b)
#define __builtin_rsub_rrr(rc, ra, rb) __DPUSIM_BUILTIN_RRR(rc, ra, rb, b - a)
#define __builtin_and_rrr(rc, ra, rb) __DPUSIM_BUILTIN_RRR(rc, ra, rb, a & b)
#define __builtin_and_rri(rc, ra, imm) __DPUSIM_BUILTIN_RRI(rc, ra, imm, a & b)
#define __builtin_or_rrr(rc, ra, rb) __DPUSIM_BUILTIN_RRR(rc, ra, rb, a | b)
#define __builtin_or_rri(rc, ra, imm) __DPUSIM_BUILTIN_RRI(rc, ra, imm, a | b)
#define __builtin_xor_rrr(rc, ra, rb) __DPUSIM_BUILTIN_RRR(rc, ra, rb, a ^ b)
#define __builtin_xor_rri(rc, ra, imm) __DPUSIM_BUILTIN_RRI(rc, ra, imm, a ^ b)
#define __builtin_nand_rrr(rc, ra, rb) __DPUSIM_BUILTIN_RRR(rc, ra, rb, ~(a & b))
#define __builtin_nor_rrr(rc, ra, rb) __DPUSIM_BUILTIN_RRR(rc, ra, rb, ~(a | b))
#define __builtin_nxor_rrr(rc, ra, rb) __DPUSIM_BUILTIN_RRR(rc, ra, rb, ~(a ^ b))
#define __builtin_andn_rrr(rc, ra, rb) __DPUSIM_BUILTIN_RRR(rc, ra, rb, ~a & b)
#define __builtin_orn_rrr(rc, ra, rb) __DPUSIM_BUILTIN_RRR(rc, ra, rb, ~a | b)
#define __builtin_lsl_rrr(rc, ra, rb) __DPUSIM_BUILTIN_RRR(rc, ra, rb, a << (b & 31))
#define __builtin_lsl_rri(rc, ra, imm) __DPUSIM_BUILTIN_RRI(rc, ra, imm, a << (b & 31))
#define __builtin_lsr_rrr(rc, ra, rb) __DPUSIM_BUILTIN_RRR(rc, ra, rb, a >> (b & 31))
#define __builtin_lsr_rri(rc, ra, imm) __DPUSIM_BUILTIN_RRI(rc, ra, imm, a >> (b & 31))
#define __builtin_asr_rrr(rc, ra, rb) __DPUSIM_BUILTIN_RRR(rc, ra, rb, (uint32_t)((int32_t)a >> (b & 31)))
#define __builtin_asr_rri(rc, ra, imm) __DPUSIM_BUILTIN_RRI(rc, ra, imm, (uint32_t)((int32_t)a >> (b & 31)))
#define __builtin_rol_rrr(rc, ra, rb) __DPUSIM_BUILTIN_RRR(rc, ra, rb, __dpusim_rotate_left(a, b))
#define __builtin_rol_rri(rc, ra, imm) __DPUSIM_BUILTIN_RRI(rc, ra, imm, __dpusim_rotate_left(a, b))
#define __builtin_ror_rrr(rc, ra, rb) __DPUSIM_BUILTIN_RRR(rc, ra, rb, __dpusim_rotate_left(a, 32 - (b & 31)))
#define __builtin_ror_rri(rc, ra, imm) __DPUSIM_BUILTIN_RRI(rc, ra, imm, __dpusim_rotate_left(a, 32 - (b & 31)))
#define __builtin_cmpb4_rrr(rc, ra, rb) __DPUSIM_BUILTIN_RRR(rc, ra, rb, __dpusim_compare_bytes(a, b))

/* One-register forms. */
#define __builtin_cao_rr(rc, ra) __DPUSIM_BUILTIN_RR(rc, ra, (uint32_t)__builtin_popcount(a))
#define __builtin_clz_rr(rc, ra) __DPUSIM_BUILTIN_RR(rc, ra, __dpusim_count_leading_zeros(a))
#define __builtin_clo_rr(rc, ra) __DPUSIM_BUILTIN_RR(rc, ra, __dpusim_count_leading_zeros(~a))
#define __builtin_cls_rr(rc, ra) __DPUSIM_BUILTIN_RR(rc, ra, __dpusim_count_leading_sign(a))
#define __builtin_extsb_rr(rc, ra) __DPUSIM_BUILTIN_RR(rc, ra, (uint32_t)(int32_t)(int8_t)a)
#define __builtin_extsh_rr(rc, ra) __DPUSIM_BUILTIN_RR(rc, ra, (uint32_t)(int32_t)(int16_t)a)
#define __builtin_extub_rr(rc, ra) __DPUSIM_BUILTIN_RR(rc, ra, a & 0xFFu)
#define __builtin_extuh_rr(rc, ra) __DPUSIM_BUILTIN_RR(rc, ra, a & 0xFFFFu)

/* 8x8-bit multiplies: s/u signed or unsigned, l/h the low byte or the second byte of each operand. */
#define __DPUSIM_BYTE_SL(x) ((int32_t)(int8_t)((x) & 0xFF))
#define __DPUSIM_BYTE_SH(x) ((int32_t)(int8_t)(((x) >> 8) & 0xFF))
#define __DPUSIM_BYTE_UL(x) ((int32_t)((x) & 0xFF))
#define __DPUSIM_BYTE_UH(x) ((int32_t)(((x) >> 8) & 0xFF))
#define __DPUSIM_MUL(rc, ra, rb, first, second)                                                                       \
    __DPUSIM_BUILTIN_RRR(rc, ra, rb, (uint32_t)(__DPUSIM_BYTE_##first(a) * __DPUSIM_BYTE_##second(b)))
#define __builtin_mul_sl_sl_rrr(rc, ra, rb) __DPUSIM_MUL(rc, ra, rb, SL, SL)
#define __builtin_mul_sl_sh_rrr(rc, ra, rb) __DPUSIM_MUL(rc, ra, rb, SL, SH)
#define __builtin_mul_sl_ul_rrr(rc, ra, rb) __DPUSIM_MUL(rc, ra, rb, SL, UL)
#define __builtin_mul_sl_uh_rrr(rc, ra, rb) __DPUSIM_MUL(rc, ra, rb, SL, UH)
#define __builtin_mul_sh_sl_rrr(rc, ra, rb) __DPUSIM_MUL(rc, ra, rb, SH, SL)
#define __builtin_mul_sh_sh_rrr(rc, ra, rb) __DPUSIM_MUL(rc, ra, rb, SH, SH)
#define __builtin_mul_sh_ul_rrr(rc, ra, rb) __DPUSIM_MUL(rc, ra, rb, SH, UL)
#define __builtin_mul_sh_uh_rrr(rc, ra, rb) __DPUSIM_MUL(rc, ra, rb, SH, UH)
#define __builtin_mul_ul_ul_rrr(rc, ra, rb) __DPUSIM_MUL(rc, ra, rb, UL, UL)
#define __builtin_mul_ul_uh_rrr(rc, ra, rb) __DPUSIM_MUL(rc, ra, rb, UL, UH)
#define __builtin_mul_uh_ul_rrr(rc, ra, rb) __DPUSIM_MUL(rc, ra, rb, UH, UL)
#define __builtin_mul_uh_uh_rrr(rc, ra, rb) __DPUSIM_MUL(rc, ra, rb, UH, UH)

#endif /* DPUSIM_BUILT_INS_H */
