//! The routines of the SDK's DPU runtime and their sizes in DPU instructions, which a kernel's IRAM estimate adds
//! for what the kernel uses.
//!
//! Read from the SDK 2025.1's compiled runtime for v1A (`librt_v1A.a`, one object per source, and
//! `misc/v1A/crt0.o` for the boot code): the DPU compiler puts every function in its own `.text.<name>`
//! section, so a routine's size is its section's size divided by 8 (the ELF stores each 48-bit DPU instruction
//! in 8 bytes, as IRAM's linker region does), and the routines it calls are the functions its section's
//! relocations name. A name that shares its section with another (an alias, such as `__cmpsf2` of `__lesf2`)
//! costs nothing and calls the routine whose section it is. Sizes were checked against the SDK's linked example
//! programs, whose `.text` is exactly the sum of the functions they contain. The comment on each line names the
//! runtime source the routine was compiled from.

/// A routine of the SDK's DPU runtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SdkRoutine {
    /// Its symbol.
    pub name: &'static str,
    /// Its size in DPU instructions.
    pub instructions: u32,
    /// The routines it calls (so a program that uses it links them too).
    pub calls: &'static [&'static str],
}

const fn routine(name: &'static str, instructions: u32, calls: &'static [&'static str]) -> SdkRoutine {
    SdkRoutine { name, instructions, calls }
}

/// The boot code every DPU program starts with (`crt0.o`): it clears the atomic bits, boots the other tasklets
/// and calls `main`.
pub(crate) const BOOTSTRAP: &str = "__bootstrap";

/// The routine called `name`, if the SDK's runtime has one.
pub(crate) fn find(name: &str) -> Option<&'static SdkRoutine> {
    ROUTINES.binary_search_by(|routine| routine.name.cmp(name)).ok().map(|index| &ROUTINES[index])
}

