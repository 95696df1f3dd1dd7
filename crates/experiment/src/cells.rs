//! What a table's column holds, read from its cells: how Parquet output and the Python
//! package's data frames type the tables the command writes.

/// A column's kind of values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellKind {
    /// Every value is a whole number (`i64`).
    Int,
    /// Every value is a number.
    Real,
    /// Anything else, and a column with no value at all (empty cells are nulls).
    Text,
}

/// The kind of a column with these cells (empty cells are nulls and do not count).
pub fn cell_kind<'a>(cells: impl Iterator<Item = &'a str> + Clone) -> CellKind {
    let mut values = cells.filter(|c| !c.is_empty());
    if values.clone().next().is_none() {
        CellKind::Text
    } else if values.clone().all(|c| c.parse::<i64>().is_ok()) {
        CellKind::Int
    } else if values.all(|c| c.parse::<f64>().is_ok()) {
        CellKind::Real
    } else {
        CellKind::Text
    }
}

#[cfg(test)]
mod tests {
    use super::{cell_kind, CellKind};

    #[test]
    fn a_columns_kind_comes_from_its_values() {
        let kind = |cells: &[&str]| cell_kind(cells.iter().copied());
        assert_eq!(kind(&["1", "", "-3"]), CellKind::Int);
        assert_eq!(kind(&["1", "2.500000", ""]), CellKind::Real);
        assert_eq!(kind(&["reps", "1"]), CellKind::Text);
        // No value at all: text, so that an empty `lb` column still compares with a string.
        assert_eq!(kind(&["", ""]), CellKind::Text);
        assert_eq!(kind(&[]), CellKind::Text);
    }
}
