//! The dynamic section of a shared library: what it needs (`DT_NEEDED`) and its `DT_SONAME`, as `readelf -d`
//! shows them, to say which of libdpu's dependencies keep it from loading and which SDK version it is.

use std::path::Path;

use object::elf::{DT_NEEDED, DT_SONAME};
use object::read::elf::{Dyn as _, ElfFile64};
use object::Endianness;

/// A shared library's dynamic entries of interest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct DynamicEntries {
    /// The libraries it needs, in order.
    pub needed: Vec<String>,
    /// Its `DT_SONAME`.
    pub soname: Option<String>,
}

/// The dynamic entries of the 64-bit ELF file at `path`, `None` when it cannot be read or parsed.
pub(crate) fn dynamic_entries(path: &Path) -> Option<DynamicEntries> {
    let data = std::fs::read(path).ok()?;
    let file = ElfFile64::<Endianness>::parse(&*data).ok()?;
    let endian = file.endian();
    let sections = file.elf_section_table();
    let (dynamic, link) = sections.dynamic(endian, &*data).ok()??;
    let strings = sections.strings(endian, &*data, link).ok()?;
    let mut entries = DynamicEntries::default();
    for entry in dynamic {
        let text = || entry.string(endian, strings).ok().map(|name| String::from_utf8_lossy(name).into_owned());
        match entry.tag32(endian) {
            Some(DT_NEEDED) => entries.needed.extend(text()),
            Some(DT_SONAME) => entries.soname = text(),
            _ => {}
        }
    }
    Some(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A library built here with a SONAME of its own and libm as a dependency.
    #[test]
    fn reads_the_needed_libraries_and_the_soname() {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("needs_libm.c");
        std::fs::write(&source, "#include <math.h>\ndouble root(double x) { return sqrt(x); }\n").unwrap();
        let library = dir.path().join("libneeds_libm.so");
        let built = std::process::Command::new("cc")
            .args(["-shared", "-fPIC", "-Wl,--no-as-needed", "-Wl,-soname,libneeds_libm.so.7"])
            .arg(&source)
            .arg("-o")
            .arg(&library)
            .arg("-lm")
            .status()
            .expect("running cc");
        assert!(built.success());
        let entries = dynamic_entries(&library).expect("an ELF shared library");
        assert_eq!(entries.soname.as_deref(), Some("libneeds_libm.so.7"));
        assert!(entries.needed.iter().any(|name| name.starts_with("libm.so")), "{entries:?}");
        assert_eq!(dynamic_entries(&source), None, "not an ELF file");
    }
}
