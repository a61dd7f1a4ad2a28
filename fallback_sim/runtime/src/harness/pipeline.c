/*
 * The modelled schedule's clock: the DPU's pipeline, shared by the tasklets that can issue.
 *
 * The pipeline issues at most one instruction per cycle, and from a given tasklet at most one every
 * DPUSIM_PIPELINE_DEPTH (11) cycles, in turn among the tasklets that can issue: while n of them can, each issues
 * one instruction every max(11, n) cycles. A tasklet waiting for its DMA transfer, blocked or finished cannot
 * issue, and the others issue faster meanwhile. (So uPIMulator, the cycle-level DPU simulator of Hyun et al.,
 * HPCA 2024, models it: its thread scheduler issues round robin among the runnable threads whose last issue is at
 * least 11 cycles back, and a thread that issues ldma or sdma is blocked until its transfer completes;
 * simulator/dpu/logic/thread_scheduler.go and logic.go.) So every tasklet that can issue advances at the same
 * rate, which depends on the cycle only: the model keeps one issue clock V, the instructions that each issuing
 * tasklet has issued by cycle t, with dV/dt = 1 / max(11, n(t)). A tasklet's clock is its position on V.
 *
 * Positions keep the tasklets' order fixed whatever happens after. A tasklet runs ahead of the others in its own
 * code (up to a quantum); a tasklet behind it may then start a DMA at a cycle the one ahead has already run
 * through, which makes V steeper from that cycle on: the one ahead reached its position sooner than it seemed.
 * Its position does not change, and neither does its place among the others; only the cycle at which V reaches
 * it does. So the ready ring orders tasklets by position, and the cycle of a position is read off V when it is
 * needed, once no tasklet is behind it: to start a DMA, to read the cycle counter, when a tasklet stops.
 *
 * V is kept as an anchor (a cycle, its position, the tasklets issuing from there) that every runnable tasklet
 * has passed, and the events after it: changes of the number issuing at a position (a tasklet blocks, finishes,
 * or resumes another), and activations at a cycle (a tasklet's DMA transfer completes, or it boots: it issues
 * from then on). Each pick folds into the anchor the events behind the earliest tasklet. A tasklet starts a DMA
 * at its turn, where nothing is left behind it: the anchor moves to it. One that reaches its DMA with others
 * behind it leaves the transfer with the pick (clock_dma), which issues it when it comes to that tasklet, as the
 * tasklet would have had it been resumed then: a DMA costs one tasklet switch, not two.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>

/* How far a tasklet may run ahead of the earliest other one in its own code before it gives way. DMA and
 * synchronisation happen in position order exactly; the quantum only bounds how far plain WRAM reads and writes
 * of different tasklets can be out of order, and it changes no modelled cycle. 4,096 instructions are 65,536
 * cycles with 16 tasklets issuing: see clock.c's QUANTUM_CYCLES for why a quantum this long. */
#define QUANTUM_POSITIONS (4096ull << POSITION_SHIFT)

static uint64_t issue_interval(uint32_t issuing) {
    return issuing > DPUSIM_PIPELINE_DEPTH ? issuing : DPUSIM_PIPELINE_DEPTH;
}

/* A stretch of V along which the same number of tasklets issue, from (time, position) on. */
struct segment {
    uint64_t time;
    uint64_t position;
    uint32_t issuing;
};

/* The cycle at which the segment reaches `position` (not before its start), rounded up. */
static uint64_t segment_time(const struct segment *segment, uint64_t position) {
    if (position <= segment->position)
        return segment->time;
    uint64_t scaled = (position - segment->position) * issue_interval(segment->issuing);
    return segment->time + ((scaled + POSITION_ONE - 1) >> POSITION_SHIFT);
}

/* The segment's position at cycle `time` (not before its start), rounded down. */
static uint64_t segment_position(const struct segment *segment, uint64_t time) {
    if (time <= segment->time)
        return segment->position;
    uint64_t scaled = (time - segment->time) << POSITION_SHIFT;
    return segment->position + divide_by_interval(scaled, (uint32_t)issue_interval(segment->issuing));
}

/* A change of the number of tasklets issuing, at a position: -1 when `tasklet` stops issuing (its cycle is
 * recorded as the change is folded), +1 when another tasklet resumed it. */
struct change {
    uint64_t position;
    uint32_t tasklet;
    int32_t delta;
};

/* A tasklet that issues again from a cycle on: its DMA transfer completes, or it boots. */
struct activation {
    uint64_t time;
    uint32_t tasklet;
};

