/*
 * dpu.hpp (also included as <dpu>): the UPMEM SDK's C++ host API, namespace dpu, over upmem-sim's
 * libdpu-compatible C library. Programs written against the SDK's header build and run unchanged: the same
 * classes, overloads, defaults and exceptions (DpuError, whose what() is dpu_error_to_string's text).
 *
 * Where the SDK's header has undefined behaviour, this one is defined:
 *   - a per-DPU copy checks that there is a host buffer for each DPU of the set and that each holds the bytes
 *     asked for, and a broadcast that its buffer does (DpuError "invalid memory transfer: ..." instead of a read
 *     or write past a vector's end);
 *   - DpuError can be copied (the SDK's frees its message twice); DpuSet can be moved and not copied (a copy of
 *     the SDK's frees the DPUs twice);
 *   - the DpuSet given to a DpuSetAsync::call callback owns its views of ranks and DPUs (the SDK's are leaked),
 *     and an exception a callback throws comes out of call() (out of the SDK's it would cross libdpu's C code);
 *   - DpuSet::log introduces each DPU's log with its dpu_get_id (the SDK's header line reads a missing argument).
 *
 * Needs C++11.
 */
#ifndef UPMEM_SIM_DPU_HPP
#define UPMEM_SIM_DPU_HPP

#include <atomic>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

#include <dpu.h>
#include <dpu_log_internals.h>
#include <dpu_management.h>

/** The UPMEM host API for C++: allocate a DpuSet, load a program, copy data, execute, read logs. */
namespace dpu {

/** As a number of DPUs or ranks: every one available (DpuSet::allocate, DpuSet::allocateRanks). */
const unsigned ALLOCATE_ALL = DPU_ALLOCATE_ALL;

class DpuSet;
class DpuSetAsync;

namespace detail {

/** Calls the block function `f` of a scatter/gather transfer (the `args` of its get_block_t). */
template <class F>
bool
callBlockFunction(struct sg_block_info *out, uint32_t dpuIndex, uint32_t blockIndex, void *args)
{
    return (*static_cast<F *>(args))(out, dpuIndex, blockIndex);
}

} // namespace detail

/** What the methods of this API throw: a libdpu error, described by what(). */
class DpuError : public std::exception {
    friend class DpuProgram;
    friend class DpuSetOps;
    friend class DpuSet;
    friend class DpuSetAsync;

public:
    /** The description of the error: dpu_error_to_string's text, and what was wrong when the API found it. */
    const char *
    what() const noexcept override
    {
        return message->c_str();
    }

private:
    /* Shared, so that copying the exception cannot fail. */
    std::shared_ptr<const std::string> message;

    explicit DpuError(dpu_error_t error, const std::string &detail = std::string())
        : message(std::make_shared<const std::string>(describe(error, detail)))
    {
    }

    static std::string
    describe(dpu_error_t error, const std::string &detail)
    {
        char *text = dpu_error_to_string(error);
        std::string description = text != nullptr ? text : "DPU error " + std::to_string(error);
        std::free(text);
        return detail.empty() ? description : description + ": " + detail;
    }

    static void
    throwOnErr(dpu_error_t error)
    {
        if (error != DPU_OK) {
            throw DpuError(error);
        }
    }
};

/** A symbol of a DPU program: an address and a size, from DpuProgram::get or given explicitly. */
class DpuSymbol {
    friend class DpuProgram;
    friend class DpuSetOps;

public:
    /** The symbol of `Size` bytes at DPU address `Address`. */
    DpuSymbol(unsigned Address, unsigned Size)
    {
        cSymbol.address = Address;
        cSymbol.size = Size;
    }

private:
    DpuSymbol()
        : cSymbol()
    {
    }

