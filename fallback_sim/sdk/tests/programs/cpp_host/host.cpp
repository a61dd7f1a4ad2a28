/*
 * A host program written against the SDK's C++ API (<dpu>, namespace dpu), every group of it checked against
 * the CPU: DpuSet::allocate / allocateRanks, dpus() and ranks(), load and DpuProgram::get, copy to DPU symbols
 * by name and as DpuSymbol (broadcast, one vector per DPU, with and without offset and size), exec, copy back,
 * log, the asynchronous interface (queued copies and exec, call per rank and single call, sync), scatter/gather
 * with function objects and get_block_t, a set moved to another DpuSet, and DpuError for what goes wrong.
 */
#include <dpu>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common.h"

#define DPU_BINARY "./bin/dpu_code"
/* Ranks of 8 DPUs, so that NR_DPUS DPUs span several ranks; scatter/gather allowed. */
#define PROFILE "nrDpusPerRank=8,sgXferEnable=true"
#define DPUS_PER_RANK 8

using dpu::DpuError;
using dpu::DpuProgram;
using dpu::DpuSet;
using dpu::DpuSymbol;

static unsigned errors;
static unsigned checks;

static void check(bool ok, const std::string &what) {
    checks++;
    if (!ok) {
        if (errors < 40) {
            std::cout << "FAILED: " << what << "\n";
        }
        errors++;
    }
}

/* libdpu's description of `error`, as DpuError::what() starts with it. */
static std::string description(dpu_error_t error) {
    char *text = dpu_error_to_string(error);
    std::string description = text;
    std::free(text);
    return description;
}

/* Runs `body`, which must throw DpuError whose what() starts with `error`'s description. */
static void expect_error(dpu_error_t error, const std::string &what, const std::function<void()> &body) {
    try {
        body();
        check(false, what + ": no DpuError thrown");
    } catch (const DpuError &thrown) {
        std::string message = thrown.what();
        check(message.compare(0, description(error).size(), description(error)) == 0,
              what + ": DpuError \"" + message + "\", expected \"" + description(error) + "...\"");
    }
}

/* Per-DPU inputs for a round: a different pattern on every DPU. */
static std::vector<std::vector<uint32_t>> inputs_for(unsigned nr_dpus, uint32_t round) {
    std::vector<std::vector<uint32_t>> inputs(nr_dpus, std::vector<uint32_t>(N));
    for (unsigned dpu = 0; dpu < nr_dpus; dpu++) {
        for (uint32_t i = 0; i < N; i++) {
            inputs[dpu][i] = round * 1000003u + dpu * 7919u + i;
        }
    }
    return inputs;
}

/* Checks every DPU's outputs and partial sums against the CPU. */
static void check_outputs(DpuSet &set, const std::vector<std::vector<uint32_t>> &inputs, uint32_t factor,
                          uint32_t bias, const std::string &what) {
    unsigned nr_dpus = set.dpus().size();
    std::vector<std::vector<uint32_t>> outputs(nr_dpus, std::vector<uint32_t>(N, 0xDEADBEEF));
    set.copy(outputs, "output");
    std::vector<std::vector<uint64_t>> partials(nr_dpus, std::vector<uint64_t>(NR_TASKLETS));
    set.copy(partials, "partial");
    for (unsigned dpu = 0; dpu < nr_dpus; dpu++) {
        uint64_t expected_sum = 0, sum = 0;
        bool same = true;
        for (uint32_t i = 0; i < N; i++) {
            uint32_t expected = scaled(inputs[dpu][i], factor, bias);
            expected_sum += expected;
            same = same && outputs[dpu][i] == expected;
        }
        for (uint64_t part : partials[dpu]) {
            sum += part;
        }
        check(same, what + ": DPU " + std::to_string(dpu) + "'s outputs");
        check(sum == expected_sum, what + ": DPU " + std::to_string(dpu) + "'s sum " + std::to_string(sum) +
                                       ", expected " + std::to_string(expected_sum));
    }
}

