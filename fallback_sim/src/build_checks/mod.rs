//! Checks made when a kernel is built, for what works on the simulator but not on a DPU:
//!
//! - **Layouts shared with the host.** A `__host` variable, or an MRAM variable (which the host reaches by name
//!   as well), whose type holds a pointer, a `size_t`, a `uintptr_t`, ... is larger in a simulated kernel (LP64)
//!   than on a DPU, so the bytes the host writes land elsewhere on one of them. The kernel's DWARF gives the
//!   host compiler's layout ([`debug_info`]); [`dpu_abi`] lays the same types out for a DPU.
//! - **IRAM.** A DPU holds 4,096 instructions (3,968 on v1B: [`ChipVersion::iram_instructions`]); a larger program does not load. [`iram`]
//!   estimates the program's size.
//!
//! What is found is a build warning ([`BuildWarning`]), and is recorded in the binary (section
//! `.dpusim.checks`, [`RecordedChecks`]) so that strict mode refuses the program when it is loaded.

mod c_types;
mod debug_info;
mod dpu_abi;
mod iram;
mod sdk_routines;

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use object::{Object, ObjectSection, ObjectSymbol, SymbolKind};

use crate::block_costs::BlockCost;
use crate::builder::{BuildError, CompilerFamily};
use dpu_abi::{Abi, Layouts, Unmodelled};
use upmem_types::ChipVersion;

/// The section of a simulated DPU binary that holds what its build checks found.
pub(crate) const SECTION: &str = ".dpusim.checks";

/// Where in a kernel's sources something is declared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceLocation {
    /// The source file, as the compiler was given it.
    pub file: String,
    /// The line.
    pub line: u64,
}

impl fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// A program's estimated size in DPU instructions: its own code, and the SDK runtime routines it links (the
/// boot code, the compiler runtime's arithmetic, and the runtime functions it calls).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct IramEstimate {
    /// The kernel's own code, estimated from the host compiler's (see [`KernelBuilder`](crate::KernelBuilder)).
    pub kernel_instructions: u32,
    /// Each SDK routine the program links, with its size in the SDK 2025.1's runtime.
    pub runtime_routines: Vec<(&'static str, u32)>,
    /// The chip the program is built for, whose IRAM bounds it.
    pub chip: ChipVersion,
    /// The family of the host compiler whose code the kernel's part is estimated from (gcc's counts more than
    /// clang's: [`CompilerFamily`]).
    pub compiler: CompilerFamily,
}

impl IramEstimate {
    /// The SDK routines' instructions.
    pub fn runtime_instructions(&self) -> u32 {
        self.runtime_routines.iter().map(|&(_, instructions)| instructions).sum()
    }

    /// The whole program's instructions.
    pub fn instructions(&self) -> u32 {
        self.kernel_instructions + self.runtime_instructions()
    }

    /// Whether the program fits the IRAM of its chip's DPUs.
    pub fn fits(&self) -> bool {
        self.instructions() <= self.chip.iram_instructions()
    }
}

/// A member of a shared variable whose place or size differs between a simulated kernel and a DPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberDifference {
    /// Its path from the variable: `buffer`, `header.count`, `[0].next` (the first element of an array).
    pub path: String,
    /// Its type as C spells it.
    pub type_name: String,
    /// What differs.
    pub change: MemberChange,
}

/// What differs about a [`MemberDifference`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MemberChange {
    /// Where the member starts, in bits from the start of the variable.
    BitOffset {
        /// In the simulated kernel.
        simulated: u64,
        /// On a DPU.
        dpu: u64,
    },
    /// The member's size in bytes.
    Size {
        /// In the simulated kernel.
        simulated: u64,
        /// On a DPU.
        dpu: u64,
    },
}