    struct dpu_symbol_t cSymbol;
};

/** A program loaded by DpuSet::load: its symbols can be looked up once and used for many copies. */
class DpuProgram {
    friend class DpuSet;

public:
    /**
     * The symbol named `SymbolName`.
     * @throws DpuError when the program has no such symbol
     */
    DpuSymbol
    get(const std::string &SymbolName)
    {
        DpuSymbol symbol;
        DpuError::throwOnErr(dpu_get_symbol(cProgram, SymbolName.c_str(), &symbol.cSymbol));
        return symbol;
    }

private:
    struct dpu_program_t *cProgram = nullptr;
};

/** A function DpuSetAsync::call calls with a rank (or the whole set) and the rank's index. */
using CallbackFn = std::function<void(DpuSet &, unsigned)>;

/**
 * The operations of a set that run synchronously on a DpuSet and are queued on a DpuSetAsync: copies to and from
 * DPU symbols (by name or as a DpuSymbol), broadcast or one host buffer per DPU, scatter/gather, and exec.
 * Every failure throws DpuError.
 */
class DpuSetOps {
    friend class DpuSet;
    friend class DpuSetAsync;

public:
    /* ---- The same host buffer to every DPU of the set (Size bytes, by default the whole vector) ---- */

    template <typename T>
    void
    copy(const std::string &DstSymbol, unsigned Offset, const std::vector<T> &SrcBuffer, unsigned Size)
    {
        broadcast(DstSymbol, Offset, SrcBuffer, Size);
    }

    template <typename T>
    void
    copy(const std::string &DstSymbol, unsigned Offset, const std::vector<T> &SrcBuffer)
    {
        broadcast(DstSymbol, Offset, SrcBuffer, bytesOf(SrcBuffer));
    }

    template <typename T>
    void
    copy(const std::string &DstSymbol, const std::vector<T> &SrcBuffer, unsigned Size)
    {
        broadcast(DstSymbol, 0, SrcBuffer, Size);
    }

    template <typename T>
    void
    copy(const std::string &DstSymbol, const std::vector<T> &SrcBuffer)
    {
        broadcast(DstSymbol, 0, SrcBuffer, bytesOf(SrcBuffer));
    }

    template <typename T>
    void
    copy(DpuSymbol &DstSymbol, unsigned Offset, const std::vector<T> &SrcBuffer, unsigned Size)
    {
        broadcast(DstSymbol, Offset, SrcBuffer, Size);
    }

    template <typename T>
    void
    copy(DpuSymbol &DstSymbol, unsigned Offset, const std::vector<T> &SrcBuffer)
    {
        broadcast(DstSymbol, Offset, SrcBuffer, bytesOf(SrcBuffer));
    }

    template <typename T>
    void
    copy(DpuSymbol &DstSymbol, const std::vector<T> &SrcBuffer, unsigned Size)
    {
        broadcast(DstSymbol, 0, SrcBuffer, Size);
    }

    template <typename T>
    void
    copy(DpuSymbol &DstSymbol, const std::vector<T> &SrcBuffer)
    {
        broadcast(DstSymbol, 0, SrcBuffer, bytesOf(SrcBuffer));
    }

    /* ---- SrcBuffers[i] to the i-th DPU of the set (Size bytes, by default the vectors' common size) ---- */

    template <typename T>
    void
    copy(const std::string &DstSymbol, unsigned Offset, const std::vector<std::vector<T>> &SrcBuffers, unsigned Size)
    {
        toEachDpu(DstSymbol, Offset, SrcBuffers, Size);
    }

    template <typename T>
    void
    copy(const std::string &DstSymbol, unsigned Offset, const std::vector<std::vector<T>> &SrcBuffers)
    {
        toEachDpu(DstSymbol, Offset, SrcBuffers, commonBytes(SrcBuffers));
    }

    template <typename T>
    void
    copy(const std::string &DstSymbol, const std::vector<std::vector<T>> &SrcBuffers, unsigned Size)
    {
        toEachDpu(DstSymbol, 0, SrcBuffers, Size);
    }

    template <typename T>
    void
    copy(const std::string &DstSymbol, const std::vector<std::vector<T>> &SrcBuffers)
    {
        toEachDpu(DstSymbol, 0, SrcBuffers, commonBytes(SrcBuffers));
    }