/// Every routine, sorted by name.
#[rustfmt::skip]
const ROUTINES: &[SdkRoutine] = &[
    routine("__absvdi2", 17, &["compilerrt_abort_impl"]),  // absvdi2.c
    routine("__absvsi2", 13, &["compilerrt_abort_impl"]),  // absvsi2.c
    routine("__adddf3", 253, &[]),  // adddf3.c
    routine("__addsf3", 125, &[]),  // addsf3.c
    routine("__addvdi3", 22, &["compilerrt_abort_impl"]),  // addvdi3.c
    routine("__addvsi3", 16, &["compilerrt_abort_impl"]),  // addvsi3.c
    routine("__ashldi3", 17, &[]),  // ashldi3.c
    routine("__ashrdi3", 17, &[]),  // ashrdi3.c
    routine("__bootstrap", 11, &[]),  // crt0.o
    routine("__bswapdi2", 3, &[]),  // bswapdi2.c
    routine("__bswapsi2", 3, &[]),  // bswapsi2.c
    routine("__close_print_sequence", 2, &[]),  // stdio.c
    routine("__clzdi2", 13, &[]),  // clzdi2.c
    routine("__clzsi2", 32, &[]),  // clzsi2.c
    routine("__cmpdf2", 0, &["__ledf2"]),  // comparedf2.c
    routine("__cmpdi2", 14, &[]),  // cmpdi2.c
    routine("__cmpsf2", 0, &["__lesf2"]),  // comparesf2.c
    routine("__ctzdi2", 13, &[]),  // ctzdi2.c
    routine("__ctzsi2", 29, &[]),  // ctzsi2.c
    routine("__div32", 30, &["__udiv32"]),  // div32.c
    routine("__divdf3", 293, &["__muldi3"]),  // divdf3.c
    routine("__divdi3", 34, &["__udiv64"]),  // divdi3.c
    routine("__divmodsi4", 9, &["__div32"]),  // divmodsi4.c
    routine("__divsf3", 137, &["__muldi3", "__mulsi3"]),  // divsf3.c
    routine("__divsi3", 16, &["__udiv32"]),  // divsi3.c
    routine("__dpu_sync_fetch_and_add_1", 7, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_add_2", 7, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_add_4", 7, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_add_8", 8, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_and_1", 7, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_and_2", 7, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_and_4", 7, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_and_8", 8, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_max_1", 9, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_max_2", 9, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_max_4", 9, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_max_8", 10, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_min_1", 9, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_min_2", 9, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_min_4", 9, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_min_8", 10, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_nand_1", 7, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_nand_2", 7, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_nand_4", 7, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_nand_8", 10, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_or_1", 7, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_or_2", 7, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_or_4", 7, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_or_8", 8, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_sub_1", 7, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_sub_2", 7, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_sub_4", 7, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_sub_8", 8, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_umax_1", 10, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_umax_2", 10, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_umax_4", 9, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_umax_8", 10, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_umin_1", 10, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_umin_2", 10, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_umin_4", 9, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_umin_8", 10, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_xor_1", 7, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_xor_2", 7, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_xor_4", 7, &[]),  // atomics.c
    routine("__dpu_sync_fetch_and_xor_8", 8, &[]),  // atomics.c
    routine("__dpu_sync_lock_test_and_set_1", 6, &[]),  // atomics.c
    routine("__dpu_sync_lock_test_and_set_2", 6, &[]),  // atomics.c
    routine("__dpu_sync_lock_test_and_set_4", 6, &[]),  // atomics.c
    routine("__dpu_sync_lock_test_and_set_8", 6, &[]),  // atomics.c
    routine("__dpu_sync_val_compare_and_swap_1", 8, &[]),  // atomics.c
    routine("__dpu_sync_val_compare_and_swap_2", 8, &[]),  // atomics.c
    routine("__dpu_sync_val_compare_and_swap_4", 7, &[]),  // atomics.c
    routine("__dpu_sync_val_compare_and_swap_8", 8, &[]),  // atomics.c
    routine("__eqdf2", 34, &[]),  // comparedf2.c
    routine("__eqsf2", 19, &[]),  // comparesf2.c
    routine("__extendhfsf2", 25, &[]),  // extendhfsf2.c
    routine("__extendsfdf2", 47, &[]),  // extendsfdf2.c
    routine("__ffsdi2", 14, &[]),  // ffsdi2.c
    routine("__ffssi2", 8, &[]),  // ffssi2.c
    routine("__finalized_print_sequence", 18, &["__transfer_cache_to_mram", "memset"]),  // stdio.c
    routine("__fixdfdi", 21, &["__fixunsdfdi", "__ltdf2"]),  // fixdfdi.c
    routine("__fixdfsi", 35, &[]),  // fixdfsi.c
    routine("__fixsfdi", 18, &["__fixunssfdi", "__ltsf2"]),  // fixsfdi.c
    routine("__fixsfsi", 27, &["__mulsi3"]),  // fixsfsi.c
    routine("__fixunsdfdi", 34, &["__adddf3", "__fixunsdfsi", "__floatunsidf", "__ledf2", "__muldf3"]),  // fixunsdfdi.c
    routine("__fixunsdfsi", 24, &[]),  // fixunsdfsi.c
    // fixunssfdi.c
    routine("__fixunssfdi", 38, &["__adddf3", "__extendsfdf2", "__fixunsdfsi", "__floatunsidf", "__lesf2", "__muldf3"]),
    routine("__fixunssfsi", 18, &[]),  // fixunssfsi.c
    routine("__floatdidf", 20, &["__adddf3", "__floatsidf", "__muldf3"]),  // floatdidf.c
    routine("__floatdisf", 78, &[]),  // floatdisf.c
    routine("__floatsidf", 31, &[]),  // floatsidf.c
    routine("__floatsisf", 30, &[]),  // floatsisf.c
    routine("__floatundidf", 19, &["__adddf3"]),  // floatundidf.c
    routine("__floatundisf", 70, &[]),  // floatundisf.c
    routine("__floatunsidf", 21, &[]),  // floatunsidf.c
    routine("__floatunsisf", 25, &[]),  // floatunsisf.c
    routine("__gedf2", 33, &[]),  // comparedf2.c
    routine("__gesf2", 17, &[]),  // comparesf2.c
    routine("__gnu_f2h_ieee", 5, &["__truncsfhf2"]),  // truncsfhf2.c
    routine("__gnu_h2f_ieee", 5, &["__extendhfsf2"]),  // extendhfsf2.c
    routine("__gtdf2", 31, &[]),  // comparedf2.c
    routine("__gtsf2", 16, &[]),  // comparesf2.c
    routine("__ledf2", 36, &[]),  // comparedf2.c
    routine("__lesf2", 20, &[]),  // comparesf2.c
    routine("__lshrdi3", 17, &[]),  // lshrdi3.c
    routine("__ltdf2", 34, &[]),  // comparedf2.c
    routine("__ltsf2", 19, &[]),  // comparesf2.c
    routine("__memcpy_mm", 169, &["memcpy"]),  // memcpy.c
    routine("__memcpy_mw", 101, &["memcpy"]),  // memcpy.c
    routine("__memcpy_wm", 65, &["memcpy"]),  // memcpy.c
    routine("__memcpy_wram_4align", 8, &[]),  // memcpy.c
    routine("__memmove_mm", 166, &["__memcpy_mm", "memcpy"]),  // memmove.c
    routine("__memset_mram", 42, &[]),  // memset.c
    routine("__memset_mram_8align", 14, &[]),  // memset.c
    routine("__memset_wram_4align", 10, &[]),  // memset.c
    routine("__moddi3", 34, &["__udiv64"]),  // moddi3.c
    routine("__modsi3", 6, &["__div32"]),  // modsi3.c
    routine("__muldc3", 310, &["__adddf3", "__eqdf2", "__muldf3", "__nedf2", "__subdf3", "__unorddf2"]),  // muldc3.c
    routine("__muldf3", 270, &["__muldi3"]),  // muldf3.c
    routine("__muldi3", 123, &[]),  // mul64.c
    routine("__mulodi4", 65, &["__divdi3", "__muldi3", "__udivdi3"]),  // mulodi4.c
    routine("__mulosi4", 40, &["__div32", "__mulsi3", "__udiv32"]),  // mulosi4.c
    routine("__mulsf3", 96, &["__muldi3"]),  // mulsf3.c
    routine("__mulsi3", 40, &[]),  // mul32.c
    routine("__mulvdi3", 77, &["__divdi3", "__muldi3", "__udivdi3", "compilerrt_abort_impl"]),  // mulvdi3.c
    routine("__mulvsi3", 52, &["__div32", "__mulsi3", "__udiv32", "compilerrt_abort_impl"]),  // mulvsi3.c
    routine("__nedf2", 34, &[]),  // comparedf2.c
    routine("__negdf2", 3, &[]),  // negdf2.c
    routine("__negdi2", 4, &[]),  // negdi2.c
    routine("__negsf2", 2, &[]),  // negsf2.c
    routine("__negvdi2", 15, &["compilerrt_abort_impl"]),  // negvdi2.c
    routine("__negvsi2", 11, &["compilerrt_abort_impl"]),  // negvsi2.c
    routine("__nesf2", 19, &[]),  // comparesf2.c
    routine("__open_print_sequence", 8, &[]),  // stdio.c
    routine("__paritydi2", 9, &["__paritysi2"]),  // paritydi2.c
    routine("__paritysi2", 11, &[]),  // paritysi2.c
    routine("__popcountdi2", 30, &[]),  // popcountdi2.c
    routine("__popcountsi2", 13, &[]),  // popcountsi2.c
    routine("__powidf2", 45, &["__divdf3", "__muldf3"]),  // powidf2.c
    routine("__powisf2", 40, &["__divsf3", "__mulsf3"]),  // powisf2.c
    routine("__subdf3", 7, &["__adddf3"]),  // subdf3.c
    routine("__subsf3", 6, &["__addsf3"]),  // subsf3.c
    routine("__subvdi3", 22, &["compilerrt_abort_impl"]),  // subvdi3.c
    routine("__subvsi3", 17, &["compilerrt_abort_impl"]),  // subvsi3.c
    routine("__sys_internal_listener_loop", 45, &[]),  // listener.c
    routine("__transfer_cache_to_mram", 16, &[]),  // stdio.c
    routine("__truncdfhf2", 81, &[]),  // truncdfhf2.c
    routine("__truncdfsf2", 82, &[]),  // truncdfsf2.c
    routine("__truncsfhf2", 51, &[]),  // truncsfhf2.c
    routine("__ucmpdi2", 14, &[]),  // ucmpdi2.c
    routine("__udiv32", 42, &[]),  // udiv32.c
    routine("__udiv64", 55, &[]),  // udiv64.c
    routine("__udivdi3", 6, &["__udiv64"]),  // udivdi3.c
    routine("__udivmodsi4", 9, &["__udiv32"]),  // udivmodsi4.c
    routine("__udivsi3", 35, &[]),  // udivsi3.c
    routine("__umoddi3", 6, &["__udiv64"]),  // umoddi3.c
    routine("__umodsi3", 6, &["__udiv32"]),  // umodsi3.c
    routine("__unorddf2", 12, &[]),  // comparedf2.c
    routine("__unordsf2", 7, &[]),  // comparesf2.c
    routine("__write_byte_and_flush_if_needed", 12, &["__transfer_cache_to_mram"]),  // stdio.c
    routine("abort", 1, &[]),  // abort.c
    routine("atoi", 28, &[]),  // atoi.c
    routine("atol", 38, &[]),  // atol.c
    routine("barrier_wait", 31, &[]),  // barrier.c
    routine("buddy_alloc", 7, &["safe_buddy_alloc"]),  // buddy_alloc.c
    routine("buddy_free", 7, &["safe_buddy_free"]),  // buddy_alloc.c
    routine("buddy_init", 32, &["mem_alloc", "memset"]),  // buddy_alloc.c
    // buddy_realloc.c
    routine("buddy_realloc", 49, &["buddy_search_for_pointer", "memcpy", "safe_buddy_alloc", "safe_buddy_free"]),
    routine("buddy_reset", 17, &["memset"]),  // buddy_alloc.c
    routine("buddy_search_for_pointer", 46, &[]),  // buddy_alloc.c
    routine("check_stack", 7, &[]),  // defs.c
    routine("compilerrt_abort_impl", 3, &["abort"]),  // int_util.c
    routine("exit", 1, &[]),  // exit.c
    routine("fsb_alloc", 32, &["__mulsi3", "mem_alloc"]),  // fsb_allocator.c
    routine("fsb_free", 6, &[]),  // fsb_allocator.c
    routine("fsb_get", 11, &[]),  // fsb_allocator.c
    routine("handshake_notify", 17, &[]),  // handshake.c
    routine("handshake_wait_for", 26, &[]),  // handshake.c
    routine("input_fifo_peek", 14, &["__mulsi3"]),  // wramfifo.c
    routine("input_fifo_pop", 5, &[]),  // wramfifo.c
    routine("is_input_fifo_empty", 5, &[]),  // wramfifo.c
    routine("is_output_fifo_full", 20, &[]),  // wramfifo.c
    routine("mem_alloc", 7, &["mem_alloc_nolock"]),  // alloc.c
    routine("mem_alloc_nolock", 11, &[]),  // alloc.c
    routine("mem_reset", 5, &[]),  // alloc.c
    routine("memchr", 10, &[]),  // memchr.c
    routine("memcmp", 11, &[]),  // memcmp.c
    routine("memcpy", 45, &[]),  // memcpy.c
    routine("memmove", 62, &["memcpy"]),  // memmove.c
    routine("memset", 35, &[]),  // memset.c
    routine("mram_read_unaligned", 10, &[]),  // mram_unaligned.c
    routine("mram_write_unaligned", 132, &[]),  // mram_unaligned.c
    routine("output_fifo_cede", 4, &[]),  // wramfifo.c
    routine("output_fifo_push", 26, &["__mulsi3", "memcpy"]),  // wramfifo.c
    routine("output_fifo_reserve", 4, &[]),  // wramfifo.c
    routine("perfcounter_config", 10, &[]),  // perfcounter.c
    routine("perfcounter_get", 6, &[]),  // perfcounter.c
    // stdio.c
    routine("printf", 179, &["__close_print_sequence", "__finalized_print_sequence", "__open_print_sequence",
        "__write_byte_and_flush_if_needed"]),
    routine("process_inputs_all_tasklets", 91, &["__mulsi3", "barrier_wait", "memcpy"]),  // wramfifo.c
    routine("process_inputs_each_tasklet", 135, &["__mulsi3", "memcpy"]),  // wramfifo.c
    // stdio.c
    routine("putchar", 18, &["__close_print_sequence", "__finalized_print_sequence", "__open_print_sequence",
        "__write_byte_and_flush_if_needed"]),
    // stdio.c
    routine("puts", 28, &["__close_print_sequence", "__finalized_print_sequence", "__open_print_sequence",
        "__write_byte_and_flush_if_needed"]),
    routine("safe_buddy_alloc", 114, &[]),  // buddy_alloc.c
    routine("safe_buddy_free", 77, &[]),  // buddy_alloc.c
    routine("sem_give", 16, &[]),  // sem.c
    routine("sem_take", 22, &[]),  // sem.c
    routine("seqread1024_alloc", 15, &["mem_alloc_nolock"]),  // seqread1024.c
    routine("seqread1024_get", 8, &[]),  // seqread1024.c
    routine("seqread1024_init", 11, &[]),  // seqread1024.c
    routine("seqread1024_seek", 10, &[]),  // seqread1024.c
    routine("seqread1024_tell", 4, &[]),  // seqread1024.c
    routine("seqread128_alloc", 15, &["mem_alloc_nolock"]),  // seqread128.c
    routine("seqread128_get", 8, &[]),  // seqread128.c
    routine("seqread128_init", 11, &[]),  // seqread128.c
    routine("seqread128_seek", 10, &[]),  // seqread128.c
    routine("seqread128_tell", 4, &[]),  // seqread128.c
    routine("seqread256_alloc", 15, &["mem_alloc_nolock"]),  // seqread256.c
    routine("seqread256_get", 8, &[]),  // seqread256.c
    routine("seqread256_init", 11, &[]),  // seqread256.c
    routine("seqread256_seek", 10, &[]),  // seqread256.c
    routine("seqread256_tell", 4, &[]),  // seqread256.c
    routine("seqread32_alloc", 15, &["mem_alloc_nolock"]),  // seqread32.c
    routine("seqread32_get", 8, &[]),  // seqread32.c
    routine("seqread32_init", 11, &[]),  // seqread32.c
    routine("seqread32_seek", 10, &[]),  // seqread32.c
    routine("seqread32_tell", 4, &[]),  // seqread32.c
    routine("seqread512_alloc", 15, &["mem_alloc_nolock"]),  // seqread512.c
    routine("seqread512_get", 8, &[]),  // seqread512.c
    routine("seqread512_init", 11, &[]),  // seqread512.c
    routine("seqread512_seek", 10, &[]),  // seqread512.c
    routine("seqread512_tell", 4, &[]),  // seqread512.c
    routine("seqread64_alloc", 15, &["mem_alloc_nolock"]),  // seqread64.c
    routine("seqread64_get", 8, &[]),  // seqread64.c
    routine("seqread64_init", 11, &[]),  // seqread64.c
    routine("seqread64_seek", 10, &[]),  // seqread64.c
    routine("seqread64_tell", 4, &[]),  // seqread64.c
    routine("stpcpy", 10, &[]),  // stpcpy.c
    routine("stpncpy", 24, &["memset"]),  // stpncpy.c
    routine("strcat", 26, &["strlen"]),  // strcat.c
    routine("strchr", 14, &[]),  // strchr.c
    routine("strcmp", 16, &[]),  // strcmp.c
    routine("strcpy", 12, &[]),  // strcpy.c
    routine("strcspn", 24, &[]),  // strcspn.c
    routine("strdup", 19, &["buddy_alloc", "memcpy", "strlen"]),  // strdup.c
    routine("strerror", 8, &[]),  // strerror.c
    routine("strlen", 7, &[]),  // strlen.c
    routine("strlwr", 12, &[]),  // strlwr.c
    routine("strncat", 28, &["strlen"]),  // strncat.c
    routine("strncmp", 12, &[]),  // strncmp.c
    routine("strncpy", 23, &["memset"]),  // strncpy.c
    routine("strndup", 21, &["buddy_alloc", "memcpy", "strnlen"]),  // strndup.c
    routine("strnlen", 10, &[]),  // strnlen.c
    routine("strpbrk", 13, &["strcspn"]),  // strpbrk.c
    routine("strrchr", 10, &[]),  // strrchr.c
    routine("strrev", 20, &["strlen"]),  // strrev.c
    routine("strsep", 17, &["strpbrk"]),  // strsep.c
    routine("strspn", 25, &[]),  // strspn.c
    routine("strstr", 23, &[]),  // strstr.c
    routine("strtok_r", 35, &["strcspn", "strspn"]),  // strtok_r.c
    routine("strupr", 12, &[]),  // strupr.c
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_every_call_is_in_it() {
        assert!(ROUTINES.windows(2).all(|pair| pair[0].name < pair[1].name));
        for routine in ROUTINES {
            for call in routine.calls {
                assert!(find(call).is_some(), "{} calls {call}, which is not in the table", routine.name);
            }
        }
    }

    #[test]
    fn sizes_are_the_sdk_objects() {
        assert_eq!(find("__mulsi3").map(|routine| routine.instructions), Some(40));
        assert_eq!(find(BOOTSTRAP).map(|routine| routine.instructions), Some(11));
        assert_eq!(find("__cmpsf2").map(|routine| (routine.instructions, routine.calls)), Some((0, &["__lesf2"][..])));
        assert!(find("__dpusim_barrier_wait").is_none());
    }
}
