/*
 * sdk_sync_refused.c: pools and virtual mutexes that the SDK 2025.1's headers refuse to compile (static asserts of
 * syslib/mutex_pool.h and syslib/vmutex.h), by the define CASE:
 *
 *  CASE 1: MUTEX_POOL_INIT with 3 mutexes (not a power of two)
 *  CASE 2: VMUTEX_INIT with 2 hardware mutexes over 12 virtual ones (not a multiple of 8)
 *  CASE 3: VMUTEX_INIT with 3 hardware mutexes over 16 virtual ones (not a power of two)
 *  otherwise: MUTEX_POOL_INIT with 4 and VMUTEX_INIT with 16 over 2, which compile
 */
#include <stdint.h>

#include <mutex_pool.h>
#include <vmutex.h>

#if CASE == 1
MUTEX_POOL_INIT(pool, 3);
#elif CASE == 2
VMUTEX_INIT(vmutexes, 12, 2);
#elif CASE == 3
VMUTEX_INIT(vmutexes, 16, 3);
#else
MUTEX_POOL_INIT(pool, 4);
VMUTEX_INIT(vmutexes, 16, 2);
#endif

int main(void)
{
    return 0;
}