    template <typename T>
    void
    copy(DpuSymbol &DstSymbol, unsigned Offset, const std::vector<std::vector<T>> &SrcBuffers, unsigned Size)
    {
        toEachDpu(DstSymbol, Offset, SrcBuffers, Size);
    }

    template <typename T>
    void
    copy(DpuSymbol &DstSymbol, unsigned Offset, const std::vector<std::vector<T>> &SrcBuffers)
    {
        toEachDpu(DstSymbol, Offset, SrcBuffers, commonBytes(SrcBuffers));
    }

    template <typename T>
    void
    copy(DpuSymbol &DstSymbol, const std::vector<std::vector<T>> &SrcBuffers, unsigned Size)
    {
        toEachDpu(DstSymbol, 0, SrcBuffers, Size);
    }

    template <typename T>
    void
    copy(DpuSymbol &DstSymbol, const std::vector<std::vector<T>> &SrcBuffers)
    {
        toEachDpu(DstSymbol, 0, SrcBuffers, commonBytes(SrcBuffers));
    }

    /* ---- From the i-th DPU of the set into DstBuffers[i] (Size bytes, by default the vectors' common size) ---- */

    template <typename T>
    void
    copy(std::vector<std::vector<T>> &DstBuffers, unsigned Size, const std::string &SrcSymbol, unsigned Offset)
    {
        fromEachDpu(DstBuffers, Size, SrcSymbol, Offset);
    }

    template <typename T>
    void
    copy(std::vector<std::vector<T>> &DstBuffers, unsigned Size, const std::string &SrcSymbol)
    {
        fromEachDpu(DstBuffers, Size, SrcSymbol, 0);
    }

    template <typename T>
    void
    copy(std::vector<std::vector<T>> &DstBuffers, const std::string &SrcSymbol, unsigned Offset)
    {
        fromEachDpu(DstBuffers, commonBytes(DstBuffers), SrcSymbol, Offset);
    }

    template <typename T>
    void
    copy(std::vector<std::vector<T>> &DstBuffers, const std::string &SrcSymbol)
    {
        fromEachDpu(DstBuffers, commonBytes(DstBuffers), SrcSymbol, 0);
    }

    template <typename T>
    void
    copy(std::vector<std::vector<T>> &DstBuffers, unsigned Size, DpuSymbol &SrcSymbol, unsigned Offset)
    {
        fromEachDpu(DstBuffers, Size, SrcSymbol, Offset);
    }

    template <typename T>
    void
    copy(std::vector<std::vector<T>> &DstBuffers, unsigned Size, DpuSymbol &SrcSymbol)
    {
        fromEachDpu(DstBuffers, Size, SrcSymbol, 0);
    }

    template <typename T>
    void
    copy(std::vector<std::vector<T>> &DstBuffers, DpuSymbol &SrcSymbol, unsigned Offset)
    {
        fromEachDpu(DstBuffers, commonBytes(DstBuffers), SrcSymbol, Offset);
    }

    template <typename T>
    void
    copy(std::vector<std::vector<T>> &DstBuffers, DpuSymbol &SrcSymbol)
    {
        fromEachDpu(DstBuffers, commonBytes(DstBuffers), SrcSymbol, 0);
    }

    /*
     * ---- Scatter/gather (dpu_push_sg_xfer: MRAM symbols, profile sgXferEnable=true): the blocks of each DPU come
     * from `get_block_info`, or from a function object `f(struct sg_block_info *, uint32_t dpu_index,
     * uint32_t block_index) -> bool`; `length_check` false adds DPU_SG_XFER_DISABLE_LENGTH_CHECK. ----
     */

    void
    copyScatterGather(const std::string &DstSymbol,
        unsigned Offset,
        get_block_t &get_block_info,
        unsigned Size,
        bool length_check = true)
    {
        DpuError::throwOnErr(dpu_push_sg_xfer(
            cSet, DPU_XFER_TO_DPU, DstSymbol.c_str(), Offset, Size, &get_block_info, scatterGatherFlags(length_check)));
    }

