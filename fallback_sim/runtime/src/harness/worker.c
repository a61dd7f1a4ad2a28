/*
 * The worker process: the entry point of every simulated DPU binary.
 *
 * The host starts workers from the binary with the shared files on fixed descriptors (abi.h). A worker waits
 * for RUN on its channel, then claims DPU ids from the job list in the control file until it is exhausted and
 * answers DONE. To run DPU d it maps d's slices of the WRAM and MRAM files over the fixed windows (no copy),
 * runs the tasklets and writes the outcome into d's record.
 *
 * A fault the runtime detects (DMA misuse, deadlock, assert, ...) ends the DPU's run and the worker carries on.
 * A signal (SIGSEGV, SIGFPE, ...) or the hang timer records the reason in the DPU's record and ends the worker,
 * since its memory can no longer be trusted; the host replaces it. When the host goes away (or drops the
 * worker), a watchdog thread sees its end of the channel close and ends the worker, even in the middle of a
 * kernel that never returns. (PR_SET_PDEATHSIG would not do: it follows the host *thread* that started the
 * worker, and host programs start workers from any thread.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

#include "internal.h"

/* The kernel's STDOUT_BUFFER_INIT, or the runtime's weak 1 MiB default. */
extern const uint32_t __dpusim_stdout_capacity;

struct dpusim_control *control;
static char *log_base;
static uint32_t *job_list;
static char *records;
static struct dpusim_worker_slot *slot;
static uint32_t mapped_dpu = DPUSIM_NO_DPU;
static char signal_stack[64 * 1024];

static void die(const char *what) {
    fprintf(stderr, "dpusim worker: %s: %s\n", what, strerror(errno));
    exit(DPUSIM_EXIT_FAULT);
}

static struct dpusim_dpu_record *record_of(uint32_t dpu) {
    return (struct dpusim_dpu_record *)(records + (size_t)dpu * control->record_size);
}

static void map_control(void) {
    struct dpusim_control *header =
        mmap(NULL, sizeof *header, PROT_READ, MAP_SHARED, DPUSIM_FD_CONTROL, 0);
    if (header == MAP_FAILED)
        die("mapping the control file");
    if (header->magic != DPUSIM_CONTROL_MAGIC || header->abi_version != DPUSIM_ABI_VERSION ||
        header->record_size != sizeof(struct dpusim_dpu_record)) {
        fprintf(stderr, "dpusim worker: the host and this DPU binary disagree on the simulator ABI "
                        "(rebuild the DPU program with this version of upmem-sim)\n");
        exit(DPUSIM_EXIT_FAULT);
    }
    size_t size = header->records_offset + (size_t)header->nr_dpus * header->record_size;
    munmap(header, sizeof *header);
    control = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, DPUSIM_FD_CONTROL, 0);
    if (control == MAP_FAILED)
        die("mapping the control file");
    job_list = (uint32_t *)((char *)control + control->job_list_offset);
    records = (char *)control + control->records_offset;
    log_base = mmap(NULL, (size_t)control->nr_dpus * control->log_size, PROT_READ | PROT_WRITE, MAP_SHARED,
                    DPUSIM_FD_LOG, 0);
    if (log_base == MAP_FAILED)
        die("mapping the log file");
    overlay_map_records();
}

