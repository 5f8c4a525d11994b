//! The error of opening a model file or reading a tensor's values.

/// Why a file could not be opened or a tensor's values read.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading failed.
    #[error("{0}")]
    Io(String),
    /// The file is not one of the formats, or is malformed.
    #[error("{0}")]
    Format(String),
    /// The HRRYFILE reader refused the file.
    #[error(transparent)]
    File(#[from] crate::file::Error),
    /// One tensor's values cannot be read.
    #[error("tensor {name:?}: {message}")]
    Tensor {
        /// The tensor's name.
        name: String,
        /// Why.
        message: String,
    },
    /// A reading was stopped by its consumer.
    #[error("stopped")]
    Stopped,
}
