//! What the build checks read from a simulated DPU binary's DWARF: for each kernel source, the variables it
//! defines with their C types, and the functions it defines, inlines or calls.
//!
//! Kernel sources are compiled with `-g`, which changes no generated code; the runtime and the harness are not,
//! so the binary's compilation units are the kernel's.

use std::borrow::Cow;
use std::collections::HashMap;

use gimli::constants as dw;
use gimli::{AttributeValue, DebuggingInformationEntry, Operation, UnitOffset};
use object::{Object, ObjectSection};

use super::c_types::{CType, Member, Record, TypeId, Types};
use super::SourceLocation;

type Reader<'data> = gimli::EndianSlice<'data, gimli::RunTimeEndian>;
type Entry<'data> = DebuggingInformationEntry<Reader<'data>>;

/// Why the debug information could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum DebugInfoError {
    /// A debug section could not be read (compressed sections, for instance).
    #[error("section {section}: {reason}")]
    Section {
        /// The section.
        section: &'static str,
        /// What went wrong.
        reason: String,
    },
    /// The DWARF is malformed or uses forms this reader does not know.
    #[error("unreadable DWARF: {0}")]
    Dwarf(#[from] gimli::Error),
}

/// The debug information of a program's kernel sources.
#[derive(Debug, Default)]
pub(crate) struct KernelDebugInfo {
    /// Every type the variables refer to.
    pub types: Types,
    /// One entry per kernel compilation unit.
    pub units: Vec<UnitInfo>,
}

/// What one compilation unit (one kernel source) defines.
#[derive(Debug)]
pub(crate) struct UnitInfo {
    /// Its file-scope variables (definitions, not `extern` declarations).
    pub variables: Vec<Variable>,
    /// The functions it defines, inlines or declares for a call.
    pub functions: Vec<String>,
}

/// A variable defined at file scope.
#[derive(Debug)]
pub(crate) struct Variable {
    /// Its name.
    pub name: String,
    /// Its type (`None` if the debug information gives none).
    pub ty: Option<TypeId>,
    /// Where it is declared.
    pub declared_at: Option<SourceLocation>,
}

/// Reads the compilation units of `file` whose name `is_kernel_unit` accepts.
pub(crate) fn read(
    file: &object::File<'_>,
    is_kernel_unit: impl Fn(&str) -> bool,
) -> Result<KernelDebugInfo, DebugInfoError> {
    let load = |id: gimli::SectionId| -> Result<Cow<'_, [u8]>, DebugInfoError> {
        match file.section_by_name(id.name()) {
            Some(section) => section
                .uncompressed_data()
                .map_err(|error| DebugInfoError::Section { section: id.name(), reason: error.to_string() }),
            None => Ok(Cow::Borrowed(&[][..])),
        }
    };
    let sections = gimli::DwarfSections::load(load)?;
    let endian = if file.is_little_endian() { gimli::RunTimeEndian::Little } else { gimli::RunTimeEndian::Big };
    let dwarf = sections.borrow(|section| gimli::EndianSlice::new(section, endian));
    let mut info = KernelDebugInfo::default();
    let mut headers = dwarf.units();
    while let Some(header) = headers.next()? {
        let unit = dwarf.unit(header)?;
        if !unit.name.is_some_and(|name| is_kernel_unit(&name.to_string_lossy())) {
            continue;
        }
        let mut reader = UnitReader { dwarf: &dwarf, unit: &unit, types: &mut info.types, read: HashMap::new() };
        let unit_info = reader.read_unit()?;
        info.units.push(unit_info);
    }
    Ok(info)
}

/// Reads one compilation unit, its types into the shared table.
struct UnitReader<'data, 'a> {
    dwarf: &'a gimli::Dwarf<Reader<'data>>,
    unit: &'a gimli::Unit<Reader<'data>>,
    types: &'a mut Types,
    /// The types of this unit already read, by DIE offset.
    read: HashMap<usize, TypeId>,
}