/* PROT_NONE over both windows, so that accesses past a DPU's memories fault instead of hitting something. */
static void reserve_windows(void) {
    if (mmap((void *)(uintptr_t)DPUSIM_WRAM_BASE, DPUSIM_WRAM_WINDOW, PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED)
        die("reserving the WRAM window");
    if (mmap((void *)(uintptr_t)DPUSIM_MRAM_BASE, DPUSIM_MRAM_WINDOW, PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED)
        die("reserving the MRAM window");
}

static void map_dpu(uint32_t dpu) {
    if (dpu == mapped_dpu && !overlay_needs_mapping(dpu))
        return;
    if (mmap((void *)(uintptr_t)DPUSIM_WRAM_BASE, control->wram_size, PROT_READ | PROT_WRITE,
             MAP_SHARED | MAP_FIXED, DPUSIM_FD_WRAM, (off_t)dpu * (off_t)control->wram_size) == MAP_FAILED)
        die("mapping a DPU's WRAM");
    overlay_map_mram(dpu);
    mapped_dpu = dpu;
}

/* ---- Signals: the reason goes into the DPU's record, then the worker ends ------------------------------- */

static bool in_range(uintptr_t address, uintptr_t low, uintptr_t size) { return address - low < size; }

static uint32_t classify_memory_fault(uintptr_t address, char *message, size_t size) {
    const uintptr_t per_tasklet = DPUSIM_STACK_GUARD + DPUSIM_NATIVE_STACK_SIZE;
    for (uint32_t t = 0; t < DPUSIM_MAX_TASKLETS; t++)
        if (in_range(address, DPUSIM_STACK_BASE + t * per_tasklet, DPUSIM_STACK_GUARD)) {
            snprintf(message, size, "tasklet %u overflowed its stack (%u KiB native)", t,
                     DPUSIM_NATIVE_STACK_SIZE >> 10);
            return DPUSIM_FAULT_STACK_OVERFLOW;
        }
    if (in_range(address, DPUSIM_WRAM_BASE, DPUSIM_WRAM_WINDOW))
        snprintf(message, size, "memory fault: access to WRAM address %#lx, past the %lu bytes of WRAM",
                 (unsigned long)(address - DPUSIM_WRAM_BASE), (unsigned long)control->wram_size);
    else if (in_range(address, DPUSIM_MRAM_BASE, DPUSIM_MRAM_WINDOW))
        snprintf(message, size, "memory fault: access to MRAM address %#lx, past the %lu bytes of MRAM",
                 (unsigned long)address, (unsigned long)control->mram_size);
    else if (address < 4096)
        snprintf(message, size, "memory fault: null pointer access (address %#lx)", (unsigned long)address);
    else
        snprintf(message, size, "memory fault: access to %#lx, outside the DPU's memories", (unsigned long)address);
    return DPUSIM_FAULT_MEMORY;
}

static uint64_t program_counter(void *context) {
    ucontext_t *state = context;
#if defined(__x86_64__)
    return (uint64_t)state->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return state->uc_mcontext.pc;
#endif
}

static void on_signal(int signal, siginfo_t *info, void *context) {
    if (slot->current_dpu == DPUSIM_NO_DPU) {
        if (signal == SIGALRM)
            return; /* the hang timer fired between two DPUs */
        _exit(DPUSIM_EXIT_FAULT);
    }
    /* A kernel's write to a broadcast page it shares: the page becomes its own and the write is retried. */
    if (signal == SIGSEGV && overlay_take_page(slot->current_dpu, (uintptr_t)info->si_addr))
        return;
    char message[DPUSIM_MESSAGE_SIZE];
    uint32_t kind = DPUSIM_FAULT_SIGNAL;
    uintptr_t address = (uintptr_t)info->si_addr;
    switch (signal) {
    case SIGSEGV:
    case SIGBUS:
        kind = classify_memory_fault(address, message, sizeof message);
        break;
    case SIGFPE:
        if (info->si_code == FPE_INTDIV) {
            kind = DPUSIM_FAULT_DIVISION_BY_ZERO;
            snprintf(message, sizeof message, "integer division by zero");
        } else {
            snprintf(message, sizeof message, "arithmetic exception (SIGFPE code %d)", info->si_code);
        }
        break;
    case SIGALRM:
        kind = DPUSIM_FAULT_TIMEOUT;
        address = 0;
        snprintf(message, sizeof message, "still running after the %u ms hang limit", control->hang_limit_ms);
        break;
    default:
        snprintf(message, sizeof message, "%s", strsignal(signal));
        break;
    }
    fault_record(kind, address, 0, program_counter(context), signal, message);
    __atomic_store_n(&run.record->state, DPUSIM_DPU_FAULT, __ATOMIC_RELEASE);
    _exit(DPUSIM_EXIT_FAULT);
}

static void install_signal_handlers(void) {
    stack_t alternate = {.ss_sp = signal_stack, .ss_size = sizeof signal_stack};
    if (sigaltstack(&alternate, NULL) != 0)
        die("sigaltstack");
    struct sigaction action = {.sa_sigaction = on_signal, .sa_flags = SA_SIGINFO | SA_ONSTACK};
    sigfillset(&action.sa_mask);
    const int signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS, SIGALRM};
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++)
        if (sigaction(signals[i], &action, NULL) != 0)
            die("sigaction");
}

static void set_hang_timer(uint32_t milliseconds) {
    struct itimerval timer = {.it_value = {.tv_sec = milliseconds / 1000, .tv_usec = (milliseconds % 1000) * 1000}};
    setitimer(ITIMER_REAL, &timer, NULL);
}

