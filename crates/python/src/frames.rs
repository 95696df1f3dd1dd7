//! Result tables as Arrow record batches, handed to Python through the Arrow PyCapsule
//! interface (`__arrow_c_stream__`), which polars reads without a copy through Python objects.
//!
//! `flows` and `summary` are built from the simulator's own records (typed columns: integers,
//! floats, strings; an unfinished flow's `finish` and `fct_us` are null). Every other table is
//! the in-memory text `repsim run` writes as its CSV file, each column typed as Parquet output
//! types it (`repsim_experiment::cells::cell_kind`: all integers `Int64`, numbers `Float64`, else and
//! a column without a value `Utf8`; an empty cell is null). Column names are the files'
//! (`docs/output-schema.md`).
use std::borrow::Borrow;
use std::sync::Arc;

use arrow_array::builder::{
    Float64Builder, Int64Builder, StringBuilder, UInt32Builder, UInt64Builder,
};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{ArrayRef, RecordBatch, RecordBatchIterator};
use arrow_schema::{ArrowError, Field, Schema};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use repsim::metrics::{FlowRow, RunSummary};
use repsim_experiment::cells::{cell_kind, CellKind};
use repsim_experiment::output::column as summary_column;
use repsim_experiment::output::FlowShape;

/// An Arrow table: one record batch with its schema.
#[pyclass(module = "repsim._repsim", frozen)]
pub struct ArrowTable {
    batch: RecordBatch,
}

#[pymethods]
impl ArrowTable {
    /// The table as an Arrow C stream (the Arrow PyCapsule interface); `requested_schema` is
    /// ignored, as the interface allows.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let schema = self.batch.schema();
        let batches = vec![Ok(self.batch.clone())];
        let reader = RecordBatchIterator::new(batches, schema);
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }

    /// Number of rows.
    fn __len__(&self) -> usize {
        self.batch.num_rows()
    }

    /// Column names.
    #[getter]
    fn columns(&self) -> Vec<String> {
        let schema = self.batch.schema();
        schema.fields().iter().map(|f| f.name().clone()).collect()
    }
}

impl ArrowTable {
    /// A table of these named columns.
    fn new(columns: Vec<(&str, ArrayRef)>) -> Result<Self, ArrowError> {
        let fields: Vec<Field> = columns
            .iter()
            .map(|(name, a)| Field::new(*name, a.data_type().clone(), a.null_count() > 0))
            .collect();
        let arrays = columns.into_iter().map(|(_, a)| a).collect();
        let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)?;
        Ok(ArrowTable { batch })
    }
}

/// Arrow errors as Python's `RuntimeError` (a table the simulator built is never malformed).
pub fn arrow_err(e: ArrowError) -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err(format!("building an Arrow table: {e}"))
}