/* Allocation, the set's ranks and DPUs, allocateRanks, and a set moved from one DpuSet to another. */
static void allocation() {
    DpuSet set = DpuSet::allocate(NR_DPUS, PROFILE);
    check(set.dpus().size() == NR_DPUS, "allocate(" + std::to_string(NR_DPUS) + ") gives " +
                                            std::to_string(set.dpus().size()) + " DPUs");
    unsigned expected_ranks = (NR_DPUS + DPUS_PER_RANK - 1) / DPUS_PER_RANK;
    check(set.ranks().size() == expected_ranks, "the set has " + std::to_string(set.ranks().size()) + " ranks");
    unsigned in_ranks = 0;
    for (DpuSet *rank : set.ranks()) {
        check(rank->ranks().size() == 1 && rank->ranks()[0] == rank, "a rank's ranks() is itself");
        for (DpuSet *dpu : rank->dpus()) {
            check(dpu->dpus().size() == 1 && dpu->dpus()[0] == dpu && dpu->ranks()[0] == rank,
                  "a DPU's dpus() is itself, its ranks() its rank");
            check(dpu == set.dpus()[in_ranks], "the set's DPUs are its ranks' DPUs, in order");
            in_ranks++;
        }
    }
    check(in_ranks == NR_DPUS, "the ranks hold every DPU");

    DpuSet ranks = DpuSet::allocateRanks(2, PROFILE);
    check(ranks.ranks().size() == 2 && ranks.dpus().size() == 2 * DPUS_PER_RANK, "allocateRanks(2)");
    DpuSet moved(std::move(ranks));
    check(moved.dpus().size() == 2 * DPUS_PER_RANK && ranks.dpus().empty(), "a moved set's DPUs go with it");
    moved = DpuSet::allocate(1, PROFILE); /* frees the two ranks */
    check(moved.dpus().size() == 1, "a set assigned another one holds the other's DPUs");
    expect_error(DPU_ERR_ALLOCATION, "allocating more DPUs than there are", [] { DpuSet::allocate(1u << 20, PROFILE); });
}

