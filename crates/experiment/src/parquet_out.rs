//! Parquet output (cargo feature `parquet`): each table is converted from its CSV form, with
//! column types read from the cells ([`cell_kind`]: all integers INT64, numbers DOUBLE, otherwise
//! and a column without a value UTF-8 strings; empty cells become nulls). One row group per
//! file.
use std::sync::Arc;

use anyhow::{Context, Result};
use parquet::basic::{LogicalType, Repetition, Type as Physical};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

use crate::cells::{cell_kind, CellKind as Kind};

/// Converts `csv` (with a header row naming `columns`) to the bytes of a Parquet file.
pub fn encode(columns: &[&str], csv: &[u8]) -> Result<Vec<u8>> {
    let mut reader = csv::Reader::from_reader(csv);
    let rows: Vec<csv::StringRecord> = reader.records().collect::<Result<_, _>>()?;
    let kinds: Vec<Kind> = (0..columns.len())
        .map(|c| cell_kind(rows.iter().map(|r| &r[c])))
        .collect();
    let mut fields = Vec::new();
    for (name, kind) in columns.iter().zip(&kinds) {
        let b = match kind {
            Kind::Int => Type::primitive_type_builder(name, Physical::INT64),
            Kind::Real => Type::primitive_type_builder(name, Physical::DOUBLE),
            Kind::Text => Type::primitive_type_builder(name, Physical::BYTE_ARRAY)
                .with_logical_type(Some(LogicalType::String)),
        };
        fields.push(Arc::new(b.with_repetition(Repetition::OPTIONAL).build()?));
    }
    let schema = Arc::new(
        Type::group_type_builder("schema")
            .with_fields(fields)
            .build()?,
    );
    let props = Arc::new(WriterProperties::builder().build());
    let mut w = SerializedFileWriter::new(Vec::new(), schema, props)?;
    let mut rg = w.next_row_group()?;
    for (c, kind) in kinds.iter().enumerate() {
        let mut col = rg.next_column()?.context("parquet column")?;
        let def: Vec<i16> = rows.iter().map(|r| i16::from(!r[c].is_empty())).collect();
        let cells = || rows.iter().map(|r| &r[c]).filter(|s| !s.is_empty());
        match kind {
            Kind::Int => {
                let v: Vec<i64> = cells().map(|s| s.parse().expect("checked")).collect();
                col.typed::<Int64Type>().write_batch(&v, Some(&def), None)?;
            }
            Kind::Real => {
                let v: Vec<f64> = cells().map(|s| s.parse().expect("checked")).collect();
                col.typed::<DoubleType>()
                    .write_batch(&v, Some(&def), None)?;
            }
            Kind::Text => {
                let v: Vec<ByteArray> = cells()
                    .map(|s| ByteArray::from(s.as_bytes().to_vec()))
                    .collect();
                col.typed::<ByteArrayType>()
                    .write_batch(&v, Some(&def), None)?;
            }
        }
        col.close()?;
    }
    rg.close()?;
    Ok(w.into_inner()?)
}

#[cfg(test)]
mod tests {
    use parquet::file::reader::{FileReader, SerializedFileReader};

    #[test]
    fn round_trips_types_and_nulls() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let csv = b"lb,n,x\nreps,1,0.5\nops,,2\n";
        std::fs::write(&path, super::encode(&["lb", "n", "x"], csv).unwrap()).unwrap();
        let r = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        assert_eq!(r.metadata().file_metadata().num_rows(), 2);
        let rows: Vec<String> = r
            .get_row_iter(None)
            .unwrap()
            .map(|row| row.unwrap().to_string())
            .collect();
        assert_eq!(rows[0], "{lb: \"reps\", n: 1, x: 0.5}");
        assert_eq!(rows[1], "{lb: \"ops\", n: null, x: 2.0}");
    }
}
