/*
 * dpu_macro_utils.h: preprocessor helpers used by the host API macros (upmem-sim's libdpu-compatible headers).
 *
 * These headers declare the UPMEM SDK 2025.1 host API with the SDK's names, values and C layouts, written from
 * the SDK's documented interface (no SDK code). Unchanged UPMEM host programs compile against them and
 * link with upmem-sim's library.
 */
#ifndef UPMEM_SIM_DPU_MACRO_UTILS_H
#define UPMEM_SIM_DPU_MACRO_UTILS_H

/* Pastes two tokens after macro-expanding both. */
#define _CONCAT_(x, y) x##y
#define _CONCAT(x, y) _CONCAT_(x, y)

/* Turns the macro-expanded argument into a string literal. */
#define _STR_(x) #x
#define _STR(x) _STR_(x)

/*
 * Argument-count dispatch of the FOREACH macros (DPU_FOREACH, DPU_RANK_FOREACH, STRUCT_DPU_FOREACH): picks the
 * 6th argument, so with the list (args..., WRONG, WRONG, WRONG, I, X, WRONG) one argument selects the X variant
 * and two the I variant. The variants are named in full (rather than by pasting a suffix) so that a macro such
 * as complex.h's `I` cannot break them.
 */
#define _DPU_FOREACH_VARIANT(_1, _2, _3, _4, _5, variant, ...) variant

#endif /* UPMEM_SIM_DPU_MACRO_UTILS_H */
