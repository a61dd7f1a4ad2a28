//! The runtime headers make visible what the UPMEM SDK 2025.1's same-named headers do: each of those includes
//! other headers (`<alloc.h>` includes `<attributes.h>`, so `__mram_ptr` is known to a kernel that includes only
//! `<alloc.h>`), and a kernel may use what they declare. For every header, a kernel source that includes only that
//! header uses a name of each header the SDK's includes, directly or through others.

use upmem_sim::{KernelBuilder, SimulatedBuild as _};

/// Each runtime header, and the headers its SDK 2025.1 version includes directly or through others, as
/// `share/upmem/include/{syslib,stdlib}` have them (`<assert.h>`'s when `NDEBUG` is not defined). The headers
/// that include nothing are left out.
const SDK_INCLUDES: &[(&str, &[&str])] = &[
    ("alloc.h", &["attributes.h", "buddy_alloc.h", "fsb_allocator.h", "stddef.h"]),
    ("assert.h", &["dpu_characteristics.h", "dpufault.h", "macro_utils.h"]),
    ("atomic_bit.h", &["attributes.h", "dpu_characteristics.h", "limits.h", "macro_utils.h", "stdint.h"]),
    ("barrier.h", &["atomic_bit.h", "attributes.h", "dpu_characteristics.h", "limits.h", "macro_utils.h", "stdint.h"]),
    ("buddy_alloc.h", &["stddef.h"]),
    ("defs.h", &["attributes.h", "dpu_characteristics.h", "dpufault.h", "macro_utils.h", "sysdef.h"]),
    (
        "dpuruntime.h",
        &["built_ins.h", "dpu_characteristics.h", "dpuconst.h", "dpufault.h", "limits.h", "macro_utils.h", "stdint.h"],
    ),
    ("errno.h", &["attributes.h", "defs.h", "dpu_characteristics.h", "dpufault.h", "macro_utils.h", "sysdef.h"]),
    ("handshake.h", &["sysdef.h"]),
    ("inttypes.h", &["limits.h", "stdint.h"]),
    ("macro_utils.h", &["dpu_characteristics.h"]),
    ("mram.h", &["attributes.h", "dpu_characteristics.h", "limits.h", "stdint.h"]),
    (
        "mram_unaligned.h",
        &[
            "assert.h",
            "atomic_bit.h",
            "attributes.h",
            "dpu_characteristics.h",
            "dpufault.h",
            "limits.h",
            "macro_utils.h",
            "mram.h",
            "mutex.h",
            "stdbool.h",
            "stdint.h",
            "sysdef.h",
            "vmutex.h",
        ],
    ),
    (
        "mutex.h",
        &[
            "atomic_bit.h",
            "attributes.h",
            "dpu_characteristics.h",
            "limits.h",
            "macro_utils.h",
            "stdbool.h",
            "stdint.h",
            "sysdef.h",
        ],
    ),
    (
        "mutex_pool.h",
        &[
            "assert.h",
            "atomic_bit.h",
            "attributes.h",
            "dpu_characteristics.h",
            "dpufault.h",
            "limits.h",
            "macro_utils.h",
            "mutex.h",
            "stdbool.h",
            "stdint.h",
            "sysdef.h",
        ],
    ),
    ("perfcounter.h", &["limits.h", "stdbool.h", "stdint.h"]),
    ("profiling.h", &["attributes.h", "dpu_characteristics.h", "limits.h", "profiling_internals.h", "stdint.h"]),
    ("sem.h", &["atomic_bit.h", "attributes.h", "dpu_characteristics.h", "limits.h", "macro_utils.h", "stdint.h"]),
    ("seqread.h", &["attributes.h", "dpu_characteristics.h", "limits.h", "macro_utils.h", "mram.h", "stdint.h"]),
    ("stdint.h", &["limits.h"]),
    ("stdio.h", &["attributes.h", "stddef.h"]),
    ("stdlib.h", &["attributes.h", "stddef.h"]),
    ("string.h", &["stddef.h"]),
    (
        "vmutex.h",
        &[
            "assert.h",
            "atomic_bit.h",
            "attributes.h",
            "dpu_characteristics.h",
            "dpufault.h",
            "limits.h",
            "macro_utils.h",
            "mutex.h",
            "stdbool.h",
            "stdint.h",
            "sysdef.h",
        ],
    ),
];