/* Each tasklet has at most one stop and one resumption pending, and every tasklet's DMA is at most one
 * activation: synchronisation and DMA wait their turn, so their events are behind no runnable tasklet for long. */
#define MAX_CHANGES (2 * DPUSIM_MAX_TASKLETS)

/* The pending events, each kind in a ring whose first is at its head: changes in position order (equal
 * positions in the order they came), activations in cycle order (ties to the lower tasklet). */
#define CHANGE_SLOTS 64u /* a power of two, at least MAX_CHANGES */
_Static_assert(MAX_CHANGES <= CHANGE_SLOTS, "the change ring must hold every pending change");
#define ACTIVATION_SLOTS 32u /* a power of two, at least DPUSIM_MAX_TASKLETS */
_Static_assert(DPUSIM_MAX_TASKLETS <= ACTIVATION_SLOTS, "the activation ring must hold every tasklet");

static struct segment anchor;
static struct change change_ring[CHANGE_SLOTS];
static uint32_t change_head, nr_changes;
static struct activation activation_ring[ACTIVATION_SLOTS];
static uint32_t activation_head, nr_activations;

static struct change *change_at(uint32_t place) { return &change_ring[(change_head + place) % CHANGE_SLOTS]; }

static struct activation *activation_at(uint32_t place) {
    return &activation_ring[(activation_head + place) % ACTIVATION_SLOTS];
}

/*
 * The runnable tasklets other than the running one, in order, in a ring of their order keys: the earliest at
 * `ready_head`, the latest `nr_ready - 1` places on. An order key is a tasklet's position above its id: one
 * unsigned comparison orders tasklets by position and breaks ties to the lower id. Positions stay below the
 * 2^59 this leaves them for 2^43 instructions of a tasklet (about 7 hours of a DPU at 350 MHz). A tasklet's
 * position changes only while it runs or waits, when it is not in the ring, so the ring stays in order.
 */
#define ORDER_ID_BITS 5
#define ORDER_ID_MASK ((1u << ORDER_ID_BITS) - 1)
_Static_assert(DPUSIM_MAX_TASKLETS <= ORDER_ID_MASK + 1, "tasklet ids must fit below the position in an order key");
#define READY_SLOTS 32u /* a power of two, at least DPUSIM_MAX_TASKLETS */
_Static_assert(DPUSIM_MAX_TASKLETS <= READY_SLOTS, "the ready ring must hold every tasklet");

static uint64_t ready[READY_SLOTS];
static uint32_t ready_head, nr_ready;

static uint64_t order_key(uint32_t t) { return run.tasklets[t].clock << ORDER_ID_BITS | t; }

static uint64_t *ready_slot(uint32_t place) { return &ready[(ready_head + place) % READY_SLOTS]; }

static uint64_t ready_earliest_position(void) {
    return nr_ready == 0 ? UINT64_MAX : *ready_slot(0) >> ORDER_ID_BITS;
}

/* Inserts t in order, moving the ring's entries on the side of its place that has fewer: after a DMA a tasklet
 * usually enters as the latest, but one that gives way before its DMA or synchronisation is usually only just
 * behind the earliest, and moving the entries after it would move nearly the whole ring. */
static void ready_insert(uint32_t t) {
    uint64_t key = order_key(t);
    if (nr_ready > 0 && key < *ready_slot(nr_ready / 2)) {
        uint32_t place = 0; /* the entries before it move one slot towards the front */
        ready_head = (ready_head + READY_SLOTS - 1) % READY_SLOTS;
        for (; *ready_slot(place + 1) < key; place++)
            *ready_slot(place) = *ready_slot(place + 1);
        *ready_slot(place) = key;
    } else {
        uint32_t place = nr_ready;
        for (; place > 0 && *ready_slot(place - 1) > key; place--)
            *ready_slot(place) = *ready_slot(place - 1);
        *ready_slot(place) = key;
    }
    nr_ready++;
}

static uint32_t ready_take_earliest(void) {
    uint64_t key = *ready_slot(0);
    ready_head = (ready_head + 1) % READY_SLOTS;
    nr_ready--;
    return (uint32_t)(key & ORDER_ID_MASK);
}

enum event { EVENT_NONE, EVENT_CHANGE, EVENT_ACTIVATION };

/* The first of changes[c..] and activations[a..] along V from `segment` on, which are still to pass: which
 * kind, and at what position. A change and an activation at the same position: the change first. */