/// A variable the host reaches by name (`__host`, or in MRAM) whose layout differs on a DPU.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LayoutDifference {
    /// The variable.
    pub variable: String,
    /// How it is declared: `__host`, `__mram`, `__mram_noinit`, `__mram_keep` or `__mram_noinit_keep`.
    pub attribute: &'static str,
    /// Its type as C spells it.
    pub type_name: String,
    /// Its size in the simulated kernel.
    pub simulated_size: u64,
    /// Its size on a DPU.
    pub dpu_size: u64,
    /// The first member (depth first) whose offset or size differs, if it has members.
    pub member: Option<MemberDifference>,
    /// Where it is declared.
    pub declared_at: Option<SourceLocation>,
}

impl fmt::Display for LayoutDifference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (attribute, variable, type_name) = (self.attribute, &self.variable, &self.type_name);
        if self.simulated_size == self.dpu_size {
            write!(f, "{attribute} variable `{variable}` ({type_name}) is laid out differently on a DPU")?;
        } else {
            write!(
                f,
                "{attribute} variable `{variable}` ({type_name}): {} bytes in the simulated kernel, {} on a DPU",
                self.simulated_size, self.dpu_size
            )?;
        }
        if let Some(member) = &self.member {
            write!(f, "; member `{}` ({}) ", member.path, member.type_name)?;
            match member.change {
                MemberChange::Size { simulated, dpu } => write!(f, "is {simulated} bytes here, {dpu} on a DPU")?,
                MemberChange::BitOffset { simulated, dpu } if simulated % 8 == 0 && dpu % 8 == 0 => {
                    write!(f, "is at offset {} here, {} on a DPU", simulated / 8, dpu / 8)?
                }
                MemberChange::BitOffset { simulated, dpu } => write!(f, "is at bit {simulated} here, {dpu} on a DPU")?,
            }
        }
        f.write_str(" (a DPU's pointers, size_t and uintptr_t are 4 bytes: share fixed-width types with the host)")
    }
}

/// Something a build check found: the kernel may not work on a DPU as it does on the simulator.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildWarning {
    /// A variable the host reaches by name has another layout on a DPU.
    LayoutDiffers(LayoutDifference),
    /// A shared variable's DPU layout could not be worked out.
    LayoutNotChecked {
        /// The variable.
        variable: String,
        /// Where it is declared.
        declared_at: Option<SourceLocation>,
        /// Why.
        reason: String,
    },
    /// The kernel's debug information could not be read, so no layout was checked.
    DebugInfoUnreadable(String),
    /// The program is estimated to be larger than a DPU's IRAM.
    IramOverflow {
        /// The binary.
        program: PathBuf,
        /// Its estimated size.
        estimate: IramEstimate,
    },
    /// A DPU object was compiled with another `NR_TASKLETS` or chip than the program it is linked into: its code
    /// saw its own, the program runs with the link's.
    ObjectSettingDiffers {
        /// The object (`library.a(member.o)` for a library member).
        object: String,
        /// The setting: `NR_TASKLETS` or `-mcpu`.
        setting: &'static str,
        /// Its value when the object was compiled.
        compiled: String,
        /// Its value for the link.
        linked: String,
    },
}

impl BuildWarning {
    /// Where in the sources the warning is about, if it is about a declaration.
    pub fn location(&self) -> Option<&SourceLocation> {
        match self {
            BuildWarning::LayoutDiffers(difference) => difference.declared_at.as_ref(),
            BuildWarning::LayoutNotChecked { declared_at, .. } => declared_at.as_ref(),
            BuildWarning::DebugInfoUnreadable(_)
            | BuildWarning::IramOverflow { .. }
            | BuildWarning::ObjectSettingDiffers { .. } => None,
        }
    }