/* Synchronous copies by name and by DpuSymbol, exec, copies back, per-DPU sets, explicit symbols and logs. */
static void synchronous(DpuSet &set, DpuProgram &program) {
    unsigned nr_dpus = set.dpus().size();
    std::vector<std::vector<uint32_t>> inputs = inputs_for(nr_dpus, 1);
    set.copy("factor", std::vector<uint32_t>{3});
    set.copy("bias", 0, std::vector<uint32_t>{11, 0xFFFFFFFF}, 4);
    set.copy("input", inputs);
    set.exec();
    check_outputs(set, inputs, 3, 11, "copy by name");

    DpuSymbol input = program.get("input");
    DpuSymbol output = program.get("output");
    DpuSymbol factor = program.get("factor");
    DpuSymbol bias = program.get("bias");
    inputs = inputs_for(nr_dpus, 2);
    set.copy(factor, std::vector<uint32_t>{5});
    set.copy(bias, std::vector<uint32_t>{2, 0xFFFFFFFF}, 4);
    /* The first half, then the second half at an offset: both the Size and the Offset overloads. */
    std::vector<std::vector<uint32_t>> halves(nr_dpus), seconds(nr_dpus);
    for (unsigned dpu = 0; dpu < nr_dpus; dpu++) {
        halves[dpu].assign(inputs[dpu].begin(), inputs[dpu].begin() + N / 2);
        seconds[dpu].assign(inputs[dpu].begin() + N / 2, inputs[dpu].end());
    }
    set.copy(input, inputs, N / 2 * sizeof(uint32_t));
    set.copy(input, N / 2 * sizeof(uint32_t), seconds);
    set.exec();
    check_outputs(set, inputs, 5, 2, "copy by DpuSymbol");
    std::vector<std::vector<uint32_t>> tail(nr_dpus, std::vector<uint32_t>(N / 2));
    set.copy(tail, N / 2 * sizeof(uint32_t), output, N / 2 * sizeof(uint32_t));
    bool tail_ok = true;
    for (unsigned dpu = 0; dpu < nr_dpus; dpu++) {
        for (uint32_t i = 0; i < N / 2; i++) {
            tail_ok = tail_ok && tail[dpu][i] == scaled(seconds[dpu][i], 5, 2);
        }
    }
    check(tail_ok, "copy back by DpuSymbol at an offset");

    /* One DPU of the set on its own: a copy and an exec of that DPU only. */
    DpuSet &last = *set.dpus()[nr_dpus - 1];
    last.copy("factor", std::vector<uint32_t>{9});
    last.exec();
    std::vector<std::vector<uint32_t>> launches(nr_dpus, std::vector<uint32_t>(1));
    set.copy(launches, "launches");
    check(launches[0][0] == 2 && launches[nr_dpus - 1][0] == 3, "a DPU's own exec runs that DPU only (launches " +
                                                                    std::to_string(launches[0][0]) + ", " +
                                                                    std::to_string(launches[nr_dpus - 1][0]) + ")");
    std::vector<std::vector<uint32_t>> last_out(1, std::vector<uint32_t>(N));
    last.copy(last_out, "output");
    check(last_out[0][0] == scaled(inputs[nr_dpus - 1][0], 9, 2), "a DPU's own copy back");

    /* An explicit symbol: 64 bytes at the end of MRAM, written and read back by address. */
    DpuSymbol end_of_mram(0x08000000u + (64u << 20) - 64, 64);
    std::vector<uint64_t> words(8);
    for (unsigned i = 0; i < words.size(); i++) {
        words[i] = 0x0123456789ABCDEFull * (i + 1);
    }
    set.copy(end_of_mram, words);
    std::vector<std::vector<uint64_t>> read(nr_dpus, std::vector<uint64_t>(8));
    set.copy(read, end_of_mram);
    check(read[0] == words && read[nr_dpus - 1] == words, "a DpuSymbol(address, size) of MRAM, both ways");

    std::ostringstream log;
    set.log(log);
    std::string text = log.str();
    check(text.find("=== DPU#0x") == 0, "the log starts with a DPU's header line");
    unsigned headers = 0, lines = 0;
    for (size_t at = text.find("=== DPU#0x"); at != std::string::npos; at = text.find("=== DPU#0x", at + 1)) {
        headers++;
    }
    for (size_t at = text.find("launch 2\n"); at != std::string::npos; at = text.find("launch 2\n", at + 1)) {
        lines++;
    }
    check(headers == nr_dpus && lines == nr_dpus - 1 && text.find("factor 9 bias 2 launch 3\n") != std::string::npos,
          "log: " + std::to_string(headers) + " headers, " + std::to_string(lines) + " DPUs at launch 2 in:\n" +
              text.substr(0, 400));
    /* The header names the DPU by its dpu_get_id, rank << 16 | slice << 8 | member: ranks of 8 DPUs are 8 slices of
     * one DPU, and the set starts the server, so its DPU i is rank i / 8, slice i % 8. */
    size_t at = 0;
    for (unsigned i = 0; i < nr_dpus && at != std::string::npos; i++) {
        char header[32];
        unsigned id = (i / DPUS_PER_RANK) << 16 | (i % DPUS_PER_RANK) << 8;
        std::snprintf(header, sizeof header, "=== DPU#0x%x ===\n", id);
        at = text.find(header, at);
        check(at != std::string::npos, "DPU " + std::to_string(i) + "'s log, after " + header + " in order, in:\n" +
                                           text.substr(0, 400));
    }
}