static enum event next_event(const struct segment *segment, uint32_t c, uint32_t a, uint64_t *position) {
    enum event next = EVENT_NONE;
    *position = UINT64_MAX;
    if (a < nr_activations) {
        next = EVENT_ACTIVATION;
        *position = segment_position(segment, activation_at(a)->time);
    }
    if (c < nr_changes && change_at(c)->position <= *position) {
        next = EVENT_CHANGE;
        *position = change_at(c)->position;
    }
    return next;
}

static void pass_change(struct segment *segment, const struct change *change) {
    segment->time = segment_time(segment, change->position);
    segment->position = change->position;
    segment->issuing += (uint32_t)change->delta;
}

static void pass_activation(struct segment *segment, const struct activation *activation, uint64_t position) {
    segment->time = activation->time > segment->time ? activation->time : segment->time;
    segment->position = position;
    segment->issuing++;
}

/* The position at which the earliest pending activation happens, on V as the events known now make it. */
static uint64_t next_activation_position(void) {
    struct segment segment = anchor;
    for (uint32_t c = 0;; c++) {
        uint64_t at;
        if (next_event(&segment, c, 0, &at) != EVENT_CHANGE)
            return at; /* the activation, or UINT64_MAX if there is none */
        pass_change(&segment, change_at(c));
    }
}

/* Folds into the anchor, in order, every event at or before `limit`, and before any tasklet an activation adds
 * to the ring: nothing runnable is ever behind the anchor. Returns next_activation_position(). */
static uint64_t fold_until(uint64_t limit) {
    for (;;) {
        uint64_t at;
        enum event next = next_event(&anchor, 0, 0, &at);
        if (next == EVENT_NONE)
            return UINT64_MAX;
        if (at > limit)
            return next == EVENT_ACTIVATION ? at : next_activation_position();
        if (next == EVENT_CHANGE) {
            const struct change *change = change_at(0);
            pass_change(&anchor, change);
            if (change->delta < 0)
                run.tasklets[change->tasklet].time = anchor.time;
            change_head = (change_head + 1) % CHANGE_SLOTS;
            nr_changes--;
        } else {
            uint32_t t = activation_at(0)->tasklet;
            pass_activation(&anchor, activation_at(0), at);
            activation_head = (activation_head + 1) % ACTIVATION_SLOTS;
            nr_activations--;
            struct tasklet *tasklet = &run.tasklets[t];
            tasklet->clock = at;
            if (tasklet->state == TASKLET_TRANSFERRING)
                tasklet->state = TASKLET_RUNNABLE;
            ready_insert(t);
            limit = at;
        }
    }
}

static void add_change(uint64_t position, uint32_t tasklet, int32_t delta) {
    if (nr_changes == MAX_CHANGES) {
        fprintf(stderr, "dpusim worker: more than %u pending changes of the issuing tasklets\n", MAX_CHANGES);
        abort();
    }
    uint32_t place = nr_changes++;
    for (; place > 0 && change_at(place - 1)->position > position; place--)
        *change_at(place) = *change_at(place - 1);
    *change_at(place) = (struct change){.position = position, .tasklet = tasklet, .delta = delta};
}

static void add_activation(uint64_t time, uint32_t tasklet) {
    uint32_t place = nr_activations++;
    for (; place > 0 && (activation_at(place - 1)->time > time ||
                         (activation_at(place - 1)->time == time && activation_at(place - 1)->tasklet > tasklet));
         place--)
        *activation_at(place) = *activation_at(place - 1);
    *activation_at(place) = (struct activation){.time = time, .tasklet = tasklet};
}

/* Where the earliest of the other tasklets is, or will be once its transfer completes (at
 * `activation_position`), and with it when the running tasklet, at `own`, gives way in its own code. */
static void set_turn(uint64_t own, uint64_t activation_position) {
    uint64_t ready_position = ready_earliest_position();
    uint64_t others = ready_position < activation_position ? ready_position : activation_position;
    run.others_earliest = others;
    run.yield_at = others == UINT64_MAX ? UINT64_MAX : (others > own ? others : own) + QUANTUM_POSITIONS;
}

void pipeline_reset(uint32_t nr_tasklets, const uint64_t boot_times[]) {
    anchor = (struct segment){0};
    change_head = nr_changes = activation_head = nr_activations = 0;
    ready_head = nr_ready = 0;
    for (uint32_t t = 0; t < nr_tasklets; t++) {
        run.tasklets[t].clock = 0;
        add_activation(boot_times[t], t);
    }
}

/* The earliest tasklet once the events behind it are folded (the running one among the others when it stays
 * runnable), taken from the ready ring; sets `activation_position` to the earliest pending activation's. */
