//! The C types of a kernel's variables, as its debug information describes them, and how C spells them.

/// A type's index in [`Types`].
pub(crate) type TypeId = usize;

/// A C type, as the host compiler laid it out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum CType {
    /// `int`, `unsigned long`, `double`, `_Bool`, `float _Complex`, ...
    Base {
        /// Its name (`long unsigned int`: GCC's spelling; `unsigned long`: Clang's).
        name: String,
        /// Its size in bytes.
        size: u64,
        /// Whether it is a complex floating type (aligned as one of its two parts).
        complex: bool,
    },
    /// A pointer (to `void` when `pointee` is `None`).
    Pointer {
        /// What it points to.
        pointee: Option<TypeId>,
        /// Its size in bytes.
        size: u64,
    },
    /// A `typedef` name.
    Typedef {
        /// The name.
        name: String,
        /// The type it names (`None`: `void`).
        target: Option<TypeId>,
        /// An `__attribute__((aligned(N)))` on the typedef.
        alignment: Option<u64>,
    },
    /// A `struct` or `union`.
    Record(Record),
    /// An `enum`.
    Enum {
        /// Its tag, if it has one.
        name: Option<String>,
        /// Its size in bytes.
        size: u64,
    },
    /// An array: `element[counts[0]][counts[1]]...`; a count of `None` is a flexible array member's `[]`.
    Array {
        /// The element type.
        element: TypeId,
        /// The count of each dimension.
        counts: Vec<Option<u64>>,
    },
    /// `const`, `volatile`, `restrict` or `_Atomic` applied to a type (`None`: `void`).
    Qualified {
        /// The qualifier as C spells it.
        qualifier: &'static str,
        /// The qualified type.
        target: Option<TypeId>,
    },
    /// A function type (only ever reached through a pointer).
    Function,
    /// A type the debug information describes in a way this model does not read (a DWARF tag, or a reference
    /// into another unit).
    Unsupported(String),
}

/// A `struct` or `union` type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Record {
    /// `union` rather than `struct`.
    pub is_union: bool,
    /// Its tag, if it has one.
    pub name: Option<String>,
    /// Its size in bytes; `None` for a type only declared (`struct node;`).
    pub size: Option<u64>,
    /// Its members in declaration order.
    pub members: Vec<Member>,
    /// An `__attribute__((aligned(N)))` on the type.
    pub alignment: Option<u64>,
}

/// A member of a [`Record`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Member {
    /// Its name (`None` for an anonymous struct or union member).
    pub name: Option<String>,
    /// Its type.
    pub ty: TypeId,
    /// Where it starts, in bits from the start of the record.
    pub bit_offset: u64,
    /// A bit-field's width.
    pub bit_size: Option<u64>,
    /// An `__attribute__((aligned(N)))` on the member.
    pub alignment: Option<u64>,
}

/// The types read from one program's debug information.
#[derive(Clone, Debug, Default)]
pub(crate) struct Types {
    types: Vec<CType>,
}

impl Types {
    /// Adds a type; returns its id.
    pub fn push(&mut self, ty: CType) -> TypeId {
        self.types.push(ty);
        self.types.len() - 1
    }

    /// Replaces the type `id` (a placeholder pushed before its members were read, so that a type can refer to
    /// itself through a pointer).
    pub fn set(&mut self, id: TypeId, ty: CType) {
        self.types[id] = ty;
    }

    /// The type `id`.
    pub fn get(&self, id: TypeId) -> &CType {
        &self.types[id]
    }

    /// The type as C spells it in a declaration without a name: `struct dpu_args`, `char *`, `uint32_t[16]`.
    pub fn spell(&self, id: Option<TypeId>) -> String {
        let Some(id) = id else { return "void".into() };
        match self.get(id) {
            CType::Base { name, .. } | CType::Typedef { name, .. } => name.clone(),
            CType::Pointer { pointee, .. } => match pointee.map(|pointee| self.get(pointee)) {
                Some(CType::Function) => "a function pointer".into(),
                _ => format!("{} *", self.spell(*pointee)),
            },
            CType::Record(record) => {
                let keyword = if record.is_union { "union" } else { "struct" };
                format!("{keyword} {}", record.name.as_deref().unwrap_or("<anonymous>"))
            }
            CType::Enum { name, .. } => format!("enum {}", name.as_deref().unwrap_or("<anonymous>")),
            CType::Array { element, counts } => {
                let dimensions: String = counts
                    .iter()
                    .map(|count| count.map_or_else(|| "[]".to_owned(), |count| format!("[{count}]")))
                    .collect();
                format!("{}{dimensions}", self.spell(Some(*element)))
            }
            CType::Qualified { qualifier, target } => match target.map(|target| self.get(target)) {
                Some(CType::Pointer { .. }) => format!("{}{qualifier}", self.spell(*target)),
                _ => format!("{qualifier} {}", self.spell(*target)),
            },
            CType::Function => "a function".into(),
            CType::Unsupported(what) => format!("<{what}>"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_spelled_as_in_c() {
        let mut types = Types::default();
        let char_type = types.push(CType::Base { name: "char".into(), size: 1, complex: false });
        let pointer = types.push(CType::Pointer { pointee: Some(char_type), size: 8 });
        let constant = types.push(CType::Qualified { qualifier: "const", target: Some(char_type) });
        let const_pointer = types.push(CType::Pointer { pointee: Some(constant), size: 8 });
        let pointer_const = types.push(CType::Qualified { qualifier: "const", target: Some(pointer) });
        let array = types.push(CType::Array { element: pointer, counts: vec![Some(4), None] });
        let function = types.push(CType::Function);
        let function_pointer = types.push(CType::Pointer { pointee: Some(function), size: 8 });
        let record = types.push(CType::Record(Record {
            is_union: false,
            name: Some("dpu_args".into()),
            size: Some(8),
            members: Vec::new(),
            alignment: None,
        }));
        assert_eq!(types.spell(Some(pointer)), "char *");
        assert_eq!(types.spell(Some(const_pointer)), "const char *");
        assert_eq!(types.spell(Some(pointer_const)), "char *const");
        assert_eq!(types.spell(Some(array)), "char *[4][]");
        assert_eq!(types.spell(Some(function_pointer)), "a function pointer");
        assert_eq!(types.spell(Some(record)), "struct dpu_args");
        assert_eq!(types.spell(None), "void");
    }
}