impl<'data> UnitReader<'data, '_> {
    fn read_unit(&mut self) -> Result<UnitInfo, DebugInfoError> {
        let mut variables = Vec::new();
        let mut functions = Vec::new();
        let mut tree = self.unit.entries_tree(None)?;
        let mut children = tree.root()?.children();
        while let Some(child) = children.next()? {
            let entry = child.entry();
            match entry.tag() {
                dw::DW_TAG_variable if entry.attr_value(dw::DW_AT_declaration).is_none() => {
                    if let Some(variable) = self.variable(entry)? {
                        variables.push(variable);
                    }
                }
                dw::DW_TAG_subprogram => functions.extend(self.name(entry)?),
                _ => {}
            }
        }
        Ok(UnitInfo { variables, functions })
    }

    fn variable(&mut self, entry: &Entry<'data>) -> Result<Option<Variable>, DebugInfoError> {
        let Some(name) = self.name(entry)? else { return Ok(None) };
        // A definition after an `extern` declaration names it with DW_AT_specification and may leave the type
        // (and the declaration's line) there.
        let declaration = match entry.attr_value(dw::DW_AT_specification) {
            Some(AttributeValue::UnitRef(offset)) => Some(self.unit.entry(offset)?),
            _ => None,
        };
        let typed =
            if entry.attr_value(dw::DW_AT_type).is_some() { entry } else { declaration.as_ref().unwrap_or(entry) };
        let ty = self.type_attribute(typed)?;
        let declared_at = self.location(entry).or_else(|| declaration.as_ref().and_then(|d| self.location(d)));
        Ok(Some(Variable { name, ty, declared_at }))
    }

    /// An entry's name, or that of the entry it specifies or is an instance of.
    fn name(&self, entry: &Entry<'data>) -> Result<Option<String>, DebugInfoError> {
        if let Some(value) = entry.attr_value(dw::DW_AT_name) {
            return Ok(Some(self.string(value)?));
        }
        for link in [dw::DW_AT_specification, dw::DW_AT_abstract_origin] {
            if let Some(AttributeValue::UnitRef(offset)) = entry.attr_value(link) {
                return self.name(&self.unit.entry(offset)?);
            }
        }
        Ok(None)
    }

    fn string(&self, value: AttributeValue<Reader<'data>>) -> Result<String, DebugInfoError> {
        Ok(self.dwarf.attr_string(self.unit, value)?.to_string_lossy().into_owned())
    }

    /// `DW_AT_decl_file` and `DW_AT_decl_line`, the file as the compiler was given it.
    fn location(&self, entry: &Entry<'data>) -> Option<SourceLocation> {
        let Some(AttributeValue::FileIndex(index)) = entry.attr_value(dw::DW_AT_decl_file) else { return None };
        let line = entry.attr_value(dw::DW_AT_decl_line)?.udata_value()?;
        let header = self.unit.line_program.as_ref()?.header();
        let file_entry = header.file(index)?;
        let file = self.string(file_entry.path_name()).ok()?;
        let directory = file_entry.directory(header).and_then(|directory| self.string(directory).ok());
        let compilation_directory = self.unit.comp_dir.map(|dir| dir.to_string_lossy().into_owned());
        let file = match directory {
            Some(directory) if !file.starts_with('/') && Some(&directory) != compilation_directory.as_ref() => {
                format!("{directory}/{file}")
            }
            _ => file,
        };
        Some(SourceLocation { file, line })
    }

    /// The type an entry's `DW_AT_type` names (`None`: `void`).
    fn type_attribute(&mut self, entry: &Entry<'data>) -> Result<Option<TypeId>, DebugInfoError> {
        match entry.attr_value(dw::DW_AT_type) {
            None => Ok(None),
            Some(AttributeValue::UnitRef(offset)) => self.type_at(offset).map(Some),
            Some(_) => Ok(Some(self.types.push(CType::Unsupported("a type in another unit".into())))),
        }
    }

    fn type_at(&mut self, offset: UnitOffset<usize>) -> Result<TypeId, DebugInfoError> {
        if let Some(&id) = self.read.get(&offset.0) {
            return Ok(id);
        }
        // Registered before its parts are read, so that a struct can point to itself.
        let id = self.types.push(CType::Unsupported("a type being read".into()));
        self.read.insert(offset.0, id);
        let entry = self.unit.entry(offset)?;
        let size = entry.attr_value(dw::DW_AT_byte_size).and_then(|value| value.udata_value());
        let alignment = entry.attr_value(dw::DW_AT_alignment).and_then(|value| value.udata_value());
        let ty = match entry.tag() {
            dw::DW_TAG_base_type => CType::Base {
                name: self.name(&entry)?.unwrap_or_default(),
                size: size.unwrap_or(0),
                complex: entry.attr_value(dw::DW_AT_encoding)
                    == Some(AttributeValue::Encoding(dw::DW_ATE_complex_float)),
            },
            dw::DW_TAG_pointer_type | dw::DW_TAG_reference_type => {
                CType::Pointer { pointee: self.type_attribute(&entry)?, size: size.unwrap_or(8) }
            }
            dw::DW_TAG_typedef => CType::Typedef {
                name: self.name(&entry)?.unwrap_or_default(),
                target: self.type_attribute(&entry)?,
                alignment,
            },
            dw::DW_TAG_const_type => self.qualified("const", &entry)?,
            dw::DW_TAG_volatile_type => self.qualified("volatile", &entry)?,
            dw::DW_TAG_restrict_type => self.qualified("restrict", &entry)?,
            dw::DW_TAG_atomic_type => self.qualified("_Atomic", &entry)?,
            dw::DW_TAG_structure_type | dw::DW_TAG_union_type => CType::Record(Record {
                is_union: entry.tag() == dw::DW_TAG_union_type,
                name: self.name(&entry)?,
                size: if entry.attr_value(dw::DW_AT_declaration).is_some() { None } else { size },
                members: self.members(offset)?,
                alignment,
            }),
            dw::DW_TAG_enumeration_type => CType::Enum { name: self.name(&entry)?, size: size.unwrap_or(4) },
            dw::DW_TAG_array_type => self.array(offset, &entry)?,
            dw::DW_TAG_subroutine_type => CType::Function,
            tag => CType::Unsupported(tag.static_string().unwrap_or("an unknown DWARF tag").to_owned()),
        };
        self.types.set(id, ty);
        Ok(id)
    }

    fn qualified(&mut self, qualifier: &'static str, entry: &Entry<'data>) -> Result<CType, DebugInfoError> {
        Ok(CType::Qualified { qualifier, target: self.type_attribute(entry)? })
    }

    /// The `DW_TAG_member` children of the record at `offset`.
    fn members(&mut self, offset: UnitOffset<usize>) -> Result<Vec<Member>, DebugInfoError> {
        let mut members = Vec::new();
        let mut tree = self.unit.entries_tree(Some(offset))?;
        let mut children = tree.root()?.children();
        while let Some(child) = children.next()? {
            let entry = child.entry();
            if entry.tag() != dw::DW_TAG_member {
                continue;
            }
            let Some(ty) = self.type_attribute(entry)? else { continue };
            let bit_size = entry.attr_value(dw::DW_AT_bit_size).and_then(|value| value.udata_value());
            members.push(Member {
                name: self.name(entry)?,
                ty,
                bit_offset: member_bit_offset(entry, bit_size, self.unit.encoding()),
                bit_size,
                alignment: entry.attr_value(dw::DW_AT_alignment).and_then(|value| value.udata_value()),
            });
        }
        Ok(members)
    }

    fn array(&mut self, offset: UnitOffset<usize>, entry: &Entry<'data>) -> Result<CType, DebugInfoError> {
        let element = match self.type_attribute(entry)? {
            Some(element) => element,
            None => return Ok(CType::Unsupported("an array of void".into())),
        };
        let mut counts = Vec::new();
        let mut tree = self.unit.entries_tree(Some(offset))?;
        let mut children = tree.root()?.children();
        while let Some(child) = children.next()? {
            let subrange = child.entry();
            if subrange.tag() == dw::DW_TAG_subrange_type {
                counts.push(subrange_count(subrange));
            }
        }
        Ok(CType::Array { element, counts })
    }
}

