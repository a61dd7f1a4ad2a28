//! DPU object files and static libraries of them: what the compiler's `-c` makes for the simulator, how a later
//! link tells them from other objects, and which members of a library it takes.
//!
//! A DPU object is the host object file of one kernel source compiled as the builder compiles kernel sources
//! (instrumented, with debug information), with a section [`SECTION`] that marks it and says how it was
//! compiled: the simulator ABI of the runtime headers, the chip, `NR_TASKLETS`, and the source's file name (by
//! which the build checks find its debug information). The section is `SHF_EXCLUDE`, so the final link of a
//! simulated binary leaves it out; `ar` keeps it, so a static library of DPU objects is an archive of marked
//! objects.

use std::collections::HashSet;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use object::read::archive::ArchiveFile;
use object::{Object, ObjectKind, ObjectSymbol};

use super::{run, BuildError};
use crate::layout::ABI_VERSION;
use upmem_types::ChipVersion;

/// The section that marks a DPU object.
const SECTION: &str = ".dpusim.object";
/// The first line of the section's text.
const HEADER: &str = "upmem-sim DPU object";
/// ELF machine number of real DPU objects.
const EM_DPU: u16 = 245;

/// How a DPU object was compiled, as its marker says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct ObjectInfo {
    /// The simulator ABI of the runtime headers it was compiled against.
    pub abi_version: u32,
    /// The chip it was compiled for.
    pub chip: ChipVersion,
    /// `NR_TASKLETS` as its source saw it (the definition's text).
    pub nr_tasklets: String,
    /// The file name of its source.
    pub source: String,
}

impl ObjectInfo {
    fn to_text(&self) -> String {
        format!(
            "{HEADER}\nabi {}\nchip {}\nNR_TASKLETS {}\nsource {}\n",
            self.abi_version,
            self.chip.name(),
            self.nr_tasklets,
            self.source
        )
    }

    fn parse(text: &str) -> Option<ObjectInfo> {
        let mut lines = text.lines();
        if lines.next()? != HEADER {
            return None;
        }
        let mut value_of = |key: &str| lines.next()?.strip_prefix(key)?.strip_prefix(' ').map(str::to_owned);
        Some(ObjectInfo {
            abi_version: value_of("abi")?.parse().ok()?,
            chip: value_of("chip")?.parse().ok()?,
            nr_tasklets: value_of("NR_TASKLETS")?,
            source: value_of("source")?,
        })
    }
}

/// Why an input of a link is not a DPU object the simulator can link.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ObjectProblem {
    /// A host object file: its source was not compiled as a DPU program.
    HostObject,
    /// An object compiled by the UPMEM SDK's compiler, for DPU hardware.
    HardwareObject,
    /// An object compiled against another version of the simulator's runtime.
    OtherAbi {
        /// Its simulator ABI.
        found: u32,
        /// This simulator's.
        expected: u32,
    },
    /// A linked executable or shared library: DPU programs link objects and static libraries.
    Linked,
    /// Not an object file or static library the simulator can read.
    Unreadable(String),
}

impl fmt::Display for ObjectProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ObjectProblem::HostObject => f.write_str(
                "a host object file, not a DPU object: compile its source with `dpu-upmem-dpurte-clang -c` (or \
                 upmem-sim's KernelBuilder::compile_object)",
            ),
            ObjectProblem::HardwareObject => f.write_str(
                "a DPU object compiled by the UPMEM SDK's compiler, for DPU hardware: the simulator links the \
                 objects its own `dpu-upmem-dpurte-clang -c` compiles",
            ),
            ObjectProblem::OtherAbi { found, expected } => write!(
                f,
                "a DPU object compiled by another version of upmem-sim (simulator ABI {found}, this is ABI \
                 {expected}): compile it again"
            ),
            ObjectProblem::Linked => f.write_str(
                "a linked executable or shared library, not an object file: DPU programs link objects and static \
                 libraries",
            ),
            ObjectProblem::Unreadable(reason) => write!(f, "not an object file or static library ({reason})"),
        }
    }
}

