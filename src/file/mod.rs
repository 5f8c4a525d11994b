//! Reading and writing HRRYFILE containers: random access over bytes or an mmap
//! ([`HrryFile`], opened with [`OpenOptions`]), a sequential no-seek reader
//! ([`SequentialReader`]) and a single-pass writer ([`HrryWriter`]).

mod atomic;
mod copy;
mod error;
mod mapping;
mod mirror;
mod open;
mod output;
mod reader;
mod sequential;
mod writer;

pub use atomic::{watch_temporaries, AtomicFile, Temporaries};
pub use copy::{copy_through_buffer, CopyFrom};
pub use error::Error;
pub use mapping::Mapping;
pub use open::{map_file, OpenOptions};
pub use output::{Output, OutputError};
pub(crate) use reader::slice_at;
pub use reader::{Descriptors, HrryFile, Tensor, TensorEntry};
pub use sequential::{SequentialReader, SequentialTensor, TensorRegionEnd};
pub use writer::{HrryWriter, WriterOptions};
