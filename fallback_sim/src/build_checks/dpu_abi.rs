//! How C types are laid out on a DPU and in a simulated kernel, and the first place where the two differ.
//!
//! A simulated kernel is LP64 (x86-64 or aarch64): pointers, `long` and `size_t` are 8 bytes, `long double`
//! 16. The DPU is not plain ILP32. UPMEM's clang (`clang/lib/Basic/Targets/DPU.h` in UPMEM's llvm-project
//! fork) has 32-bit pointers, a 64-bit `long` (as `long long`, `double` and `long double`, all 8-aligned), and
//! the data layout `e-m:e-p:32:32-i1:8:32-i8:8:32-i16:16:32-i32:32:32-i64:64:64-n32`, which aligns every type to
//! its size; the SDK 2025.1's compiled runtime agrees (its DWARF has an 8-byte `long int`). The typedefs of the
//! SDK's own headers, which DPU kernels include ahead of the compiler's (`stddef.h` and `stdint.h` of the SDK
//! 2025.1), differ from the host C library's where [`DPU_TYPEDEFS`] says. Every other type has the same size
//! and alignment on both, so a layout differs only through these.
//!
//! The host compiler's layout is read from the debug information, which gives sizes and offsets but no
//! alignment. A record is laid out again under the host's rules first: if that reproduces the compiler's
//! offsets (naturally aligned, or packed), the same rules with the DPU's sizes give its DPU layout; a record
//! that neither reproduces (an alignment attribute the debug information does not record, say) is reported as
//! not checked rather than guessed at.

use super::c_types::{CType, Member, Record, TypeId, Types};
use super::{MemberChange, MemberDifference};

/// Typedefs whose definition in the SDK's DPU headers has another size than the host C library's, with that
/// size in bytes (each as aligned): `size_t`, `ptrdiff_t` (`stddef.h`), `intptr_t`, `uintptr_t` and the 16- and
/// 32-bit "fast" types (`stdint.h`) are `int` or `unsigned int`, `max_align_t` is `unsigned long`. The SDK has no
/// `ssize_t`; it is the signed `size_t`. `wchar_t` is `unsigned int` there, 4 bytes as on the host.
const DPU_TYPEDEFS: [(&str, u64); 10] = [
    ("size_t", 4),
    ("ssize_t", 4),
    ("ptrdiff_t", 4),
    ("intptr_t", 4),
    ("uintptr_t", 4),
    ("int_fast16_t", 4),
    ("int_fast32_t", 4),
    ("uint_fast16_t", 4),
    ("uint_fast32_t", 4),
    ("max_align_t", 8),
];
/// A DPU pointer's size and alignment.
const DPU_POINTER: u64 = 4;
/// The largest alignment of a DPU type (`i64:64:64`; `long double` is a `double`).
const DPU_MAX_ALIGN: u64 = 8;
/// The largest alignment of a scalar on x86-64 and aarch64 (`long double`, `__int128`).
const HOST_MAX_ALIGN: u64 = 16;

/// The machine a layout is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Abi {
    /// The host's, which a simulated kernel is compiled for.
    Simulated,
    /// A DPU's.
    Dpu,
}

/// A type's size and alignment in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    pub size: u64,
    pub align: u64,
}

/// Why a type's DPU layout could not be worked out.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Unmodelled(pub String);

/// Lays out types of one program's debug information.
pub(crate) struct Layouts<'a> {
    types: &'a Types,
}

impl<'a> Layouts<'a> {
    pub fn new(types: &'a Types) -> Self {
        Layouts { types }
    }

    /// The layout of `ty` under `abi`.
    pub fn layout(&self, ty: TypeId, abi: Abi) -> Result<Layout, Unmodelled> {
        match self.types.get(ty) {
            CType::Base { name, size, complex } => Ok(base_layout(name, *size, *complex, abi)),
            CType::Pointer { size, .. } => Ok(match abi {
                Abi::Simulated => Layout { size: *size, align: *size },
                Abi::Dpu => Layout { size: DPU_POINTER, align: DPU_POINTER },
            }),
            CType::Typedef { name, target, alignment } => match (abi, dpu_typedef(name)) {
                // The SDK's definition replaces the host's, attributes and all.
                (Abi::Dpu, Some(size)) => Ok(Layout { size, align: size }),
                _ => Ok(with_alignment(self.layout(self.target(ty, *target)?, abi)?, *alignment)),
            },
            CType::Record(record) => Ok(self.placement(ty, record, abi)?.layout),
            CType::Enum { size, .. } => Ok(Layout { size: *size, align: *size }),
            CType::Array { element, counts } => {
                let element = self.layout(*element, abi)?;
                let count: u64 = counts.iter().map(|count| count.unwrap_or(0)).product();
                Ok(Layout { size: element.size * count, align: element.align })
            }
            CType::Qualified { target, .. } => self.layout(self.target(ty, *target)?, abi),
            CType::Function | CType::Unsupported(_) => {
                Err(Unmodelled(format!("its type {} has no layout here", self.types.spell(Some(ty)))))
            }
        }
    }