/// `flows.csv` as a table: the same columns ([`FlowShape::columns`]), typed (`class`, `tag`,
/// `workload` and the reorder columns only when the file has them), from owned rows or rows borrowing the
/// simulation's strings.
pub fn flows<I, R, S>(rows: I) -> Result<ArrowTable, ArrowError>
where
    I: ExactSizeIterator<Item = R> + Clone,
    R: Borrow<FlowRow<S>>,
    S: AsRef<str>,
{
    let shape = FlowShape::of(rows.clone());
    let FlowShape {
        mixed,
        tagged,
        reorder,
        labelled,
    } = shape;
    let n = rows.len();
    let mut lb = StringBuilder::with_capacity(n, n * 4);
    let mut id = UInt64Builder::with_capacity(n);
    let mut src = UInt32Builder::with_capacity(n);
    let mut dst = UInt32Builder::with_capacity(n);
    let mut bytes = UInt64Builder::with_capacity(n);
    let mut start = Float64Builder::with_capacity(n);
    let mut finish = Float64Builder::with_capacity(n);
    let mut fct = Float64Builder::with_capacity(n);
    let mut rtx = UInt64Builder::with_capacity(n);
    let mut class = StringBuilder::new();
    let mut tag = UInt64Builder::new();
    let mut workload = StringBuilder::new();
    let mut ooo = Float64Builder::new();
    let mut mean_packets = Float64Builder::new();
    let mut max_packets = UInt64Builder::new();
    let mut mean_bytes = Float64Builder::new();
    let mut max_bytes = UInt64Builder::new();
    for r in rows {
        let r = r.borrow();
        lb.append_value(r.lb.as_ref());
        id.append_value(r.id);
        src.append_value(r.src);
        dst.append_value(r.dst);
        bytes.append_value(r.bytes);
        start.append_value(r.start_us);
        finish.append_option(r.finish_us);
        fct.append_option(r.fct_us);
        rtx.append_value(r.retransmissions);
        if mixed {
            class.append_value(r.class.as_ref());
        }
        if tagged {
            tag.append_value(r.tag);
        }
        if labelled {
            workload.append_option(r.workload.as_ref().map(AsRef::as_ref));
        }
        if reorder {
            let v = r.reorder;
            ooo.append_option(v.map(|v| v.out_of_order_fraction));
            mean_packets.append_option(v.map(|v| v.mean_packets));
            max_packets.append_option(v.map(|v| u64::from(v.max_packets)));
            mean_bytes.append_option(v.map(|v| v.mean_bytes));
            max_bytes.append_option(v.map(|v| v.max_bytes));
        }
    }
    let mut arrays: Vec<ArrayRef> = vec![
        Arc::new(lb.finish()),
        Arc::new(id.finish()),
        Arc::new(src.finish()),
        Arc::new(dst.finish()),
        Arc::new(bytes.finish()),
        Arc::new(start.finish()),
        Arc::new(finish.finish()),
        Arc::new(fct.finish()),
        Arc::new(rtx.finish()),
    ];
    if mixed {
        arrays.push(Arc::new(class.finish()));
    }
    if tagged {
        arrays.push(Arc::new(tag.finish()));
    }
    if labelled {
        arrays.push(Arc::new(workload.finish()));
    }
    if reorder {
        arrays.push(Arc::new(ooo.finish()));
        arrays.push(Arc::new(mean_packets.finish()));
        arrays.push(Arc::new(max_packets.finish()));
        arrays.push(Arc::new(mean_bytes.finish()));
        arrays.push(Arc::new(max_bytes.finish()));
    }
    // The file's column names, in its order (the arrays above follow `flow_record`).
    let names = shape.columns();
    if names.len() != arrays.len() {
        return Err(ArrowError::SchemaError(format!(
            "flows.csv has {} columns, the frame {}",
            names.len(),
            arrays.len()
        )));
    }
    let columns = names.into_iter().zip(arrays).collect();
    ArrowTable::new(columns)
}

/// `summary.json` as a table, a row per load balancer: its scalar fields in the file's order,
/// nested objects flattened with `_`, a time's unit last (`fct_us.p99` is `fct_p99_us`, as in
/// `sweep.csv`); lists (slowdown buckets, classes, stall
/// messages) are left out (`slowdown` is its own table).
pub fn summary(runs: &[RunSummary]) -> Result<ArrowTable, ArrowError> {
    let external = |e: serde_json::Error| ArrowError::ExternalError(Box::new(e));
    let mut names: Vec<String> = Vec::new();
    let mut cells: Vec<Vec<(String, serde_json::Value)>> = Vec::new();
    for run in runs {
        // Read back from the text so that fields keep the order summary.json writes them in.
        let text = serde_json::to_string(run).map_err(external)?;
        let tree: Ordered = serde_json::from_str(&text).map_err(external)?;
        let mut row = Vec::new();
        tree.flatten("", &mut row);
        for (name, _) in &row {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        cells.push(row);
    }
    let column = |name: &str| -> Vec<Option<serde_json::Value>> {
        cells
            .iter()
            .map(|row| row.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()))
            .collect()
    };
    let mut columns: Vec<(&str, ArrayRef)> = Vec::new();
    for name in &names {
        columns.push((name, json_column(&column(name))));
    }
    ArrowTable::new(columns)
}

/// A JSON value whose objects keep their fields in the order written.
enum Ordered {
    Scalar(serde_json::Value),
    Object(Vec<(String, Ordered)>),
    List,
}