static uint32_t take_earliest(bool running_stays, uint64_t *activation_position) {
    struct tasklet *running = run.running;
    uint64_t limit = ready_earliest_position();
    if (running_stays && running->clock < limit)
        limit = running->clock;
    *activation_position = fold_until(limit);
    uint32_t self = (uint32_t)(running - run.tasklets);
    if (running_stays && (nr_ready == 0 || order_key(self) < *ready_slot(0)))
        return self;
    if (nr_ready == 0)
        return DPUSIM_NO_TASKLET; /* every event was folded: none can run again */
    uint32_t chosen = ready_take_earliest();
    if (running_stays)
        ready_insert(self);
    return chosen;
}

/* A tasklet whose transfer waited for its turn, reached by the pick, issues it there: exactly as it would have
 * had it been resumed, but without its two switches. */
uint32_t pipeline_pick(bool running_stays) {
    for (;;) {
        uint64_t activation_position;
        uint32_t chosen = take_earliest(running_stays, &activation_position);
        if (chosen == DPUSIM_NO_TASKLET)
            return chosen;
        struct tasklet *tasklet = &run.tasklets[chosen];
        if (!tasklet->transfer_waiting) {
            set_turn(tasklet->clock, activation_position);
            return chosen;
        }
        tasklet->transfer_waiting = false;
        pipeline_transfer(tasklet, tasklet->transfer_cycles);
        dma_copy(&tasklet->transfer);
        if (tasklet->state == TASKLET_RUNNABLE)
            return chosen; /* its transfer ends before anything else happens: it goes on, its turn set */
        running_stays = false; /* the running tasklet is in the ring now, or it is the one transferring */
    }
}

uint64_t pipeline_time(uint64_t position) {
    struct segment segment = anchor;
    uint32_t c = 0, a = 0;
    for (;;) {
        uint64_t at;
        enum event next = next_event(&segment, c, a, &at);
        if (next == EVENT_NONE || at > position)
            return segment_time(&segment, position);
        if (next == EVENT_CHANGE) {
            pass_change(&segment, change_at(c++));
        } else {
            pass_activation(&segment, activation_at(a++), at);
        }
    }
}

void pipeline_transfer(struct tasklet *tasklet, uint64_t cycles) {
    uint32_t self = (uint32_t)(tasklet - run.tasklets);
    uint64_t position = tasklet->clock, issued = segment_time(&anchor, position);
    /* It is at its turn, so every event left comes after it, but for its own resumptions of others and a
     * transfer that completes at this very cycle. */
    if ((nr_changes > 0 && change_at(0)->position <= position) ||
        (nr_activations > 0 && activation_at(0)->time <= issued)) {
        fold_until(position);
        issued = segment_time(&anchor, position);
    }
    anchor = (struct segment){.time = issued, .position = position, .issuing = anchor.issuing - 1};
    tasklet->time = issued;
    uint64_t done = dma_engine_take(issued, cycles);
    /* The engine serves transfers in issue order, so a pending activation comes before this one. With none,
     * and no change or runnable tasklet before its end either, it goes on at once, as the pick after its
     * transfer would have chosen it. */
    if (nr_activations == 0) {
        uint64_t at = segment_position(&anchor, done);
        if ((nr_changes == 0 || change_at(0)->position > at) &&
            (nr_ready == 0 || (at << ORDER_ID_BITS | self) < *ready_slot(0))) {
            anchor = (struct segment){.time = done, .position = at, .issuing = anchor.issuing + 1};
            tasklet->clock = at;
            set_turn(at, UINT64_MAX);
            return;
        }
    }
    add_activation(done, self);
    tasklet->state = TASKLET_TRANSFERRING;
    run.others_earliest = 0; /* running, it gives way at its next turn check, the DMA routine's last step */
}

void pipeline_stop(void) {
    add_change(run.running->clock, (uint32_t)(run.running - run.tasklets), -1);
}

void pipeline_resume(struct tasklet *tasklet, uint32_t delay_instructions) {
    uint64_t from = run.running->clock;
    add_change(from, (uint32_t)(tasklet - run.tasklets), +1);
    uint64_t at = from + ((uint64_t)delay_instructions << POSITION_SHIFT);
    if (tasklet->clock < at)
        tasklet->clock = at;
    ready_insert((uint32_t)(tasklet - run.tasklets));
    /* One more tasklet issues from here on, which moves the pending activations' positions. */
    uint64_t yield_at = run.yield_at;
    set_turn(from, next_activation_position());
    if (yield_at < run.yield_at)
        run.yield_at = yield_at;
}