    /// The first member (depth first, in declaration order) whose offset or size differs between a simulated
    /// kernel and a DPU; `None` if none does (a difference, if any, is then the type's own size).
    pub fn first_difference(&self, ty: TypeId) -> Result<Option<MemberDifference>, Unmodelled> {
        self.difference_below(ty, "", 0)
    }

    /// The first difference inside `ty`, which starts `base_bits` into the variable on both machines (a member
    /// is only looked into when everything before it, and its own offset, are the same on both).
    fn difference_below(&self, ty: TypeId, path: &str, base_bits: u64) -> Result<Option<MemberDifference>, Unmodelled> {
        match self.types.get(ty) {
            CType::Record(record) => self.first_member_difference(ty, record, path, base_bits),
            CType::Array { element, .. } => self.difference_below(*element, &format!("{path}[0]"), base_bits),
            CType::Typedef { name, target, .. } if dpu_typedef(name).is_none() => {
                self.difference_below(self.target(ty, *target)?, path, base_bits)
            }
            CType::Qualified { target, .. } => self.difference_below(self.target(ty, *target)?, path, base_bits),
            _ => Ok(None),
        }
    }

    fn first_member_difference(
        &self,
        ty: TypeId,
        record: &Record,
        path: &str,
        base_bits: u64,
    ) -> Result<Option<MemberDifference>, Unmodelled> {
        let simulated = self.placement(ty, record, Abi::Simulated)?;
        let dpu = self.placement(ty, record, Abi::Dpu)?;
        for (index, member) in record.members.iter().enumerate() {
            let name = member.name.as_deref().unwrap_or("<anonymous>");
            let member_path = if path.is_empty() { name.to_owned() } else { format!("{path}.{name}") };
            let difference = |change| MemberDifference {
                path: member_path.clone(),
                type_name: self.types.spell(Some(member.ty)),
                change,
            };
            let (simulated_offset, dpu_offset) = (simulated.bit_offsets[index], dpu.bit_offsets[index]);
            if simulated_offset != dpu_offset {
                let (simulated, dpu) = (base_bits + simulated_offset, base_bits + dpu_offset);
                return Ok(Some(difference(MemberChange::BitOffset { simulated, dpu })));
            }
            if let Some(inner) = self.difference_below(member.ty, &member_path, base_bits + simulated_offset)? {
                return Ok(Some(inner));
            }
            let (simulated_size, dpu_size) = (simulated.sizes[index], dpu.sizes[index]);
            if simulated_size != dpu_size {
                return Ok(Some(difference(MemberChange::Size { simulated: simulated_size, dpu: dpu_size })));
            }
        }
        Ok(None)
    }

    /// Where a record's members go under `abi`, by the rules that reproduce the host compiler's layout.
    fn placement(&self, ty: TypeId, record: &Record, abi: Abi) -> Result<Placement, Unmodelled> {
        let Some(compiled_size) = record.size else {
            return Err(Unmodelled(format!("{} is only declared", self.types.spell(Some(ty)))));
        };
        let reproduces = |placement: &Placement| {
            placement.layout.size == compiled_size
                && placement
                    .bit_offsets
                    .iter()
                    .zip(&record.members)
                    .all(|(offset, member)| *offset == member.bit_offset)
        };
        for packed in [false, true] {
            if reproduces(&self.place(record, Abi::Simulated, packed)?) {
                return self.place(record, abi, packed);
            }
        }
        Err(Unmodelled(format!(
            "the members of {} are not where natural alignment or packing puts them (an alignment attribute?)",
            self.types.spell(Some(ty))
        )))
    }

    /// Lays a record's members out in order, as C compilers for both machines do: each member at the next
    /// offset its alignment allows (1 when packed), a bit-field in the current storage unit of its declared
    /// type unless it would straddle one, a union's members all at 0; the record's size rounded up to its
    /// alignment, the largest of its members'.
    fn place(&self, record: &Record, abi: Abi, packed: bool) -> Result<Placement, Unmodelled> {
        let mut placement =
            Placement { layout: Layout { size: 0, align: 1 }, bit_offsets: Vec::new(), sizes: Vec::new() };
        let mut next_bit = 0u64;
        let mut end_bit = 0u64;
        for member in &record.members {
            let layout = self.member_layout(member, abi, packed)?;
            let align_bits = layout.align * 8;
            let start = if record.is_union {
                0
            } else {
                match member.bit_size {
                    Some(width) if !packed && straddles(next_bit, width, align_bits) => {
                        next_bit.next_multiple_of(align_bits)
                    }
                    Some(_) => next_bit,
                    None => next_bit.next_multiple_of(align_bits),
                }
            };
            let width = member.bit_size.unwrap_or(layout.size * 8);
            next_bit = start + width;
            end_bit = end_bit.max(next_bit);
            placement.layout.align = placement.layout.align.max(layout.align);
            placement.bit_offsets.push(start);
            placement.sizes.push(layout.size);
        }
        let align = with_alignment(placement.layout, record.alignment).align;
        placement.layout = Layout { size: end_bit.div_ceil(8).next_multiple_of(align), align };
        Ok(placement)
    }