/* The asynchronous interface: queued copies and exec, callbacks per rank and for the whole set, sync. */
static void asynchronous(DpuSet &set) {
    unsigned nr_dpus = set.dpus().size();
    std::vector<std::vector<uint32_t>> inputs = inputs_for(nr_dpus, 3);
    dpu::DpuSetAsync queue = set.async();
    queue.copy("factor", std::vector<uint32_t>{7});
    queue.copy("bias", std::vector<uint32_t>{1}, 4);
    queue.copy("input", inputs);
    queue.exec();
    std::vector<unsigned> calls(set.ranks().size(), 0);
    std::vector<uint64_t> rank_sums(set.ranks().size(), 0);
    queue.call([&](DpuSet &rank, unsigned index) {
        /* After the queued exec: the rank's results are there. */
        std::vector<std::vector<uint64_t>> partials(rank.dpus().size(), std::vector<uint64_t>(NR_TASKLETS));
        rank.copy(partials, "partial");
        for (const std::vector<uint64_t> &dpu : partials) {
            for (uint64_t part : dpu) {
                rank_sums[index] += part;
            }
        }
        calls[index]++;
    });
    unsigned single_calls = 0, single_dpus = 0;
    queue.call([&](DpuSet &whole, unsigned) {
        single_calls++;
        single_dpus = whole.dpus().size();
    }, false, true);
    queue.sync();
    uint64_t expected_total = 0, total = 0;
    for (unsigned dpu = 0; dpu < nr_dpus; dpu++) {
        for (uint32_t i = 0; i < N; i++) {
            expected_total += scaled(inputs[dpu][i], 7, 1);
        }
    }
    bool each_rank_once = true;
    for (unsigned rank = 0; rank < calls.size(); rank++) {
        each_rank_once = each_rank_once && calls[rank] == 1;
        total += rank_sums[rank];
    }
    check(each_rank_once, "call() runs once per rank");
    check(total == expected_total, "the callbacks see the queued exec's results (" + std::to_string(total) +
                                       ", expected " + std::to_string(expected_total) + ")");
    check(single_calls == 1 && single_dpus == nr_dpus, "a single call gets the whole set");
    check_outputs(set, inputs, 7, 1, "asynchronous copies and exec");

    expect_error(DPU_ERR_UNKNOWN_SYMBOL, "a DpuError thrown in a callback comes out of call()", [&] {
        queue.call([](DpuSet &rank, unsigned) { rank.copy("no_such_symbol", std::vector<uint32_t>{1}); });
    });
}

/* Scatter/gather: each DPU's input from two blocks of one host array, its output back into another. */
static void scatter_gather(DpuSet &set, DpuProgram &program) {
    unsigned nr_dpus = set.dpus().size();
    std::vector<uint32_t> all_inputs(nr_dpus * N), all_outputs(nr_dpus * N, 0);
    for (unsigned i = 0; i < all_inputs.size(); i++) {
        all_inputs[i] = i * 2654435761u;
    }
    const uint32_t half = N / 2 * sizeof(uint32_t);
    /* Block 0 of DPU d is the second half of its slice, block 1 the first: the DPU sees them swapped. */
    auto swapped_halves = [&](struct sg_block_info *out, uint32_t dpu, uint32_t block) {
        if (block >= 2) {
            return false;
        }
        out->addr = reinterpret_cast<uint8_t *>(&all_inputs[dpu * N + (block == 0 ? N / 2 : 0)]);
        out->length = half;
        return true;
    };
    set.copy("factor", std::vector<uint32_t>{1});
    set.copy("bias", std::vector<uint32_t>{0});
    set.copyScatterGather("input", swapped_halves, 2 * half);
    set.exec();
    struct Slices {
        uint32_t *base;
    } slices = {all_outputs.data()};
    get_block_t whole_slice;
    whole_slice.f = [](struct sg_block_info *out, uint32_t dpu, uint32_t block, void *args) {
        if (block >= 1) {
            return false;
        }
        out->addr = reinterpret_cast<uint8_t *>(static_cast<Slices *>(args)->base + dpu * N);
        out->length = N * sizeof(uint32_t);
        return true;
    };
    whole_slice.args = &slices;
    whole_slice.args_size = sizeof(slices);
    DpuSymbol output = program.get("output");
    set.copyScatterGather(whole_slice, N * sizeof(uint32_t), output);
    bool same = true;
    for (unsigned dpu = 0; dpu < nr_dpus; dpu++) {
        for (uint32_t i = 0; i < N; i++) {
            uint32_t source = dpu * N + (i < N / 2 ? i + N / 2 : i - N / 2);
            same = same && all_outputs[dpu * N + i] == all_inputs[source];
        }
    }
    check(same, "scatter/gather in (function object) and out (get_block_t)");
}