/// Where a member starts, in bits from its record's start: `DW_AT_data_bit_offset` (DWARF 4 and later), or
/// `DW_AT_data_member_location` in bytes, adjusted for a bit-field described DWARF 2's way (`DW_AT_bit_offset`
/// from the most significant bit of a storage unit of `DW_AT_byte_size` bytes, little-endian). A union's
/// members have neither: they start at 0.
fn member_bit_offset(entry: &Entry<'_>, bit_size: Option<u64>, encoding: gimli::Encoding) -> u64 {
    if let Some(bits) = entry.attr_value(dw::DW_AT_data_bit_offset).and_then(|value| value.udata_value()) {
        return bits;
    }
    let bytes = match entry.attr_value(dw::DW_AT_data_member_location) {
        Some(AttributeValue::Exprloc(expression)) => plus_constant(expression, encoding).unwrap_or(0),
        Some(value) => value.udata_value().unwrap_or(0),
        None => 0,
    };
    let from_most_significant = entry.attr_value(dw::DW_AT_bit_offset).and_then(|value| value.udata_value());
    let storage_bytes = entry.attr_value(dw::DW_AT_byte_size).and_then(|value| value.udata_value());
    match (from_most_significant, storage_bytes, bit_size) {
        (Some(offset), Some(storage), Some(size)) => (bytes * 8 + storage * 8).saturating_sub(offset + size),
        _ => bytes * 8,
    }
}

/// The offset of a DWARF 2 member location, `DW_OP_plus_uconst N`.
fn plus_constant(expression: gimli::Expression<Reader<'_>>, encoding: gimli::Encoding) -> Option<u64> {
    let mut operations = expression.operations(encoding);
    match operations.next().ok()?? {
        Operation::PlusConstant { value } => Some(value),
        _ => None,
    }
}

/// A dimension's element count: `DW_AT_count`, or `DW_AT_upper_bound` + 1 (C arrays start at 0); `None` for a
/// flexible array member's `[]` (no bound, or Clang's count of -1).
fn subrange_count(subrange: &Entry<'_>) -> Option<u64> {
    if let Some(count) = subrange.attr_value(dw::DW_AT_count) {
        return count.udata_value();
    }
    let upper = subrange.attr_value(dw::DW_AT_upper_bound)?.udata_value()?;
    let lower = subrange.attr_value(dw::DW_AT_lower_bound).and_then(|value| value.udata_value()).unwrap_or(0);
    (upper + 1).checked_sub(lower)
}
