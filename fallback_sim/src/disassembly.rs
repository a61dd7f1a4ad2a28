//! The lines of `objdump -d -r --no-show-raw-insn` output that the kernel builder reads.

/// `0000000000000040 <name>:`
pub(crate) fn is_function_label(line: &str) -> bool {
    line.ends_with(">:") && line.starts_with(|c: char| c.is_ascii_hexdigit())
}

/// `   1c:\tmov    %eax,%ebx`: the offset, the mnemonic and the operands.
pub(crate) fn instruction(line: &str) -> Option<(u64, &str, &str)> {
    if !line.starts_with(' ') {
        return None;
    }
    let (offset, text) = line.trim_start().split_once(":\t")?;
    let offset = u64::from_str_radix(offset, 16).ok()?;
    let text = text.trim_start();
    let (mnemonic, operands) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    Some((offset, mnemonic, operands.trim_start()))
}

/// The operands without `objdump`'s annotations: the `<symbol+offset>` after a target and the comment (`# ...`
/// on x86-64, `// ...` on aarch64, whose immediates are `#3`).
pub(crate) fn bare_operands(operands: &str) -> &str {
    let operands = operands.split("# ").next().unwrap_or("");
    let operands = operands.split("//").next().unwrap_or("");
    operands.split(" <").next().unwrap_or("").trim()
}

/// The operands, split at the commas outside parentheses and brackets (`$0x1,0xc(%rbx,%rbp,4)` and
/// `x0, [x1, #8]` have two), each trimmed; none for an empty text.
pub(crate) fn split_operands(operands: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    if operands.trim().is_empty() {
        return parts;
    }
    let (mut depth, mut start) = (0i32, 0);
    for (index, character) in operands.char_indices() {
        match character {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(operands[start..index].trim());
                start = index + 1;
            }
            _ => {}
        }
    }
    parts.push(operands[start..].trim());
    parts
}

/// The target of a direct branch, which `objdump` prints as its last operand in hex (`je 14 <f+0x14>`,
/// `cbz w0, 1c <f+0x1c>`); `None` for a register or memory operand.
pub(crate) fn branch_target(operands: &str) -> Option<u64> {
    let last = bare_operands(operands).rsplit(',').next()?.trim();
    u64::from_str_radix(last, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_targets() {
        assert!(is_function_label("0000000000000040 <spmm_pass>:"));
        assert_eq!(instruction("  1c:\tmov    %eax,%ebx"), Some((0x1c, "mov", "%eax,%ebx")));
        assert_eq!(instruction("\t\t\t2: R_X86_64_PLT32\tf-0x4"), None);
        assert_eq!(branch_target("14 <f+0x14>"), Some(0x14));
        assert_eq!(branch_target("w0, 1c <f+0x1c>"), Some(0x1c));
        assert_eq!(branch_target("*%rax"), None);
        assert_eq!(branch_target("w0, #3, 1c <f+0x1c>"), Some(0x1c));
        assert_eq!(bare_operands("0x10(%rip),%eax        # 1c <x>"), "0x10(%rip),%eax");
        assert_eq!(bare_operands("x0, [x1, #8]\t// #8"), "x0, [x1, #8]");
    }
}