    void
    copyScatterGather(
        const std::string &DstSymbol, get_block_t &get_block_info, unsigned Size, bool length_check = true)
    {
        copyScatterGather(DstSymbol, 0, get_block_info, Size, length_check);
    }

    template <class F>
    void
    copyScatterGather(const std::string &DstSymbol, unsigned Offset, F f, unsigned Size, bool length_check = true)
    {
        get_block_t blocks = blocksOf(f);
        copyScatterGather(DstSymbol, Offset, blocks, Size, length_check);
    }

    template <class F>
    void
    copyScatterGather(const std::string &DstSymbol, F f, unsigned Size, bool length_check = true)
    {
        copyScatterGather(DstSymbol, 0, f, Size, length_check);
    }

    void
    copyScatterGather(DpuSymbol &DstSymbol,
        unsigned Offset,
        get_block_t &get_block_info,
        unsigned Size,
        bool length_check = true)
    {
        DpuError::throwOnErr(dpu_push_sg_xfer_symbol(cSet, DPU_XFER_TO_DPU, DstSymbol.cSymbol, Offset, Size,
            &get_block_info, scatterGatherFlags(length_check)));
    }

    void
    copyScatterGather(DpuSymbol &DstSymbol, get_block_t &get_block_info, unsigned Size, bool length_check = true)
    {
        copyScatterGather(DstSymbol, 0, get_block_info, Size, length_check);
    }

    template <class F>
    void
    copyScatterGather(DpuSymbol &DstSymbol, unsigned Offset, F f, unsigned Size, bool length_check = true)
    {
        get_block_t blocks = blocksOf(f);
        copyScatterGather(DstSymbol, Offset, blocks, Size, length_check);
    }

    template <class F>
    void
    copyScatterGather(DpuSymbol &DstSymbol, F f, unsigned Size, bool length_check = true)
    {
        copyScatterGather(DstSymbol, 0, f, Size, length_check);
    }

    void
    copyScatterGather(get_block_t &get_block_info,
        unsigned Size,
        const std::string &SrcSymbol,
        unsigned Offset,
        bool length_check = true)
    {
        DpuError::throwOnErr(dpu_push_sg_xfer(cSet, DPU_XFER_FROM_DPU, SrcSymbol.c_str(), Offset, Size,
            &get_block_info, scatterGatherFlags(length_check)));
    }

    void
    copyScatterGather(
        get_block_t &get_block_info, unsigned Size, const std::string &SrcSymbol, bool length_check = true)
    {
        copyScatterGather(get_block_info, Size, SrcSymbol, 0, length_check);
    }

    template <class F>
    void
    copyScatterGather(F f, unsigned Size, const std::string &SrcSymbol, unsigned Offset, bool length_check = true)
    {
        get_block_t blocks = blocksOf(f);
        copyScatterGather(blocks, Size, SrcSymbol, Offset, length_check);
    }

    template <class F>
    void
    copyScatterGather(F f, unsigned Size, const std::string &SrcSymbol, bool length_check = true)
    {
        copyScatterGather(f, Size, SrcSymbol, 0, length_check);
    }

    void
    copyScatterGather(get_block_t &get_block_info,
        unsigned Size,
        DpuSymbol &SrcSymbol,
        unsigned Offset,
        bool length_check = true)
    {
        DpuError::throwOnErr(dpu_push_sg_xfer_symbol(cSet, DPU_XFER_FROM_DPU, SrcSymbol.cSymbol, Offset, Size,
            &get_block_info, scatterGatherFlags(length_check)));
    }

    void
    copyScatterGather(get_block_t &get_block_info, unsigned Size, DpuSymbol &SrcSymbol, bool length_check = true)
    {
        copyScatterGather(get_block_info, Size, SrcSymbol, 0, length_check);
    }

    template <class F>
    void
    copyScatterGather(F f, unsigned Size, DpuSymbol &SrcSymbol, unsigned Offset, bool length_check = true)
    {
        get_block_t blocks = blocksOf(f);
        copyScatterGather(blocks, Size, SrcSymbol, Offset, length_check);
    }