/// A DPU object the link takes: a file of its own, or a library member written out for the link.
#[derive(Clone, Debug)]
pub(super) struct LinkedObject {
    /// The object file.
    pub path: PathBuf,
    /// What the link's messages call it: the file, or `library.a(member.o)`.
    pub name: String,
    /// How it was compiled.
    pub info: ObjectInfo,
}

/// Marks the freshly compiled `object` as a DPU object compiled as `info` says. `dir` holds the marker's text.
pub(super) fn mark(object: &Path, info: &ObjectInfo, dir: &Path) -> Result<(), BuildError> {
    let text = dir.join(format!(
        "{}.dpusim-object",
        object.file_name().map_or_else(|| "object".into(), |name| name.to_string_lossy())
    ));
    fs::write(&text, info.to_text()).map_err(|error| BuildError::io(&text, error))?;
    let objcopy = std::env::var_os("OBJCOPY").unwrap_or_else(|| "objcopy".into());
    let mut add = std::process::Command::new(objcopy);
    add.arg(format!("--add-section={SECTION}={}", text.display()))
        .arg(format!("--set-section-flags={SECTION}=readonly,exclude"))
        .arg(object);
    run("marking the DPU object", &mut add, "objcopy from GNU binutils (set OBJCOPY)")?;
    fs::remove_file(&text).map_err(|error| BuildError::io(&text, error))
}

/// Reads a DPU object file given to the link.
pub(super) fn read_object(path: &Path) -> Result<LinkedObject, BuildError> {
    let name = path.display().to_string();
    let bytes = fs::read(path).map_err(|error| BuildError::io(path, error))?;
    let info = inspect(&bytes).map_err(|problem| BuildError::NotADpuObject { input: name.clone(), problem })?;
    Ok(LinkedObject { path: path.to_path_buf(), name, info })
}

/// The members of the static `libraries` that the link of `objects` needs, as a linker takes them: a member that
/// defines a symbol that is still undefined (`main` among them, until something defines it), repeatedly, in any
/// order of the libraries (as the SDK's linker, lld, does). Each member taken is written into `dir`. Every member
/// of every library must be a DPU object.
pub(super) fn take_library_members(
    libraries: &[PathBuf],
    objects: &[PathBuf],
    dir: &Path,
) -> Result<Vec<LinkedObject>, BuildError> {
    let mut defined = HashSet::new();
    let mut undefined = HashSet::new();
    for path in objects {
        let bytes = fs::read(path).map_err(|error| BuildError::io(path, error))?;
        let file = object::File::parse(&*bytes).map_err(|error| BuildError::NotADpuObject {
            input: path.display().to_string(),
            problem: ObjectProblem::Unreadable(error.to_string()),
        })?;
        add_symbols(&file, &mut defined, &mut undefined);
    }
    undefined.insert("main".to_owned());

    let mut members = Vec::new();
    for library in libraries {
        members.extend(read_library(library)?);
    }
    let mut taken = vec![false; members.len()];
    let mut linked = Vec::new();
    loop {
        undefined.retain(|name| !defined.contains(name));
        let next = (0..members.len())
            .find(|&index| !taken[index] && members[index].defined.iter().any(|name| undefined.contains(name)));
        let Some(index) = next else { break };
        taken[index] = true;
        let member = &members[index];
        defined.extend(member.defined.iter().cloned());
        undefined.extend(member.undefined.iter().cloned());
        let path = dir.join(format!("library-member-{}-{}", linked.len(), member.file_name));
        fs::write(&path, &member.bytes).map_err(|error| BuildError::io(&path, error))?;
        linked.push(LinkedObject { path, name: member.name.clone(), info: member.info.clone() });
    }
    Ok(linked)
}

/// A member of a static library, read.
struct Member {
    name: String,
    file_name: String,
    bytes: Vec<u8>,
    info: ObjectInfo,
    defined: Vec<String>,
    undefined: Vec<String>,
}

