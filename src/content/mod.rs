//! The logical content of a model file of any format hrry reads — HRRYFILE,
//! safetensors, GGUF; local, or over any [`crate::source::ReadAt`] such as a
//! remote object: [`ModelFile`] opens one as tensors and metadata and reads each
//! tensor's values in logical row-major order a piece at a time; [`diff()`]
//! compares two files (`hrry diff`); [`tensor_stats`] and [`parameter_counts`]
//! give their statistics (`hrry inspect --stats`).
//!
//! Values are compared and summarised as numbers, whatever their storage: a tensor
//! stored in another layout, format or (with a tolerance) quantization compares
//! equal when its values do.
//!
//! ```
//! use hrry::content::{diff, DiffOptions, ModelFile};
//! use hrry::file::HrryWriter;
//!
//! let file = |v: f32| -> Result<Vec<u8>, hrry::file::Error> {
//!     let mut w = HrryWriter::new(Vec::new(), Default::default())?;
//!     w.write_row_major::<f32>("w", &[2], &[1.0, v])?;
//!     w.finish()
//! };
//! let a = ModelFile::open_source(file(2.0)?)?;
//! let b = ModelFile::open_source(file(2.5)?)?;
//! let d = diff(&a, &b, &DiffOptions::default())?;
//! assert!(!d.is_equal());
//! let loose = diff(&a, &b, &DiffOptions { tolerance: 0.5, ..Default::default() })?;
//! assert!(loose.is_equal());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod container;
mod diff;
mod error;
mod open;
mod stats;
mod values;

pub use container::{embedded_files, Embedded, Window, MAX_EMBEDDED};
pub use diff::{diff, ContentDiff, Diff, DiffOptions, FieldChange, MetadataDiff, TensorDiff};
pub use error::Error;
pub use open::{ModelFile, TensorInfo, PIECE};
pub use stats::{
    check_statistics, file_stats, parameter_counts, tensor_stats, DtypeCount, Histogram,
    StatisticsMismatch, StatsAccumulator, TensorStats, HISTOGRAM_BINS,
};
pub use values::{ValueKind, Values};