    fn member_layout(&self, member: &Member, abi: Abi, packed: bool) -> Result<Layout, Unmodelled> {
        let layout = self.layout(member.ty, abi)?;
        let layout = if packed { Layout { align: 1, ..layout } } else { layout };
        Ok(with_alignment(layout, member.alignment))
    }

    /// A typedef's or qualifier's target, which must be a type (not `void`).
    fn target(&self, ty: TypeId, target: Option<TypeId>) -> Result<TypeId, Unmodelled> {
        target.ok_or_else(|| Unmodelled(format!("{} is void", self.types.spell(Some(ty)))))
    }
}

/// Where a record's members start (bits) and how large each is (bytes), and the record's layout.
struct Placement {
    layout: Layout,
    bit_offsets: Vec<u64>,
    sizes: Vec<u64>,
}

/// Whether a bit-field of `width` bits starting at `bit` crosses a boundary of its type's `unit_bits`.
fn straddles(bit: u64, width: u64, unit_bits: u64) -> bool {
    width > 0 && bit / unit_bits != (bit + width - 1) / unit_bits
}

fn dpu_typedef(name: &str) -> Option<u64> {
    DPU_TYPEDEFS.iter().find(|(typedef, _)| *typedef == name).map(|&(_, size)| size)
}

/// A base type's layout: as the host compiler sized it, aligned to its size (a complex type to one part's),
/// except that a DPU's `long double` is a `double`.
fn base_layout(name: &str, size: u64, complex: bool, abi: Abi) -> Layout {
    let is_long_double = name.contains("long double");
    let (size, max_align) = match abi {
        Abi::Simulated => (size, HOST_MAX_ALIGN),
        Abi::Dpu if is_long_double => (if complex { 16 } else { 8 }, DPU_MAX_ALIGN),
        Abi::Dpu => (size, DPU_MAX_ALIGN),
    };
    let part = if complex { size / 2 } else { size };
    Layout { size, align: part.clamp(1, max_align) }
}