    /// The warning without its location.
    pub fn message(&self) -> String {
        match self {
            BuildWarning::LayoutDiffers(difference) => difference.to_string(),
            BuildWarning::LayoutNotChecked { variable, reason, .. } => {
                format!("the DPU layout of `{variable}` was not checked: {reason}")
            }
            BuildWarning::DebugInfoUnreadable(reason) => {
                format!("the DPU layouts of __host and MRAM variables were not checked: {reason}")
            }
            BuildWarning::IramOverflow { program, estimate } => format!(
                "{} is estimated at {} DPU instructions ({} of kernel code as {} compiles it, {} of the SDK's \
                 runtime), more than the {} a {} DPU's IRAM holds: the SDK's compiler would not link it",
                program.display(),
                estimate.instructions(),
                estimate.kernel_instructions,
                estimate.compiler.name(),
                estimate.runtime_instructions(),
                estimate.chip.iram_instructions(),
                estimate.chip
            ),
            BuildWarning::ObjectSettingDiffers { object, setting, compiled, linked } => format!(
                "{object} was compiled with {setting}={compiled} and is linked with {setting}={linked}: its code saw \
                 {compiled}, the program runs with {linked} (as with the SDK's compiler, whose link takes \
                 -DNR_TASKLETS and -mcpu from its own command line, NR_TASKLETS=1 when it has none)"
            ),
        }
    }
}

impl fmt::Display for BuildWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.location() {
            Some(location) => write!(f, "{location}: {}", self.message()),
            None => f.write_str(&self.message()),
        }
    }
}

/// What the checks of one build found.
#[derive(Debug)]
pub(crate) struct Findings {
    pub iram: IramEstimate,
    pub warnings: Vec<BuildWarning>,
}

impl Findings {
    /// What strict mode needs to know when the program is loaded.
    pub fn recorded(&self) -> RecordedChecks {
        let layout_differences = self
            .warnings
            .iter()
            .filter_map(|warning| match warning {
                BuildWarning::LayoutDiffers(_) => Some(warning.to_string()),
                _ => None,
            })
            .collect();
        RecordedChecks {
            iram_instructions: Some(self.iram.instructions()),
            layout_differences,
            host_compiler: Some(self.iram.compiler),
        }
    }
}

/// One of a kernel's own objects: a compiled source, a DPU object, or a member of a library of them.
pub(crate) struct KernelUnit {
    /// The object file.
    pub object: PathBuf,
    /// The file name of its source, as the debug information names its compilation unit.
    pub source_name: String,
}

/// What the kernel's build to simulate needs the checks to see.
pub(crate) struct KernelBuild<'a> {
    /// The linked binary.
    pub binary: &'a Path,
    /// The kernel's own objects.
    pub units: &'a [KernelUnit],
    /// The blocks of the kernel's code.
    pub sites: &'a [BlockCost],
    /// The disassembly of the kernel object's code.
    pub disassembly: &'a str,
    /// The chip the kernel is built for.
    pub chip: ChipVersion,
    /// The family of the host compiler that built it.
    pub compiler: CompilerFamily,
}

/// Runs the checks on a built kernel.
pub(crate) fn check(build: &KernelBuild<'_>) -> Result<Findings, BuildError> {
    let mut shared = HashMap::new();
    let mut functions = BTreeSet::new();
    for KernelUnit { object: object_path, .. } in build.units {
        let bytes = std::fs::read(object_path).map_err(|error| BuildError::io(object_path, error))?;
        let object = object::File::parse(&*bytes).map_err(|error| unreadable(object_path, &error))?;
        shared.extend(shared_variables(&object));
        functions.extend(undefined_symbols(&object));
    }
    let bytes = std::fs::read(build.binary).map_err(|error| BuildError::io(build.binary, error))?;
    let binary = object::File::parse(&*bytes).map_err(|error| unreadable(build.binary, &error))?;
    let source_names: BTreeSet<&str> = build.units.iter().map(|unit| unit.source_name.as_str()).collect();
    let mut warnings = Vec::new();
    match debug_info::read(&binary, |unit| {
        file_name(Path::new(unit)).is_some_and(|name| source_names.contains(name.as_str()))
    }) {
        Ok(info) => {
            functions.extend(info.units.iter().flat_map(|unit| unit.functions.iter().cloned()));
            warnings.extend(layout_warnings(&info, &shared));
        }
        Err(error) => warnings.push(BuildWarning::DebugInfoUnreadable(error.to_string())),
    }
    let functions = functions.iter().map(String::as_str);
    let iram = iram::estimate(build.sites, build.disassembly, functions, build.chip, build.compiler);
    if !iram.fits() {
        warnings.push(BuildWarning::IramOverflow { program: build.binary.to_path_buf(), estimate: iram.clone() });
    }
    Ok(Findings { iram, warnings })
}

