/*
 * assert.h: assert() raises runtime fault 3 (Assert) with the expression, file, line and function in the fault
 * message. Like the standard header it honours NDEBUG and may be included again to switch it.
 */
#include <dpusim/abi.h>

#undef assert
#ifdef NDEBUG
#define assert(expression) ((void)0)
#else
#include <dpufault.h>
#include <macro_utils.h>

#define assert(expression)                                                                                            \
    ((expression) ? (void)0                                                                                           \
                  : __dpusim_fault(DPUSIM_FAULT_ASSERT, 0, __LINE__, "%s:%u: %s: Assertion `%s' failed.", __FILE__,  \
                                   (unsigned)__LINE__, __func__, #expression))
#endif

#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#undef static_assert
#define static_assert _Static_assert
#endif