    template <class F>
    void
    copyScatterGather(F f, unsigned Size, DpuSymbol &SrcSymbol, bool length_check = true)
    {
        copyScatterGather(f, Size, SrcSymbol, 0, length_check);
    }

    /**
     * Runs the loaded program on every DPU of the set (DpuSet::load first).
     * @throws DpuError when a DPU faults
     */
    void
    exec()
    {
        DpuError::throwOnErr(dpu_launch(cSet, async ? DPU_ASYNCHRONOUS : DPU_SYNCHRONOUS));
    }

private:
    struct dpu_set_t cSet;
    /* Queue the operations (DPU_XFER_ASYNC, DPU_ASYNCHRONOUS) instead of waiting for them. */
    bool async;

    DpuSetOps(const struct dpu_set_t &CSet, bool Async)
        : cSet(CSet)
        , async(Async)
    {
    }

    dpu_xfer_flags_t
    transferFlags() const
    {
        return async ? DPU_XFER_ASYNC : DPU_XFER_DEFAULT;
    }

    dpu_sg_xfer_flags_t
    scatterGatherFlags(bool lengthCheck) const
    {
        unsigned flags = async ? DPU_SG_XFER_ASYNC : DPU_SG_XFER_DEFAULT;
        if (!lengthCheck) {
            flags |= DPU_SG_XFER_DISABLE_LENGTH_CHECK;
        }
        return static_cast<dpu_sg_xfer_flags_t>(flags);
    }

    /* A function object's get_block_t; the object must outlive the transfer (the calls above block on it). */
    template <class F>
    static get_block_t
    blocksOf(F &f)
    {
        get_block_t blocks;
        blocks.f = detail::callBlockFunction<F>;
        blocks.args = &f;
        blocks.args_size = sizeof(f);
        return blocks;
    }

    /* The bytes of a host buffer, which a transfer size (unsigned, as the SDK's) must be able to hold. */
    template <typename T>
    static unsigned
    bytesOf(const std::vector<T> &buffer)
    {
        if (buffer.size() > UINT_MAX / sizeof(T)) {
            throw DpuError(DPU_ERR_INVALID_MEMORY_TRANSFER,
                std::to_string(buffer.size() * sizeof(T)) + " bytes in a host buffer, more than a transfer's "
                    + std::to_string(UINT_MAX));
        }
        return static_cast<unsigned>(buffer.size() * sizeof(T));
    }

    /* The size of every buffer, which must be the same for all. */
    template <typename T>
    static unsigned
    commonBytes(const std::vector<std::vector<T>> &buffers)
    {
        if (buffers.empty()) {
            throw DpuError(DPU_ERR_INVALID_MEMORY_TRANSFER, "no host buffer");
        }
        for (size_t index = 1; index < buffers.size(); index++) {
            if (buffers[index].size() != buffers[0].size()) {
                throw DpuError(DPU_ERR_INVALID_MEMORY_TRANSFER,
                    "host buffer " + std::to_string(index) + " holds " + std::to_string(buffers[index].size())
                        + " elements, buffer 0 " + std::to_string(buffers[0].size()));
            }
        }
        return bytesOf(buffers[0]);
    }

    template <typename T>
    static void
    checkHolds(const std::vector<T> &buffer, unsigned size, const std::string &which)
    {
        if (bytesOf(buffer) < size) {
            throw DpuError(DPU_ERR_INVALID_MEMORY_TRANSFER,
                which + " holds " + std::to_string(bytesOf(buffer)) + " bytes, fewer than the "
                    + std::to_string(size) + " to transfer");
        }
    }

    template <typename T>
    void
    broadcast(const std::string &symbol, unsigned offset, const std::vector<T> &source, unsigned size)
    {
        checkHolds(source, size, "the host buffer");
        DpuError::throwOnErr(dpu_broadcast_to(cSet, symbol.c_str(), offset, source.data(), size, transferFlags()));
    }

