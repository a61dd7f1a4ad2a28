/*
 * handshake.c: the handshake routines' WRAM state. As in the SDK 2025.1's compiled runtime (handshake.c.obj:
 * .data.__handshake_array), one byte per hardware thread, 0xFF (nobody waits) when the program is loaded.
 */
#include <stdint.h>

#include <dpusim/abi.h>

#include <handshake.h>

uint8_t __handshake_array[DPUSIM_MAX_TASKLETS] = {[0 ... DPUSIM_MAX_TASKLETS - 1] = 0xFF};
