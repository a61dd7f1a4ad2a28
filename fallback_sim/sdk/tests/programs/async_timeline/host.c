/*
 * The predicted-hardware timeline (dpu_sim_timeline) of asynchronous launches: each DPU_ASYNCHRONOUS launch is
 * one launch event, predicted once its DPUs have finished, from its own DPUs' modelled cycles, exactly as the
 * same launch run synchronously:
 *   1. a launch of the whole set, then dpu_sync;
 *   2. one launch per rank, then one dpu_sync for the set;
 *   3. a launch polled with dpu_status until done, then another launch of the same DPUs with more work before
 *      any dpu_sync (the first launch's prediction is its own, not the second's).
 * Prints one line per check ("ok ..." or "FAILED ...") and a summary.
 */
#include <dpu.h>
#include <dpu_sim.h>
#include <stdint.h>
#include <stdio.h>

#define NR_DPUS 32
#define PROFILE "nrDpusPerRank=16"
#define NR_RANKS 2
#define LIGHT_WORK 2000
#define HEAVY_WORK 6000
#define MAX_EVENTS 16

static unsigned nr_errors;

static void check(const char *what, uint64_t got, uint64_t want) {
    if (got == want) {
        printf("ok %s\n", what);
    } else {
        printf("FAILED %s: got %llu, expected %llu\n", what, (unsigned long long)got, (unsigned long long)want);
        nr_errors++;
    }
}

/* The launch events of the timeline since the last dpu_sim_timeline_clear, into `launches`; returns how many. */
static size_t timeline_launches(struct dpu_sim_event launches[MAX_EVENTS]) {
    struct dpu_sim_event events[MAX_EVENTS];
    size_t nr_events = 0, nr_launches = 0;
    DPU_ASSERT(dpu_sim_timeline(events, MAX_EVENTS, &nr_events));
    for (size_t e = 0; e < nr_events && e < MAX_EVENTS; e++) {
        if (events[e].operation == DPU_SIM_OP_LAUNCH) {
            launches[nr_launches++] = events[e];
        }
    }
    return nr_launches;
}

static void set_work(struct dpu_set_t set, uint32_t work) {
    DPU_ASSERT(dpu_broadcast_to(set, "work", 0, &work, sizeof(work), DPU_XFER_DEFAULT));
}

/* The prediction of a synchronous launch of `set` with `work`. */
static uint64_t synchronous_prediction(struct dpu_set_t set, uint32_t work) {
    struct dpu_sim_event launches[MAX_EVENTS];
    set_work(set, work);
    DPU_ASSERT(dpu_sim_timeline_clear());
    DPU_ASSERT(dpu_launch(set, DPU_SYNCHRONOUS));
    size_t nr_launches = timeline_launches(launches);
    check("a synchronous launch is one launch event", nr_launches, 1);
    return nr_launches == 1 ? launches[0].predicted_ns : DPU_SIM_NOT_PREDICTED;
}

int main(void) {
    struct dpu_set_t set, rank;
    struct dpu_sim_event launches[MAX_EVENTS];
    DPU_ASSERT(dpu_alloc(NR_DPUS, PROFILE, &set));
    DPU_ASSERT(dpu_load(set, "./bin/dpu_code", NULL));

    uint64_t light = synchronous_prediction(set, LIGHT_WORK);
    uint64_t heavy = synchronous_prediction(set, HEAVY_WORK);
    check("a heavier launch is predicted slower", heavy > light && light > 0, 1);

    /* 1. The whole set, asynchronously. */
    set_work(set, LIGHT_WORK);
    DPU_ASSERT(dpu_sim_timeline_clear());
    DPU_ASSERT(dpu_launch(set, DPU_ASYNCHRONOUS));
    DPU_ASSERT(dpu_sync(set));
    size_t nr_launches = timeline_launches(launches);
    check("set launch: one launch event", nr_launches, 1);
    check("set launch: predicted as run synchronously", nr_launches == 1 ? launches[0].predicted_ns : 0, light);

    /* 2. Each rank on its own, one dpu_sync for the set. */
    DPU_ASSERT(dpu_sim_timeline_clear());
    DPU_RANK_FOREACH(set, rank) { DPU_ASSERT(dpu_launch(rank, DPU_ASYNCHRONOUS)); }
    DPU_ASSERT(dpu_sync(set));
    nr_launches = timeline_launches(launches);
    check("rank launches: one launch event per rank", nr_launches, NR_RANKS);
    for (size_t l = 0; l < nr_launches; l++) {
        check("rank launches: the rank's DPUs", launches[l].nr_dpus, NR_DPUS / NR_RANKS);
        check("rank launches: each predicted as run synchronously", launches[l].predicted_ns, light);
    }

    /* 3. Polled until done, then launched again with more work before dpu_sync. */
    DPU_ASSERT(dpu_sim_timeline_clear());
    DPU_ASSERT(dpu_launch(set, DPU_ASYNCHRONOUS));
    bool done = false, fault = false;
    while (!done && !fault) {
        DPU_ASSERT(dpu_status(set, &done, &fault));
    }
    check("polled launch: done without fault", done && !fault, 1);
    set_work(set, HEAVY_WORK);
    DPU_ASSERT(dpu_launch(set, DPU_ASYNCHRONOUS));
    DPU_ASSERT(dpu_sync(set));
    nr_launches = timeline_launches(launches);
    check("relaunch: two launch events", nr_launches, 2);
    check("relaunch: the first predicted from its own cycles", nr_launches == 2 ? launches[0].predicted_ns : 0, light);
    check("relaunch: the second from its own", nr_launches == 2 ? launches[1].predicted_ns : 0, heavy);

    DPU_ASSERT(dpu_free(set));
    printf("async_timeline: %s (%u errors)\n", nr_errors == 0 ? "OK" : "FAILED", nr_errors);
    return nr_errors == 0 ? 0 : 1;
}