/* ---- Running DPUs ------------------------------------------------------------------------------------------ */

static void run_dpu(uint32_t dpu) {
    struct dpusim_dpu_record *record = record_of(dpu);
    slot->current_dpu = dpu;
    run.record = record;
    memset(&record->fault, 0, sizeof record->fault);
    memset(record->tasklets, 0, sizeof record->tasklets);
    record->nr_tasklets = __dpusim_kernel_info.nr_tasklets;
    record->log_length = 0;
    __atomic_store_n(&record->state, DPUSIM_DPU_RUNNING, __ATOMIC_RELEASE);
    map_dpu(dpu);
    /* A constant of the kernel object, so it lives in WRAM: read it (volatile, so the compiler cannot hoist
     * the load above the mapping) once this DPU's WRAM is mapped. */
    uint64_t capacity = *(const volatile uint32_t *)&__dpusim_stdout_capacity;
    record->log_capacity = capacity < control->log_size ? capacity : control->log_size;

    if (control->hang_limit_ms != 0)
        set_hang_timer(control->hang_limit_ms);
    tasklets_run(dpu, record, log_base + (size_t)dpu * control->log_size, record->log_capacity);
    if (control->hang_limit_ms != 0)
        set_hang_timer(0);

    record->launches++;
    slot->current_dpu = DPUSIM_NO_DPU;
    slot->dpus_run++;
    __atomic_store_n(&record->state, run.faulted ? DPUSIM_DPU_FAULT : DPUSIM_DPU_DONE, __ATOMIC_RELEASE);
}

static void run_job(void) {
    for (;;) {
        uint32_t next = __atomic_fetch_add(&control->job_next, 1, __ATOMIC_ACQ_REL);
        if (next >= control->job_count)
            return;
        run_dpu(job_list[next]);
    }
}

/* Ends the worker when the host closes its end of the channel. */
static void *watch_host(void *unused) {
    (void)unused;
    struct pollfd channel = {.fd = DPUSIM_FD_CHANNEL, .events = POLLRDHUP};
    while (poll(&channel, 1, -1) < 0 && errno == EINTR) {
    }
    _exit(0);
}

static void start_watchdog(void) {
    sigset_t all, previous;
    sigfillset(&all);
    /* The watchdog blocks every signal, so that the hang timer's SIGALRM reaches the thread running DPUs. */
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    pthread_t watchdog;
    int error = pthread_create(&watchdog, NULL, watch_host, NULL);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    if (error != 0) {
        errno = error;
        die("starting the watchdog thread");
    }
}

static void reply(char byte) {
    if (write(DPUSIM_FD_CHANNEL, &byte, 1) != 1)
        exit(0); /* the host is gone */
}

int main(int argc, char **argv) {
    if (argc != 3 || strcmp(argv[1], DPUSIM_WORKER_FLAG) != 0) {
        fprintf(stderr,
                "%s is a DPU program built for the upmem-sim simulator: load it from a host program "
                "(dpu_load, or upmem_sim::Program) instead of running it.\n",
                argv[0]);
        return 2;
    }
    if (__dpusim_kernel_info.magic != DPUSIM_KERNEL_MAGIC || __dpusim_kernel_info.abi_version != DPUSIM_ABI_VERSION) {
        fprintf(stderr, "dpusim worker: the kernel was built against another runtime version\n");
        return DPUSIM_EXIT_FAULT;
    }
    map_control();
    uint32_t index = (uint32_t)strtoul(argv[2], NULL, 10);
    if (index >= DPUSIM_MAX_WORKERS) {
        fprintf(stderr, "dpusim worker: worker index %u out of range\n", index);
        return DPUSIM_EXIT_FAULT;
    }
    slot = (struct dpusim_worker_slot *)((char *)control + control->workers_offset) + index;
    slot->pid = getpid();
    slot->current_dpu = DPUSIM_NO_DPU;
    reserve_windows();
    tasklets_allocate_stacks();
    clock_init();
    install_signal_handlers();
    start_watchdog();
    reply(DPUSIM_REPLY_READY);

    char command;
    while (read(DPUSIM_FD_CHANNEL, &command, 1) == 1) {
        if (command == DPUSIM_CMD_RUN) {
            run_job();
            reply(DPUSIM_REPLY_DONE);
        }
    }
    return 0;
}
