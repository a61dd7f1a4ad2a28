/*
 * macro_utils.h: the DPU runtime's preprocessor helpers (__STR, __CONCAT, __REPEAT_<n>, __FOR_EACH_THREAD).
 *
 * glibc's <sys/cdefs.h> also defines __CONCAT, as a paste that does not expand its arguments. We include it
 * first (so a later include cannot redefine the macro) and replace it by the SDK's expanding version; glibc
 * only ever passes it already-expanded arguments, so its own uses are unaffected.
 */
#ifndef DPUSIM_MACRO_UTILS_H
#define DPUSIM_MACRO_UTILS_H

#if defined(__has_include)
#if __has_include(<sys/cdefs.h>)
#include <sys/cdefs.h>
#endif
#endif

#include <dpu_characteristics.h>

/* Internal helpers, used by the other runtime headers. */
#define __DPUSIM_CONCAT_(a, b) a##b
#define __DPUSIM_CONCAT(a, b) __DPUSIM_CONCAT_(a, b)
#define __DPUSIM_CONCAT3_(a, b, c) a##b##c
#define __DPUSIM_CONCAT3(a, b, c) __DPUSIM_CONCAT3_(a, b, c)
#define __DPUSIM_STR_(x) #x
#define __DPUSIM_STR(x) __DPUSIM_STR_(x)

/* The SDK's names: both expand their arguments first. */
#undef __CONCAT
#define __CONCAT(x, y) __DPUSIM_CONCAT(x, y)
#undef __STR
#define __STR(x) __DPUSIM_STR(x)

/* __REPEAT_<n>(m) expands to m(0) m(1) ... m(n-1); __FOR_EACH_THREAD(m) repeats over the NR_TASKLETS tasklets. */
#define __REPEAT_0(m)
#define __REPEAT_1(m) __REPEAT_0(m) m(0)
#define __REPEAT_2(m) __REPEAT_1(m) m(1)
#define __REPEAT_3(m) __REPEAT_2(m) m(2)
#define __REPEAT_4(m) __REPEAT_3(m) m(3)
#define __REPEAT_5(m) __REPEAT_4(m) m(4)
#define __REPEAT_6(m) __REPEAT_5(m) m(5)
#define __REPEAT_7(m) __REPEAT_6(m) m(6)
#define __REPEAT_8(m) __REPEAT_7(m) m(7)
#define __REPEAT_9(m) __REPEAT_8(m) m(8)
#define __REPEAT_10(m) __REPEAT_9(m) m(9)
#define __REPEAT_11(m) __REPEAT_10(m) m(10)
#define __REPEAT_12(m) __REPEAT_11(m) m(11)
#define __REPEAT_13(m) __REPEAT_12(m) m(12)
#define __REPEAT_14(m) __REPEAT_13(m) m(13)
#define __REPEAT_15(m) __REPEAT_14(m) m(14)
#define __REPEAT_16(m) __REPEAT_15(m) m(15)
#define __REPEAT_17(m) __REPEAT_16(m) m(16)
#define __REPEAT_18(m) __REPEAT_17(m) m(17)
#define __REPEAT_19(m) __REPEAT_18(m) m(18)
#define __REPEAT_20(m) __REPEAT_19(m) m(19)
#define __REPEAT_21(m) __REPEAT_20(m) m(20)
#define __REPEAT_22(m) __REPEAT_21(m) m(21)
#define __REPEAT_23(m) __REPEAT_22(m) m(22)
#define __REPEAT_24(m) __REPEAT_23(m) m(23)

#define __FOR_EACH_THREAD(m) __DPUSIM_CONCAT(__REPEAT_, NR_TASKLETS)(m)

#endif /* DPUSIM_MACRO_UTILS_H */
