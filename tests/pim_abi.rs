//! The Rust mirror of `dpu/spmm_args.h` (`pimgnn::pim::abi`) against the header itself: a C probe compiled by
//! the host's C compiler prints every size, field offset and constant, and each must match.

use std::collections::HashMap;
use std::mem::{offset_of, size_of};
use std::path::Path;
use std::process::Command;

use pimgnn::pim::abi::{
    AttentionColumn, AttentionRow, CallArgs, CooIndex, MatrixArgs, TaskletWork, ATTENTION_EXP2_BITS,
    ATTENTION_EXP2_ENTRIES, ATTENTION_FRACTION_BITS, EDGE_FIRST, EDGE_LAST, FEATURE_CHUNK, MAX_PARTIALS, MAX_TASKLETS,
    MODE_ATTENTION, MODE_SDDMM, MODE_SPMM, READ_ENTRIES, RESULT_BUFFER,
};

/// `(name, C expression, Rust value)` for every fact checked.
fn expected() -> Vec<(&'static str, &'static str, usize)> {
    macro_rules! field {
        ($c:literal, $rust:ty, $field:ident) => {
            (
                concat!($c, ".", stringify!($field)),
                concat!("offsetof(struct ", $c, ", ", stringify!($field), ")"),
                offset_of!($rust, $field),
            )
        };
    }
    vec![
        ("SPMM_MAX_TASKLETS", "SPMM_MAX_TASKLETS", MAX_TASKLETS),
        ("SPMM_FEATURE_CHUNK", "SPMM_FEATURE_CHUNK", FEATURE_CHUNK),
        ("SPMM_MAX_PARTIALS", "SPMM_MAX_PARTIALS", MAX_PARTIALS),
        ("SPMM_READ_ENTRIES", "SPMM_READ_ENTRIES", READ_ENTRIES),
        ("SPMM_MODE_SPMM", "SPMM_MODE_SPMM", MODE_SPMM as usize),
        ("SPMM_MODE_SDDMM", "SPMM_MODE_SDDMM", MODE_SDDMM as usize),
        ("SDDMM_EDGE_FIRST", "SDDMM_EDGE_FIRST", EDGE_FIRST),
        ("SDDMM_EDGE_LAST", "SDDMM_EDGE_LAST", EDGE_LAST),
        ("SDDMM_RESULT_BUFFER", "SDDMM_RESULT_BUFFER", RESULT_BUFFER),
        ("sizeof spmm_value", "sizeof(spmm_value)", 4),
        ("sizeof spmm_tasklet_work", "sizeof(struct spmm_tasklet_work)", size_of::<TaskletWork>()),
        field!("spmm_tasklet_work", TaskletWork, nz_begin),
        field!("spmm_tasklet_work", TaskletWork, nz_end),
        field!("spmm_tasklet_work", TaskletWork, row_begin),
        field!("spmm_tasklet_work", TaskletWork, row_end),
        field!("spmm_tasklet_work", TaskletWork, nr_partials),
        field!("spmm_tasklet_work", TaskletWork, partial_rows),
        field!("spmm_tasklet_work", TaskletWork, wide_begin),
        ("sizeof spmm_matrix_args", "sizeof(struct spmm_matrix_args)", size_of::<MatrixArgs>()),
        field!("spmm_matrix_args", MatrixArgs, nr_rows),
        field!("spmm_matrix_args", MatrixArgs, nr_nonzeros),
        field!("spmm_matrix_args", MatrixArgs, row_ptr_offset),
        field!("spmm_matrix_args", MatrixArgs, indices_offset),
        field!("spmm_matrix_args", MatrixArgs, values_offset),
        field!("spmm_matrix_args", MatrixArgs, nr_tasklets),
        field!("spmm_matrix_args", MatrixArgs, nr_x_rows),
        field!("spmm_matrix_args", MatrixArgs, wide_rows_offset),
        field!("spmm_matrix_args", MatrixArgs, nr_wide_rows),
        field!("spmm_matrix_args", MatrixArgs, tasklets),
        ("sizeof spmm_call_args", "sizeof(struct spmm_call_args)", size_of::<CallArgs>()),
        field!("spmm_call_args", CallArgs, nr_features),
        field!("spmm_call_args", CallArgs, x_offset),
        field!("spmm_call_args", CallArgs, y_offset),
        field!("spmm_call_args", CallArgs, partials_offset),
        field!("spmm_call_args", CallArgs, mode),
        field!("spmm_call_args", CallArgs, p_offset),
        field!("spmm_call_args", CallArgs, out_offset),
        field!("spmm_call_args", CallArgs, edges_offset),
        field!("spmm_call_args", CallArgs, head_features),
        field!("spmm_call_args", CallArgs, values_offset),
        field!("spmm_call_args", CallArgs, values_stride),
        field!("spmm_call_args", CallArgs, column_scores_offset),
        field!("spmm_call_args", CallArgs, column_scores_stride),
        field!("spmm_call_args", CallArgs, row_scores_offset),
        field!("spmm_call_args", CallArgs, row_scores_stride),
        field!("spmm_call_args", CallArgs, y_narrow),
        field!("spmm_call_args", CallArgs, y_wide_offset),
        field!("spmm_call_args", CallArgs, x_per_nonzero),
        field!("spmm_call_args", CallArgs, x_unit_stride),
        ("SPMM_MODE_ATTENTION", "SPMM_MODE_ATTENTION", MODE_ATTENTION as usize),
        ("ATTENTION_FRACTION_BITS", "ATTENTION_FRACTION_BITS", ATTENTION_FRACTION_BITS as usize),
        ("ATTENTION_EXP2_BITS", "ATTENTION_EXP2_BITS", ATTENTION_EXP2_BITS as usize),
        ("ATTENTION_EXP2_ENTRIES", "ATTENTION_EXP2_ENTRIES", ATTENTION_EXP2_ENTRIES),
        ("sizeof attention_column", "sizeof(struct attention_column)", size_of::<AttentionColumn>()),
        field!("attention_column", AttentionColumn, source),
        field!("attention_column", AttentionColumn, sloped),
        ("sizeof attention_row", "sizeof(struct attention_row)", size_of::<AttentionRow>()),
        field!("attention_row", AttentionRow, threshold),
        field!("attention_row", AttentionRow, above),
        field!("attention_row", AttentionRow, below),
        field!("attention_row", AttentionRow, reserved),
        ("sizeof spmm_coo_index", "sizeof(struct spmm_coo_index)", size_of::<CooIndex>()),
        field!("spmm_coo_index", CooIndex, row),
        field!("spmm_coo_index", CooIndex, column),
    ]
}

#[test]
fn rust_mirror_matches_the_header() {
    let facts = expected();
    let dir = tempfile::tempdir().unwrap();
    let mut probe =
        String::from("#include <stddef.h>\n#include <stdio.h>\n#include \"spmm_args.h\"\nint main(void) {\n");
    for (name, expression, _) in &facts {
        probe.push_str(&format!("    printf(\"%s %zu\\n\", \"{name}\", (size_t)({expression}));\n"));
    }
    probe.push_str("    return 0;\n}\n");
    let source = dir.path().join("probe.c");
    let binary = dir.path().join("probe");
    std::fs::write(&source, probe).unwrap();
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("dpu");
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let status = Command::new(&compiler).arg("-I").arg(&include).arg(&source).arg("-o").arg(&binary).status();
    assert!(status.is_ok_and(|s| s.success()), "compiling the probe with {compiler}");
    let output = Command::new(&binary).output().unwrap();
    let printed: HashMap<String, usize> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let (name, value) = line.rsplit_once(' ').unwrap();
            (name.to_owned(), value.parse().unwrap())
        })
        .collect();
    for (name, _, rust) in facts {
        assert_eq!(printed[name], rust, "{name}: header says {}, Rust says {rust}", printed[name]);
    }
}
