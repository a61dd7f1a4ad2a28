//! pimgnn's tables: one look for all of them ([`with_header`]), fitted to the terminal's width without breaking
//! what a cell says ([`fit_to_terminal`]). The examples include this file too, so that they print as the command
//! line does.

use comfy_table::presets::UTF8_FULL;
use comfy_table::{Cell, ColumnConstraint, ContentArrangement, Table, Width};

/// An empty table in pimgnn's style (full UTF-8 borders) with `header`.
pub fn with_header<T: Into<Cell>>(header: impl IntoIterator<Item = T>) -> Table {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL).set_header(header);
    table
}

/// Fits `table` (with all its rows) to the terminal it is printed on: headers wrap to make room, but no line of
/// a cell is broken, so `2048` never prints as `20` over `48` (when the lines do not fit, the table stays wider
/// than the terminal). Printed anywhere but to a terminal, the table is unchanged.
pub fn fit_to_terminal(table: &mut Table) {
    table.set_content_arrangement(ContentArrangement::Dynamic);
    let columns = table.column_count();
    for index in 0..columns {
        let longest_line = table
            .column_cells_iter(index)
            .flatten()
            .filter_map(|cell| cell.content().lines().map(|line| line.chars().count()).max())
            .max();
        if let (Some(longest), Some(column)) = (longest_line, table.column_mut(index)) {
            // The boundary counts the column's padding too.
            let width = u16::try_from(longest).unwrap_or(u16::MAX).saturating_add(column.padding_width());
            column.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(width)));
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_narrow_terminal_wraps_headers_but_no_value() {
        let mut table = super::with_header(["a long header that can wrap", "another long header"]);
        table.add_row(["csr:rows=2048", "12345.678"]);
        super::fit_to_terminal(&mut table);
        table.set_width(30);
        let printed = table.to_string();
        assert!(printed.contains("csr:rows=2048") && printed.contains("12345.678"), "{printed}");
        assert!(printed.lines().count() > 5, "the headers did not wrap:\n{printed}");
    }
}
