# Puts the simulator's UPMEM toolchain on PATH, like the SDK's upmem_env.sh:
#
#     source fallback_sim/upmem_env.sh
#
# builds (release) and exposes `dpu-upmem-dpurte-clang` (DPU C -> simulated DPU binary, or DPU objects with -c),
# `dpu-pkg-config` (answers `--cflags --libs dpu` with this simulator's dpu.h and libdpu), `libdpu.so`, and a
# `clang` that builds `--target=dpu-upmem-dpurte` for the simulator and passes any other command line to the host's
# clang (the SDK's environment puts its own DPU-capable clang on PATH, and makefiles call it so), and selects the
# simulator backend. Unchanged UPMEM makefiles and host programs then build and run without hardware.

_upmem_sim_root=$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)
if cargo build --release --quiet --manifest-path "$_upmem_sim_root/Cargo.toml" \
    -p upmem-sim-sdk --lib --bins; then
    _upmem_sim_bin=$(cargo metadata --format-version 1 --no-deps --manifest-path "$_upmem_sim_root/Cargo.toml" |
        sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')/release
    ln -sf upmem-sim-clang "$_upmem_sim_bin/clang"
    export PATH="$_upmem_sim_bin${PATH:+:$PATH}"
    export LD_LIBRARY_PATH="$_upmem_sim_bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export UPMEM_PROFILE_BASE="backend=simulator"
    unset _upmem_sim_bin
else
    echo "upmem_env.sh: building the simulator's toolchain failed" >&2
fi
unset _upmem_sim_root