fn read_library(library: &Path) -> Result<Vec<Member>, BuildError> {
    let library_name = library.display().to_string();
    let bytes = fs::read(library).map_err(|error| BuildError::io(library, error))?;
    let unreadable = |input: &str, reason: String| BuildError::NotADpuObject {
        input: input.to_owned(),
        problem: ObjectProblem::Unreadable(reason),
    };
    let archive = ArchiveFile::parse(&*bytes)
        .map_err(|error| unreadable(&library_name, format!("not a static library (ar archive): {error}")))?;
    let mut members = Vec::new();
    for member in archive.members() {
        let member = member.map_err(|error| unreadable(&library_name, error.to_string()))?;
        let file_name = String::from_utf8_lossy(member.name()).into_owned();
        let name = format!("{library_name}({file_name})");
        let data = member.data(&*bytes).map_err(|error| unreadable(&name, error.to_string()))?;
        let info = inspect(data).map_err(|problem| BuildError::NotADpuObject { input: name.clone(), problem })?;
        let file = object::File::parse(data).map_err(|error| unreadable(&name, error.to_string()))?;
        let (mut defined, mut undefined) = (HashSet::new(), HashSet::new());
        add_symbols(&file, &mut defined, &mut undefined);
        members.push(Member {
            name,
            file_name,
            bytes: data.to_vec(),
            info,
            defined: defined.into_iter().collect(),
            undefined: undefined.into_iter().collect(),
        });
    }
    Ok(members)
}

/// Adds the global symbols `file` defines to `defined`, and those it needs to `undefined` (weak references need
/// no definition, and take no library member).
fn add_symbols(file: &object::File<'_>, defined: &mut HashSet<String>, undefined: &mut HashSet<String>) {
    for symbol in file.symbols().filter(|symbol| symbol.is_global()) {
        let Ok(name) = symbol.name() else { continue };
        if name.is_empty() {
            continue;
        }
        if symbol.is_definition() {
            defined.insert(name.to_owned());
        } else if symbol.is_undefined() && !symbol.is_weak() {
            undefined.insert(name.to_owned());
        }
    }
}

/// What `bytes` says as a DPU object.
fn inspect(bytes: &[u8]) -> Result<ObjectInfo, ObjectProblem> {
    if bytes.len() >= 20 && bytes[..4] == *b"\x7fELF" && u16::from_le_bytes([bytes[18], bytes[19]]) == EM_DPU {
        return Err(ObjectProblem::HardwareObject);
    }
    let file = object::File::parse(bytes).map_err(|error| ObjectProblem::Unreadable(error.to_string()))?;
    if file.kind() != ObjectKind::Relocatable {
        return Err(ObjectProblem::Linked);
    }
    let Some(section) = file.section_by_name(SECTION) else { return Err(ObjectProblem::HostObject) };
    let text = object::ObjectSection::data(&section).map_err(|error| ObjectProblem::Unreadable(error.to_string()))?;
    let info = ObjectInfo::parse(&String::from_utf8_lossy(text))
        .ok_or_else(|| ObjectProblem::Unreadable(format!("its {SECTION} section is not upmem-sim's")))?;
    if info.abi_version != ABI_VERSION {
        return Err(ObjectProblem::OtherAbi { found: info.abi_version, expected: ABI_VERSION });
    }
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_info_reads_back_what_it_writes() {
        let info = ObjectInfo {
            abi_version: ABI_VERSION,
            chip: ChipVersion::V1B,
            nr_tasklets: "16".into(),
            source: "dpu.c".into(),
        };
        assert_eq!(ObjectInfo::parse(&info.to_text()), Some(info));
        assert_eq!(ObjectInfo::parse("something else\nabi 4\n"), None);
    }

    #[test]
    fn only_marked_relocatable_objects_are_dpu_objects() {
        let mut hardware = b"\x7fELF".to_vec();
        hardware.extend([0; 14]);
        hardware.extend(EM_DPU.to_le_bytes());
        assert_eq!(inspect(&hardware), Err(ObjectProblem::HardwareObject));
        assert!(matches!(inspect(b"!<arch>\n"), Err(ObjectProblem::Unreadable(_))));
        let this_test = fs::read(std::env::current_exe().unwrap()).unwrap();
        assert_eq!(inspect(&this_test), Err(ObjectProblem::Linked), "an executable");
    }
}