    template <typename T>
    void
    broadcast(DpuSymbol &symbol, unsigned offset, const std::vector<T> &source, unsigned size)
    {
        checkHolds(source, size, "the host buffer");
        DpuError::throwOnErr(
            dpu_broadcast_to_symbol(cSet, symbol.cSymbol, offset, source.data(), size, transferFlags()));
    }

    dpu_error_t
    push(dpu_xfer_t direction, const std::string &symbol, unsigned offset, unsigned size)
    {
        return dpu_push_xfer(cSet, direction, symbol.c_str(), offset, size, transferFlags());
    }

    dpu_error_t
    push(dpu_xfer_t direction, DpuSymbol &symbol, unsigned offset, unsigned size)
    {
        return dpu_push_xfer_symbol(cSet, direction, symbol.cSymbol, offset, size, transferFlags());
    }

    /* Prepares buffers[i] for the i-th DPU, once every buffer is known to hold `size` bytes. */
    template <typename Buffers>
    void
    prepareEachDpu(Buffers &buffers, unsigned size)
    {
        uint32_t nrDpus = 0;
        DpuError::throwOnErr(dpu_get_nr_dpus(cSet, &nrDpus));
        if (buffers.size() < nrDpus) {
            throw DpuError(DPU_ERR_INVALID_MEMORY_TRANSFER,
                std::to_string(buffers.size()) + " host buffers for the " + std::to_string(nrDpus)
                    + " DPUs of the set");
        }
        for (uint32_t index = 0; index < nrDpus; index++) {
            checkHolds(buffers[index], size, "host buffer " + std::to_string(index));
        }
        struct dpu_set_t dpu;
        uint32_t index;
        DPU_FOREACH (cSet, dpu, index) {
            /* dpu_prepare_xfer takes a void * for both directions; a transfer to the DPUs only reads it. */
            const void *buffer = buffers[index].data();
            DpuError::throwOnErr(dpu_prepare_xfer(dpu, const_cast<void *>(buffer)));
        }
    }

    template <typename Symbol, typename T>
    void
    toEachDpu(Symbol &symbol, unsigned offset, const std::vector<std::vector<T>> &sources, unsigned size)
    {
        prepareEachDpu(sources, size);
        DpuError::throwOnErr(push(DPU_XFER_TO_DPU, symbol, offset, size));
    }

    template <typename Symbol, typename T>
    void
    fromEachDpu(std::vector<std::vector<T>> &destinations, unsigned size, Symbol &symbol, unsigned offset)
    {
        prepareEachDpu(destinations, size);
        DpuError::throwOnErr(push(DPU_XFER_FROM_DPU, symbol, offset, size));
    }
};

/**
 * A set of DPUs whose operations are synchronous; freed (dpu_free) when the DpuSet that allocated it is
 * destroyed. Its ranks and DPUs are DpuSets too (ranks(), dpus()), which the allocated set owns.
 */
class DpuSet : public DpuSetOps {
    friend class DpuSetAsync;

public:
    DpuSet(const DpuSet &) = delete;
    DpuSet &operator=(const DpuSet &) = delete;

    /** Takes over `other`'s DPUs (and its views of them); `other` holds none afterwards. */
    DpuSet(DpuSet &&other) noexcept
        : DpuSetOps(other.cSet, false)
        , owner(other.owner)
        , dpuViews(std::move(other.dpuViews))
        , rankViews(std::move(other.rankViews))
        , views(std::move(other.views))
    {
        other.forget();
    }

    /** Frees this set's DPUs, if it allocated them, and takes over `other`'s. */
    DpuSet &
    operator=(DpuSet &&other) noexcept
    {
        if (this != &other) {
            release();
            cSet = other.cSet;
            owner = other.owner;
            dpuViews = std::move(other.dpuViews);
            rankViews = std::move(other.rankViews);
            views = std::move(other.views);
            other.forget();
        }
        return *this;
    }

    ~DpuSet()
    {
        release();
    }

    /** The DPUs of the set, each a DpuSet of one DPU. */
    std::vector<DpuSet *> &
    dpus()
    {
        return dpuViews;
    }