/// A file-scope use of a name that the header itself declares (not one of its includes), named after it.
const NAME_OF: &[(&str, &str)] = &[
    ("assert.h", "static_assert(1, \"assert.h\");"),
    ("atomic_bit.h", "ATOMIC_BIT_INIT(atomic_bit_h);"),
    ("attributes.h", "typedef __mram_ptr char *attributes_h;"),
    ("buddy_alloc.h", "_Static_assert(sizeof(&buddy_alloc) > 0, \"buddy_alloc.h\");"),
    ("built_ins.h", "#ifndef __builtin_clz_rr\n#error \"built_ins.h\"\n#endif"),
    ("defs.h", "typedef __typeof__(me()) defs_h;"),
    ("dpu_characteristics.h", "_Static_assert(DPU_NR_THREADS == 24, \"dpu_characteristics.h\");"),
    ("dpuconst.h", "_Static_assert(__DPU_NUMBER_OF_THREADS == 24, \"dpuconst.h\");"),
    ("dpufault.h", "_Static_assert(__FAULT_ASSERT_FAILED__ == 3, \"dpufault.h\");"),
    ("fsb_allocator.h", "_Static_assert(sizeof(&fsb_alloc) > 0, \"fsb_allocator.h\");"),
    ("limits.h", "_Static_assert(CHAR_BIT == 8 && INT_MAX > 0, \"limits.h\");"),
    ("macro_utils.h", "_Static_assert(sizeof(__STR(dpu)) == 4, \"macro_utils.h\");"),
    ("mram.h", "typedef __typeof__(DPU_MRAM_HEAP_POINTER) mram_h;"),
    ("mutex.h", "typedef mutex_id_t mutex_h;"),
    ("profiling_internals.h", "typedef dpu_profiling_t profiling_internals_h;"),
    ("stdbool.h", "_Static_assert(true, \"stdbool.h\");"),
    ("stddef.h", "typedef ptrdiff_t stddef_h;"),
    ("stdint.h", "typedef uint_least16_t stdint_h;"),
    ("sysdef.h", "typedef sysname_t sysdef_h;"),
    ("vmutex.h", "typedef struct vmutex vmutex_h;"),
];

fn name_of(header: &str) -> &'static str {
    NAME_OF
        .iter()
        .find(|(named, _)| *named == header)
        .map(|(_, name)| *name)
        .unwrap_or_else(|| panic!("no name of {header} to use"))
}

/// The kernel source that includes only `header` and uses a name of each header in `includes`.
fn kernel_source(header: &str, includes: &[&str]) -> String {
    let mut source = format!("/* Includes only <{header}>, and uses a name of each header the SDK's includes. */\n");
    source.push_str(&format!("#include <{header}>\n\n"));
    for included in includes {
        source.push_str(&format!("/* {included} */\n{}\n", name_of(included)));
    }
    source
}

#[test]
fn every_header_makes_visible_what_the_sdks_includes_do() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let builder = KernelBuilder::new().flag("-O2").flag("-Wall").flag("-Werror").clone();
    let failures: Vec<String> = SDK_INCLUDES
        .iter()
        .filter_map(|(header, includes)| {
            let source = dir.path().join(format!("{}.c", header.replace('.', "_")));
            std::fs::write(&source, kernel_source(header, includes)).expect("writing a kernel source");
            let object = source.with_extension("o");
            builder.compile_object(&source, &object).err().map(|error| format!("<{header}>: {error}"))
        })
        .collect();
    assert!(failures.is_empty(), "{} of {} headers:\n{}", failures.len(), SDK_INCLUDES.len(), failures.join("\n\n"));
}
