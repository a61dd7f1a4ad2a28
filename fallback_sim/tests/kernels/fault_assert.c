/*
 * fault_assert.c: assert() raises runtime fault 3 (Assert), and <assert.h> honours NDEBUG each time it is
 * included. Every tasklet checks `value == EXPECTED_VALUE`, first with NDEBUG defined (no effect), then live.
 *
 * Host input:  value. 42 -> no fault, passed[t] = 1 for every tasklet.
 *              anything else -> DPUSIM_FAULT_ASSERT from tasklet 0 (the first to run), value = the line of
 *              the live assert, message containing "value == EXPECTED_VALUE", "fault_assert.c", that line and
 *              "main" (format "<file>:<line>: <function>: Assertion `<expression>' failed.").
 * Any NR_TASKLETS.
 */
#include <stdint.h>

#define NDEBUG
#include <assert.h>

static void disabled_check(uint32_t checked)
{
    assert(checked == 0 && "never evaluated: NDEBUG is defined here");
    (void)checked;
}

#undef NDEBUG
#include <assert.h>

#include <defs.h>

#define EXPECTED_VALUE 42

__host uint32_t value;
__host uint32_t passed[NR_TASKLETS];

int main(void)
{
    passed[me()] = 0;
    disabled_check(value);
    assert(value == EXPECTED_VALUE);
    passed[me()] = 1;
    return 0;
}