fn unreadable(path: &Path, error: &object::Error) -> BuildError {
    BuildError::io(path, std::io::Error::new(std::io::ErrorKind::InvalidData, error.to_string()))
}

fn file_name(path: &Path) -> Option<String> {
    path.file_name().map(|name| name.to_string_lossy().into_owned())
}

/// The `__host` and MRAM variables an object defines, with their attribute (from the section they are in).
fn shared_variables(object: &object::File<'_>) -> Vec<(String, &'static str)> {
    object
        .symbols()
        .filter(|symbol| symbol.is_definition() && symbol.kind() != SymbolKind::Section)
        .filter_map(|symbol| {
            let section = object.section_by_index(symbol.section_index()?).ok()?;
            let attribute = attribute_of_section(section.name().ok()?)?;
            Some((symbol.name().ok()?.to_owned(), attribute))
        })
        .collect()
}

/// The attribute of `attributes.h` that puts a variable in `section`, for the sections the host reaches.
fn attribute_of_section(section: &str) -> Option<&'static str> {
    let is = |prefix: &str| section == prefix || section.starts_with(&format!("{prefix}."));
    [
        (".dpu_host", "__host"),
        (".mram.noinit.keep", "__mram_noinit_keep"),
        (".mram.noinit", "__mram_noinit"),
        (".mram.keep", "__mram_keep"),
        (".mram", "__mram"),
    ]
    .into_iter()
    .find(|(prefix, _)| is(prefix))
    .map(|(_, attribute)| attribute)
}

/// The functions an object calls but does not define.
fn undefined_symbols(object: &object::File<'_>) -> Vec<String> {
    object
        .symbols()
        .filter(|symbol| symbol.is_undefined())
        .filter_map(|symbol| symbol.name().ok().filter(|name| !name.is_empty()).map(str::to_owned))
        .collect()
}

fn layout_warnings(info: &debug_info::KernelDebugInfo, shared: &HashMap<String, &'static str>) -> Vec<BuildWarning> {
    let layouts = Layouts::new(&info.types);
    let mut warnings = Vec::new();
    for variable in info.units.iter().flat_map(|unit| &unit.variables) {
        let (Some(&attribute), Some(ty)) = (shared.get(&variable.name), variable.ty) else { continue };
        match layout_difference(&layouts, &info.types, variable, attribute, ty) {
            Ok(None) => {}
            Ok(Some(difference)) => warnings.push(BuildWarning::LayoutDiffers(difference)),
            Err(Unmodelled(reason)) => warnings.push(BuildWarning::LayoutNotChecked {
                variable: variable.name.clone(),
                declared_at: variable.declared_at.clone(),
                reason,
            }),
        }
    }
    warnings
}

fn layout_difference(
    layouts: &Layouts<'_>,
    types: &c_types::Types,
    variable: &debug_info::Variable,
    attribute: &'static str,
    ty: c_types::TypeId,
) -> Result<Option<LayoutDifference>, Unmodelled> {
    let simulated = layouts.layout(ty, Abi::Simulated)?;
    let dpu = layouts.layout(ty, Abi::Dpu)?;
    let member = layouts.first_difference(ty)?;
    if simulated.size == dpu.size && member.is_none() {
        return Ok(None);
    }
    Ok(Some(LayoutDifference {
        variable: variable.name.clone(),
        attribute,
        type_name: types.spell(Some(ty)),
        simulated_size: simulated.size,
        dpu_size: dpu.size,
        member,
        declared_at: variable.declared_at.clone(),
    }))
}

