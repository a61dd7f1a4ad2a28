/*
 * build_check_iram_overflow.c: a kernel too large for a DPU's IRAM (4,096 instructions), for the IRAM
 * estimate (tests/build_checks.rs and the libdpu layer's strict-load test). The preprocessor generates 900
 * distinct functions step_100 .. step_999, each six DPU instructions (an xor, two shifts, an add, an xor and
 * the return: some 5,400 in all; the host's two-operand code takes about ten); main calls the one `selector`
 * picks, through a table that keeps them all. It runs on the simulator: with `selector` = 0 and `input` = 1,
 * `output` is step_100(1) = 109.
 */
#include <stdint.h>

#include <defs.h>

#define STEP(n)                                                                                                \
    static __attribute__((noinline)) uint32_t step_##n(uint32_t x)                                            \
    {                                                                                                          \
        return ((x ^ n##u) + (x >> (n % 13 + 1))) ^ (x << (n % 7 + 1));                                        \
    }
#define ENTRY(n) step_##n,

#define TEN(M, p) M(p##0) M(p##1) M(p##2) M(p##3) M(p##4) M(p##5) M(p##6) M(p##7) M(p##8) M(p##9)
#define HUNDRED(M, p)                                                                                          \
    TEN(M, p##0) TEN(M, p##1) TEN(M, p##2) TEN(M, p##3) TEN(M, p##4)                                           \
    TEN(M, p##5) TEN(M, p##6) TEN(M, p##7) TEN(M, p##8) TEN(M, p##9)
#define NINE_HUNDRED(M)                                                                                        \
    HUNDRED(M, 1) HUNDRED(M, 2) HUNDRED(M, 3) HUNDRED(M, 4) HUNDRED(M, 5)                                      \
    HUNDRED(M, 6) HUNDRED(M, 7) HUNDRED(M, 8) HUNDRED(M, 9)

NINE_HUNDRED(STEP)

static uint32_t (*const steps[])(uint32_t) = { NINE_HUNDRED(ENTRY) };
#define NR_STEPS (sizeof(steps) / sizeof(steps[0]))

__host uint32_t selector;
__host uint32_t input;
__host uint32_t output;

int main(void)
{
    if (me() == 0) {
        output = steps[selector % NR_STEPS](input);
    }
    return 0;
}