    /** The ranks of the set, each a DpuSet of one rank. */
    std::vector<DpuSet *> &
    ranks()
    {
        return rankViews;
    }

    /**
     * Allocates `NrDpus` DPUs (by default every one available) with the profile `Profile`.
     * @throws DpuError when they cannot be allocated
     */
    static DpuSet
    allocate(unsigned NrDpus = ALLOCATE_ALL, const std::string &Profile = "")
    {
        struct dpu_set_t cSet;
        DpuError::throwOnErr(dpu_alloc(NrDpus, Profile.c_str(), &cSet));
        return DpuSet(cSet, true, true);
    }

    /**
     * Allocates `NrRanks` whole ranks (by default every one available) with the profile `Profile`.
     * @throws DpuError when they cannot be allocated
     */
    static DpuSet
    allocateRanks(unsigned NrRanks = ALLOCATE_ALL, const std::string &Profile = "")
    {
        struct dpu_set_t cSet;
        DpuError::throwOnErr(dpu_alloc_ranks(NrRanks, Profile.c_str(), &cSet));
        return DpuSet(cSet, true, true);
    }

    /**
     * Loads the DPU program at path `Executable` into every DPU of the set.
     * @throws DpuError when it cannot be loaded
     */
    DpuProgram
    load(const std::string &Executable)
    {
        DpuProgram program;
        DpuError::throwOnErr(dpu_load(cSet, Executable.c_str(), &program.cProgram));
        return program;
    }

    /**
     * Writes what each DPU of the set printed during its last launch to `LogStream`, each DPU's output after a
     * line naming it (DPU_LOG_FORMAT_HEADER).
     * @throws DpuError when a log cannot be read
     */
    void
    log(std::ostream &LogStream)
    {
        for (DpuSet *dpu : dpuViews) {
            struct dpu_t *cDpu = dpu_from_set(dpu->cSet);
            unsigned id = dpu_get_id(cDpu);
            DpuError::throwOnErr(printToStream(&LogStream, DPU_LOG_FORMAT_HEADER, id));
            DpuError::throwOnErr(dpulog_read_for_dpu_(cDpu, printToStream, &LogStream));
        }
    }

    /** The set's asynchronous interface: its operations are queued, and DpuSetAsync::sync waits for them. */
    DpuSetAsync
    async();

private:
    /* This DpuSet allocated the DPUs and frees them. */
    bool owner;
    /* What dpus() and ranks() return (the caller may change them, so they are not what owns the views). */
    std::vector<DpuSet *> dpuViews;
    std::vector<DpuSet *> rankViews;
    /* The rank and DPU views of a set made with its children. */
    std::vector<std::unique_ptr<DpuSet>> views;

    /* A DpuSet for `CSet`; `withChildren`: with a view of each of its ranks and DPUs. */
    DpuSet(struct dpu_set_t CSet, bool owns, bool withChildren)
        : DpuSetOps(CSet, false)
        , owner(owns)
    {
        if (withChildren) {
            makeViews();
        }
    }

    void
    makeViews()
    {
        struct dpu_set_t cRank;
        DPU_RANK_FOREACH (cSet, cRank) {
            DpuSet *rank = adopt(cRank);
            struct dpu_set_t cDpu;
            DPU_FOREACH (cRank, cDpu) {
                DpuSet *dpu = adopt(cDpu);
                dpu->dpuViews.push_back(dpu);
                dpu->rankViews.push_back(rank);
                rank->dpuViews.push_back(dpu);
                dpuViews.push_back(dpu);
            }
            rank->rankViews.push_back(rank);
            rankViews.push_back(rank);
        }
    }

    DpuSet *
    adopt(struct dpu_set_t CSet)
    {
        views.push_back(std::unique_ptr<DpuSet>(new DpuSet(CSet, false, false)));
        return views.back().get();
    }

    void
    release() noexcept
    {
        views.clear();
        dpuViews.clear();
        rankViews.clear();
        if (owner) {
            /* A destructor cannot report a failure: the set was allocated, so dpu_free has nothing to refuse. */
            (void)dpu_free(cSet);
            owner = false;
        }
    }