/// What the build checks recorded in a binary, for strict mode to refuse at load what a DPU would not run.
/// Binaries built before the checks existed have none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RecordedChecks {
    /// The estimated size in DPU instructions.
    pub iram_instructions: Option<u32>,
    /// Each layout difference, as the build warned of it.
    pub layout_differences: Vec<String>,
    /// The family of the host compiler that built it.
    pub host_compiler: Option<CompilerFamily>,
}

const IRAM_KEY: &str = "iram-instructions";
const LAYOUT_KEY: &str = "layout-difference";
const COMPILER_KEY: &str = "host-compiler";

impl RecordedChecks {
    /// The section's contents: one `key value` line per fact.
    pub fn to_text(&self) -> String {
        let iram = self.iram_instructions.map(|instructions| format!("{IRAM_KEY} {instructions}\n"));
        let layouts = self.layout_differences.iter().map(|difference| format!("{LAYOUT_KEY} {difference}\n"));
        let compiler = self.host_compiler.map(|family| format!("{COMPILER_KEY} {}\n", family.name()));
        iram.into_iter().chain(layouts).chain(compiler).collect()
    }

    /// Reads a section written by [`RecordedChecks::to_text`]; lines it does not know are skipped.
    pub fn parse(text: &str) -> Self {
        let mut checks = RecordedChecks::default();
        for line in text.lines() {
            match line.split_once(' ') {
                Some((IRAM_KEY, value)) => checks.iram_instructions = value.parse().ok(),
                Some((LAYOUT_KEY, difference)) => checks.layout_differences.push(difference.to_owned()),
                Some((COMPILER_KEY, name)) => checks.host_compiler = CompilerFamily::from_name(name),
                _ => {}
            }
        }
        checks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_checks_read_back() {
        let checks = RecordedChecks {
            iram_instructions: Some(5000),
            layout_differences: vec!["k.c:3: __host variable `args` (struct dpu_args): 24 bytes".into()],
            host_compiler: Some(CompilerFamily::Gcc),
        };
        assert_eq!(RecordedChecks::parse(&checks.to_text()), checks);
        assert_eq!(RecordedChecks::parse("future-key 1\n"), RecordedChecks::default());
    }

    #[test]
    fn sections_name_the_attribute() {
        assert_eq!(attribute_of_section(".dpu_host"), Some("__host"));
        assert_eq!(attribute_of_section(".mram"), Some("__mram"));
        assert_eq!(attribute_of_section(".mram.noinit"), Some("__mram_noinit"));
        assert_eq!(attribute_of_section(".mram.noinit.keep"), Some("__mram_noinit_keep"));
        assert_eq!(attribute_of_section(".mramx"), None);
        assert_eq!(attribute_of_section(".data"), None);
    }

    #[test]
    fn a_difference_reads_as_the_build_prints_it() {
        let difference = LayoutDifference {
            variable: "args".into(),
            attribute: "__host",
            type_name: "struct dpu_args".into(),
            simulated_size: 24,
            dpu_size: 16,
            member: Some(MemberDifference {
                path: "buffer".into(),
                type_name: "char *".into(),
                change: MemberChange::Size { simulated: 8, dpu: 4 },
            }),
            declared_at: Some(SourceLocation { file: "dpu/kernel.c".into(), line: 12 }),
        };
        let warning = BuildWarning::LayoutDiffers(difference);
        assert!(warning.to_string().starts_with(
            "dpu/kernel.c:12: __host variable `args` (struct dpu_args): 24 bytes in the simulated kernel, 16 on a \
             DPU; member `buffer` (char *) is 8 bytes here, 4 on a DPU"
        ));
    }
}