/* What goes wrong is a DpuError that says what. */
static void errors_thrown(DpuSet &set, DpuProgram &program) {
    unsigned nr_dpus = set.dpus().size();
    expect_error(DPU_ERR_UNKNOWN_SYMBOL, "DpuProgram::get of a missing symbol", [&] { program.get("missing"); });
    expect_error(DPU_ERR_UNKNOWN_SYMBOL, "a copy to a missing symbol",
                 [&] { set.copy("missing", std::vector<uint32_t>{1}); });
    expect_error(DPU_ERR_INVALID_SYMBOL_ACCESS, "a copy past a symbol's end",
                 [&] { set.copy("factor", std::vector<uint32_t>{1, 2, 3}); });
    expect_error(DPU_ERR_ELF_NO_SUCH_FILE, "loading a missing file", [&] { set.load("./bin/no_such_program"); });
    DpuSymbol small(0x08000000u + (64u << 20) - 8, 8);
    expect_error(DPU_ERR_INVALID_SYMBOL_ACCESS, "a copy past an explicit symbol's end",
                 [&] { set.copy(small, std::vector<uint64_t>{1, 2}); });
    std::vector<std::vector<uint32_t>> uneven(nr_dpus, std::vector<uint32_t>(N));
    uneven[1].resize(N - 2);
    expect_error(DPU_ERR_INVALID_MEMORY_TRANSFER, "host buffers of different sizes", [&] { set.copy("input", uneven); });
    expect_error(DPU_ERR_INVALID_MEMORY_TRANSFER, "no host buffer",
                 [&] { set.copy("input", std::vector<std::vector<uint32_t>>()); });
    std::vector<std::vector<uint32_t>> too_few(nr_dpus - 1, std::vector<uint32_t>(N));
    expect_error(DPU_ERR_INVALID_MEMORY_TRANSFER, "fewer host buffers than DPUs", [&] { set.copy("input", too_few); });
    expect_error(DPU_ERR_INVALID_MEMORY_TRANSFER, "a size larger than the host buffers",
                 [&] { set.copy(uneven, N * sizeof(uint32_t), "output"); });
    expect_error(DPU_ERR_INVALID_MEMORY_TRANSFER, "a broadcast larger than its host buffer",
                 [&] { set.copy("input", std::vector<uint32_t>(2), 64); });
    try {
        set.copy("missing", std::vector<uint32_t>{1});
        check(false, "a copy to a missing symbol throws");
    } catch (const std::exception &error) {
        check(dynamic_cast<const DpuError *>(&error) != nullptr &&
                  std::string(error.what()) == description(DPU_ERR_UNKNOWN_SYMBOL),
              "a DpuError caught as std::exception says \"" + std::string(error.what()) + "\"");
    }
}

int main() {
    try {
        allocation();
        DpuSet set = DpuSet::allocate(NR_DPUS, PROFILE);
        DpuProgram program = set.load(DPU_BINARY);
        synchronous(set, program);
        asynchronous(set);
        scatter_gather(set, program);
        errors_thrown(set, program);
    } catch (const DpuError &error) {
        check(false, std::string("unexpected DpuError: ") + error.what());
    }
    std::cout << "cpp_host: " << checks << " checks of the C++ API on " << NR_DPUS << " DPUs: "
              << (errors ? "FAILED" : "OK") << " (" << errors << " errors)\n";
    return errors ? EXIT_FAILURE : EXIT_SUCCESS;
}
