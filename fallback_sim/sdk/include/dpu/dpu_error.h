/*
 * dpu_error.h: status codes of the host API (upmem-sim's libdpu-compatible headers, SDK 2025.1 values).
 */
#ifndef UPMEM_SIM_DPU_ERROR_H
#define UPMEM_SIM_DPU_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * An error from an asynchronous job comes back from dpu_sync (or a later call) with DPU_ERR_ASYNC_JOBS OR-ed onto
 * it; the job's type is stored from this bit position upwards.
 */
#define DPU_ERROR_ASYNC_JOB_TYPE_SHIFT 16

/*
 * Status returned by the host API: a signed, int-sized enum, as in the SDK, whose DPU_ERR_ASYNC_JOBS is
 * (int)(1U << 31), i.e. INT_MIN. The values are the SDK's.
 */
typedef enum _dpu_error_t {
    DPU_OK = 0,
    DPU_ERR_INTERNAL = 1,
    DPU_ERR_SYSTEM = 2,
    DPU_ERR_DRIVER = 3,
    DPU_ERR_ALLOCATION = 4,
    DPU_ERR_INVALID_DPU_SET = 5,
    DPU_ERR_INVALID_THREAD_ID = 6,
    DPU_ERR_INVALID_NOTIFY_ID = 7,
    DPU_ERR_INVALID_WRAM_ACCESS = 8,
    DPU_ERR_INVALID_IRAM_ACCESS = 9,
    DPU_ERR_INVALID_MRAM_ACCESS = 10,
    DPU_ERR_INVALID_SYMBOL_ACCESS = 11,
    DPU_ERR_MRAM_BUSY = 12,
    DPU_ERR_TRANSFER_ALREADY_SET = 13,
    DPU_ERR_INVALID_PARALLEL_MEMORY_TRANSFER = 14,
    DPU_ERR_WRAM_FIFO_FULL = 15,
    DPU_ERR_NO_PROGRAM_LOADED = 16,
    DPU_ERR_DIFFERENT_DPU_PROGRAMS = 17,
    DPU_ERR_CORRUPTED_MEMORY = 18,
    DPU_ERR_DPU_DISABLED = 19,
    DPU_ERR_DPU_ALREADY_RUNNING = 20,
    DPU_ERR_INVALID_MEMORY_TRANSFER = 21,
    DPU_ERR_INVALID_LAUNCH_POLICY = 22,
    DPU_ERR_DPU_FAULT = 23,
    DPU_ERR_ELF_INVALID_FILE = 24,
    DPU_ERR_ELF_NO_SUCH_FILE = 25,
    DPU_ERR_ELF_NO_SUCH_SECTION = 26,
    DPU_ERR_TIMEOUT = 27,
    DPU_ERR_INVALID_PROFILE = 28,
    DPU_ERR_UNKNOWN_SYMBOL = 29,
    DPU_ERR_LOG_FORMAT = 30,
    DPU_ERR_LOG_CONTEXT_MISSING = 31,
    DPU_ERR_LOG_BUFFER_TOO_SMALL = 32,
    DPU_ERR_VPD_INVALID_FILE = 33,
    DPU_ERR_VPD_NO_REPAIR = 34,
    DPU_ERR_NO_THREAD_PER_RANK = 35,
    DPU_ERR_INVALID_BUFFER_SIZE = 36,
    DPU_ERR_NONBLOCKING_SYNC_CALLBACK = 37,
    DPU_ERR_TOO_MANY_TASKLETS = 38,
    DPU_ERR_SG_TOO_MANY_BLOCKS = 39,
    DPU_ERR_SG_LENGTH_MISMATCH = 40,
    DPU_ERR_SG_NOT_ACTIVATED = 41,
    DPU_ERR_SG_NOT_MRAM_SYMBOL = 42,
    /* A flag OR-ed onto another code: the error came from an asynchronous job. */
    DPU_ERR_ASYNC_JOBS = (int)(1U << 31),
} dpu_error_t;

/*
 * Describes `status` ("invalid dpu set", ..., "unknown error" for a value that is no code) in a string
 * allocated with malloc: the caller frees it.
 */
char *dpu_error_to_string(dpu_error_t status);

#ifdef __cplusplus
}
#endif

#endif /* UPMEM_SIM_DPU_ERROR_H */