/// `layout` with an `__attribute__((aligned(N)))`, which only raises the alignment.
fn with_alignment(layout: Layout, alignment: Option<u64>) -> Layout {
    let align = layout.align.max(alignment.unwrap_or(1));
    Layout { size: layout.size.next_multiple_of(align), align }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Builder {
        types: Types,
    }

    impl Builder {
        fn new() -> Self {
            Builder { types: Types::default() }
        }

        fn base(&mut self, name: &str, size: u64) -> TypeId {
            self.types.push(CType::Base { name: name.into(), size, complex: false })
        }

        fn typedef(&mut self, name: &str, target: TypeId) -> TypeId {
            self.types.push(CType::Typedef { name: name.into(), target: Some(target), alignment: None })
        }

        fn pointer(&mut self, pointee: TypeId) -> TypeId {
            self.types.push(CType::Pointer { pointee: Some(pointee), size: 8 })
        }

        /// A struct laid out as the host compiler would, from (name, type, bit offset, bit size).
        fn record(&mut self, name: &str, size: u64, members: &[(&str, TypeId, u64, Option<u64>)]) -> TypeId {
            let members = members
                .iter()
                .map(|&(name, ty, bit_offset, bit_size)| Member {
                    name: Some(name.into()),
                    ty,
                    bit_offset,
                    bit_size,
                    alignment: None,
                })
                .collect();
            self.types.push(CType::Record(Record {
                is_union: false,
                name: Some(name.into()),
                size: Some(size),
                members,
                alignment: None,
            }))
        }
    }

    #[test]
    fn pointers_and_size_t_shrink_and_move_what_follows() {
        let mut b = Builder::new();
        let char_type = b.base("char", 1);
        let char_pointer = b.pointer(char_type);
        let unsigned_long = b.base("long unsigned int", 8);
        let size_t = b.typedef("size_t", unsigned_long);
        let unsigned = b.base("unsigned int", 4);
        let args = b.record(
            "dpu_args",
            24,
            &[("buffer", char_pointer, 0, None), ("n", size_t, 64, None), ("k", unsigned, 128, None)],
        );
        let layouts = Layouts::new(&b.types);
        assert_eq!(layouts.layout(args, Abi::Simulated), Ok(Layout { size: 24, align: 8 }));
        assert_eq!(layouts.layout(args, Abi::Dpu), Ok(Layout { size: 12, align: 4 }));
        let difference = layouts.first_difference(args).unwrap().unwrap();
        assert_eq!(difference.path, "buffer");
        assert_eq!(difference.type_name, "char *");
        assert_eq!(difference.change, MemberChange::Size { simulated: 8, dpu: 4 });
    }

    #[test]
    fn long_is_eight_bytes_and_eight_aligned_on_a_dpu() {
        let mut b = Builder::new();
        let long = b.base("long int", 8);
        let int = b.base("int", 4);
        let item = b.record("item", 16, &[("k", int, 0, None), ("v", long, 64, None)]);
        let layouts = Layouts::new(&b.types);
        assert_eq!(layouts.layout(item, Abi::Dpu), Ok(Layout { size: 16, align: 8 }));
        assert_eq!(layouts.first_difference(item), Ok(None));
    }

    #[test]
    fn bit_fields_follow_their_storage_units() {
        let mut b = Builder::new();
        let unsigned = b.base("unsigned int", 4);
        let pointer = b.pointer(unsigned);
        // { unsigned *p; unsigned a : 3; unsigned b : 30; }: b does not fit after a in its 32-bit unit.
        let flags = b.record(
            "flags",
            16,
            &[("p", pointer, 0, None), ("a", unsigned, 64, Some(3)), ("b", unsigned, 96, Some(30))],
        );
        let layouts = Layouts::new(&b.types);
        assert_eq!(layouts.layout(flags, Abi::Dpu), Ok(Layout { size: 12, align: 4 }));
        let difference = layouts.first_difference(flags).unwrap().unwrap();
        assert_eq!(difference.path, "p");
    }

    #[test]
    fn a_typedef_the_sdk_defines_takes_the_sdks_layout_whatever_the_hosts_attributes() {
        let mut b = Builder::new();
        let long_long = b.base("long long int", 8);
        let long_double = b.base("long double", 16);
        // glibc's max_align_t is a 32-byte, 16-aligned struct; the SDK's is an unsigned long.
        let host = b.record("host_max_align", 32, &[("ll", long_long, 0, None), ("ld", long_double, 128, None)]);
        let max_align =
            b.types.push(CType::Typedef { name: "max_align_t".into(), target: Some(host), alignment: Some(16) });
        let layouts = Layouts::new(&b.types);
        assert_eq!(layouts.layout(max_align, Abi::Simulated), Ok(Layout { size: 32, align: 16 }));
        assert_eq!(layouts.layout(max_align, Abi::Dpu), Ok(Layout { size: 8, align: 8 }));
    }

    #[test]
    fn a_packed_record_is_recognised_and_one_the_rules_do_not_reproduce_is_not_guessed() {
        let mut b = Builder::new();
        let char_type = b.base("char", 1);
        let unsigned = b.base("unsigned int", 4);
        let packed = b.record("packed", 5, &[("c", char_type, 0, None), ("x", unsigned, 8, None)]);
        let odd = b.record("odd", 16, &[("c", char_type, 0, None), ("x", unsigned, 64, None)]);
        let layouts = Layouts::new(&b.types);
        assert_eq!(layouts.layout(packed, Abi::Dpu), Ok(Layout { size: 5, align: 1 }));
        let unmodelled =
            "the members of struct odd are not where natural alignment or packing puts them (an alignment \
                          attribute?)";
        assert_eq!(layouts.layout(odd, Abi::Dpu), Err(Unmodelled(unmodelled.into())));
    }

    #[test]
    fn nested_differences_name_the_path_and_long_double_shrinks() {
        let mut b = Builder::new();
        let int = b.base("int", 4);
        let long_double = b.base("long double", 16);
        let inner = b.record("inner", 32, &[("x", int, 0, None), ("ld", long_double, 128, None)]);
        let array = b.types.push(CType::Array { element: inner, counts: vec![Some(2)] });
        let outer = b.record("outer", 80, &[("n", int, 0, None), ("items", array, 128, None)]);
        let layouts = Layouts::new(&b.types);
        assert_eq!(layouts.layout(outer, Abi::Dpu), Ok(Layout { size: 40, align: 8 }));
        let difference = layouts.first_difference(outer).unwrap().unwrap();
        assert_eq!(difference.path, "items");
        assert_eq!(difference.change, MemberChange::BitOffset { simulated: 128, dpu: 64 });
    }
}