    void
    forget() noexcept
    {
        owner = false;
        dpuViews.clear();
        rankViews.clear();
        views.clear();
    }

    /* A dpu_log_print_fct_t writing to the std::ostream `stream`. */
    static dpu_error_t
    printToStream(void *stream, const char *format, ...)
    {
        va_list arguments;
        va_start(arguments, format);
        va_list measured;
        va_copy(measured, arguments);
        int length = std::vsnprintf(nullptr, 0, format, measured);
        va_end(measured);
        if (length < 0) {
            va_end(arguments);
            return DPU_ERR_SYSTEM;
        }
        std::vector<char> text(static_cast<size_t>(length) + 1);
        std::vsnprintf(text.data(), text.size(), format, arguments);
        va_end(arguments);
        static_cast<std::ostream *>(stream)->write(text.data(), length);
        return DPU_OK;
    }
};

/**
 * A set's asynchronous interface (DpuSet::async): the operations of DpuSetOps are queued (DPU_XFER_ASYNC,
 * DPU_ASYNCHRONOUS), and sync() waits for them and reports their failure.
 */
class DpuSetAsync : public DpuSetOps {
    friend class DpuSet;

public:
    /**
     * Calls `Callback` on each rank of the set with the rank's index, or once with the whole set and 0 when
     * `SingleCall`, after the operations queued before; `IsBlocking` false lets other operations on the ranks
     * start before it returns (DPU_CALLBACK_NONBLOCKING).
     * @throws DpuError when the callback cannot be queued, or what `Callback` throws
     */
    void
    call(const CallbackFn &Callback, bool IsBlocking, bool SingleCall)
    {
        unsigned flags = DPU_CALLBACK_ASYNC;
        if (!IsBlocking) {
            flags |= DPU_CALLBACK_NONBLOCKING;
        }
        if (SingleCall) {
            flags |= DPU_CALLBACK_SINGLE_CALL;
        }
        /* upmem-sim's libdpu has run every call by the time dpu_callback returns, so the context can live here. */
        CallContext context(Callback);
        dpu_error_t status = dpu_callback(cSet, callBack, &context, static_cast<dpu_callback_flags_t>(flags));
        if (context.failure) {
            std::rethrow_exception(context.failure);
        }
        DpuError::throwOnErr(status);
    }

    /** call(Callback, true, false): blocking, once per rank. */
    void
    call(const CallbackFn &Callback)
    {
        call(Callback, true, false);
    }

    /**
     * Waits for the operations queued on the set.
     * @throws DpuError when one of them failed
     */
    void
    sync()
    {
        DpuError::throwOnErr(dpu_sync(set->cSet));
    }

private:
    DpuSet *set;

    explicit DpuSetAsync(DpuSet *Set)
        : DpuSetOps(Set->cSet, true)
        , set(Set)
    {
    }

    /* What the calls of one DpuSetAsync::call share: the function, and the first exception it threw. */
    struct CallContext {
        explicit CallContext(const CallbackFn &function)
            : callback(function)
        {
        }
        const CallbackFn &callback;
        std::mutex lock;
        std::exception_ptr failure;
    };

    static dpu_error_t
    callBack(struct dpu_set_t cSet, uint32_t rankIndex, void *argument)
    {
        CallContext *context = static_cast<CallContext *>(argument);
        /* No exception may cross libdpu's C frames: each is kept for call() and reported as a failed call. */
        try {
            DpuSet view(cSet, false, true);
            context->callback(view, rankIndex);
            return DPU_OK;
        } catch (...) {
            std::lock_guard<std::mutex> guard(context->lock);
            if (!context->failure) {
                context->failure = std::current_exception();
            }
            return DPU_ERR_SYSTEM;
        }
    }
};

inline DpuSetAsync
DpuSet::async()
{
    return DpuSetAsync(this);
}

} // namespace dpu

#endif /* UPMEM_SIM_DPU_HPP */
