/*
 * dpu_management.h: ranks and DPUs as objects (low-level API; upmem-sim's libdpu-compatible headers).
 *
 * Only the functions upmem-sim implements are declared. A DPU's position in its rank is (slice = control
 * interface, member); its linear index in the rank is slice * nr_of_dpus_per_control_interface + member, the
 * order of DPU_FOREACH.
 */
#ifndef UPMEM_SIM_DPU_MANAGEMENT_H
#define UPMEM_SIM_DPU_MANAGEMENT_H

#include <stdbool.h>
#include <stdint.h>

#include <dpu_description.h>
#include <dpu_error.h>
#include <dpu_macro_utils.h>
#include <dpu_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* NUMA node the rank is attached to, or -1 when unknown. */
int dpu_get_rank_numa_node(struct dpu_rank_t *rank);

/* The rank's id: its index in the low DPU_TARGET_SHIFT bits (dpu_target_macros.h), its backend type above. */
dpu_rank_id_t dpu_get_rank_id(struct dpu_rank_t *rank);

/* A number identifying the DPU among all DPUs of the process. */
dpu_id_t dpu_get_id(struct dpu_t *dpu);

/* The DPU's control interface (slice) in its rank. */
dpu_slice_id_t dpu_get_slice_id(struct dpu_t *dpu);

/* The DPU's position (member) in its control interface. */
dpu_member_id_t dpu_get_member_id(struct dpu_t *dpu);

/* Whether the DPU is enabled (dpu_alloc disables the surplus DPUs of the last rank; machines have broken ones). */
bool dpu_is_enabled(struct dpu_t *dpu);

/* The DPU at (slice_id, member_id) of the rank, enabled or not; NULL if out of range. */
struct dpu_t *dpu_get(struct dpu_rank_t *rank, dpu_slice_id_t slice_id, dpu_member_id_t member_id);

/* The rank holding the DPU. */
struct dpu_rank_t *dpu_get_rank(struct dpu_t *dpu);

/* The rank's description, owned by the rank. */
dpu_description_t dpu_get_description(struct dpu_rank_t *rank);

/*
 * A DPU_SET_RANKS set of the one rank `*rank`. The set's `list.ranks` is `rank` itself, so the pointed-to
 * pointer must outlive the set. Such a set cannot be dpu_free'd.
 */
struct dpu_set_t dpu_set_from_rank(struct dpu_rank_t **rank);

/* A DPU_SET_DPU set of the DPU. */
struct dpu_set_t dpu_set_from_dpu(struct dpu_t *dpu);

/* The rank of a DPU_SET_RANKS set holding exactly one rank; NULL for any other set. */
struct dpu_rank_t *dpu_rank_from_set(struct dpu_set_t set);

/* The DPU of a DPU_SET_DPU set; NULL for any other set. */
struct dpu_t *dpu_from_set(struct dpu_set_t set);

/*
 * Iterator over the enabled DPUs of one rank, behind STRUCT_DPU_FOREACH (which reads its fields).
 * `next` is the current DPU, valid while `has_next` is true; `count` is its index among the enabled DPUs
 * yielded so far; `next_idx` is the linear index in the rank where the search for the following one starts.
 */
struct dpu_iterator_t {
    struct dpu_rank_t *rank;
    uint32_t count;
    uint32_t next_idx;
    bool has_next;
    struct dpu_t *next;
};

/* An iterator whose `next` is the rank's first enabled DPU. */
struct dpu_iterator_t dpu_iterator_from(struct dpu_rank_t *rank);
/* Moves to the rank's next enabled DPU, or clears `has_next`. */
void dpu_iterator_next(struct dpu_iterator_t *iterator);

/*
 * STRUCT_DPU_FOREACH(rank, dpu) / STRUCT_DPU_FOREACH(rank, dpu, i): loops over the enabled DPUs of `rank`
 * (a struct dpu_rank_t *) in linear order; `dpu` (a struct dpu_t * lvalue) receives each DPU, `i` its index
 * among them.
 */
#define STRUCT_DPU_FOREACH(rank, ...)                                                                                \
    _DPU_FOREACH_VARIANT(__VA_ARGS__, _STRUCT_DPU_FOREACH_WRONG_NR_OF_ARGUMENTS,                                    \
        _STRUCT_DPU_FOREACH_WRONG_NR_OF_ARGUMENTS, _STRUCT_DPU_FOREACH_WRONG_NR_OF_ARGUMENTS, _STRUCT_DPU_FOREACH_I, \
        _STRUCT_DPU_FOREACH_X, _STRUCT_DPU_FOREACH_WRONG_NR_OF_ARGUMENTS)                                            \
    (rank, __VA_ARGS__)

#define _STRUCT_DPU_FOREACH_X(rank, dpu)                                                                             \
    for (struct dpu_iterator_t __dpu_struct_it = dpu_iterator_from(rank);                                            \
         ((dpu) = __dpu_struct_it.next), __dpu_struct_it.has_next; dpu_iterator_next(&__dpu_struct_it))

#define _STRUCT_DPU_FOREACH_I(rank, dpu, i)                                                                          \
    for (struct dpu_iterator_t __dpu_struct_it = dpu_iterator_from(rank);                                            \
         ((i) = __dpu_struct_it.count), ((dpu) = __dpu_struct_it.next), __dpu_struct_it.has_next;                    \
         dpu_iterator_next(&__dpu_struct_it))

#ifdef __cplusplus
}
#endif

#endif /* UPMEM_SIM_DPU_MANAGEMENT_H */