impl Ordered {
    /// The scalar leaves, named as `sweep.csv` names a summary field by its dotted path.
    fn flatten(self, path: &str, out: &mut Vec<(String, serde_json::Value)>) {
        match self {
            Ordered::Object(fields) => {
                for (k, v) in fields {
                    let path = if path.is_empty() {
                        k
                    } else {
                        format!("{path}.{k}")
                    };
                    v.flatten(&path, out);
                }
            }
            Ordered::List => {}
            Ordered::Scalar(v) => out.push((summary_column(path), v)),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Ordered {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Ordered, A::Error> {
                let mut fields = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Ordered>()? {
                    fields.push((k, v));
                }
                Ok(Ordered::Object(fields))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Ordered, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Ordered::List)
            }
            fn visit_bool<E>(self, v: bool) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(v.into()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(v.into()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(v.into()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(v.into()))
            }
            fn visit_str<E>(self, v: &str) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(v.into()))
            }
            fn visit_unit<E>(self) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(serde_json::Value::Null))
            }
            fn visit_none<E>(self) -> Result<Ordered, E> {
                Ok(Ordered::Scalar(serde_json::Value::Null))
            }
            fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Ordered, D::Error> {
                serde::Deserialize::deserialize(d)
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// One column of JSON scalars: integers (`UInt64` past `i64`), numbers, else text (booleans
/// as `true`/`false`; a column with no value is text).
fn json_column(cells: &[Option<serde_json::Value>]) -> ArrayRef {
    let present = || cells.iter().flatten().filter(|v| !v.is_null());
    if present().next().is_some() && present().all(|v| v.is_u64()) && !present().all(|v| v.is_i64())
    {
        let mut b = UInt64Builder::with_capacity(cells.len());
        for c in cells {
            b.append_option(c.as_ref().and_then(|v| v.as_u64()));
        }
        Arc::new(b.finish())
    } else if present().next().is_some() && present().all(|v| v.is_i64()) {
        let mut b = Int64Builder::with_capacity(cells.len());
        for c in cells {
            b.append_option(c.as_ref().and_then(|v| v.as_i64()));
        }
        Arc::new(b.finish())
    } else if present().next().is_some() && present().all(|v| v.is_number()) {
        let mut b = Float64Builder::with_capacity(cells.len());
        for c in cells {
            b.append_option(c.as_ref().and_then(|v| v.as_f64()));
        }
        Arc::new(b.finish())
    } else {
        let mut b = StringBuilder::new();
        for c in cells {
            match c {
                None | Some(serde_json::Value::Null) => b.append_null(),
                Some(serde_json::Value::String(s)) => b.append_value(s),
                Some(other) => b.append_value(other.to_string()),
            }
        }
        Arc::new(b.finish())
    }
}

/// A table from the CSV text `repsim run` writes (header row first).
pub fn from_csv(text: &[u8]) -> Result<ArrowTable, ArrowError> {
    let mut reader = csv::ReaderBuilder::new().from_reader(text);
    let external = |e: csv::Error| ArrowError::ExternalError(Box::new(e));
    let header: Vec<String> = reader
        .headers()
        .map_err(external)?
        .iter()
        .map(str::to_string)
        .collect();
    let mut columns: Vec<Vec<String>> = vec![Vec::new(); header.len()];
    for record in reader.records() {
        let record = record.map_err(external)?;
        for (column, cell) in columns.iter_mut().zip(record.iter()) {
            column.push(cell.to_string());
        }
    }
    let arrays: Vec<(&str, ArrayRef)> = header
        .iter()
        .zip(&columns)
        .map(|(name, cells)| (name.as_str(), text_column(cells)))
        .collect();
    ArrowTable::new(arrays)
}

/// One column of cells, typed as Parquet output types it ([`cell_kind`]); empty cells are
/// nulls.
fn text_column(cells: &[String]) -> ArrayRef {
    fn value(c: &str) -> Option<&str> {
        (!c.is_empty()).then_some(c)
    }
    match cell_kind(cells.iter().map(String::as_str)) {
        CellKind::Int => {
            let mut b = Int64Builder::with_capacity(cells.len());
            for c in cells {
                b.append_option(value(c).and_then(|c| c.parse().ok()));
            }
            Arc::new(b.finish())
        }
        CellKind::Real => {
            let mut b = Float64Builder::with_capacity(cells.len());
            for c in cells {
                b.append_option(value(c).and_then(|c| c.parse().ok()));
            }
            Arc::new(b.finish())
        }
        CellKind::Text => {
            let mut b = StringBuilder::new();
            for c in cells {
                b.append_option(value(c));
            }
            Arc::new(b.finish())
        }
    }
}
