//! The one error type of the library: every way a file, stream or message can be
//! refused is a [`Violation`] naming its rule; besides, a reader called wrongly
//! ([`Error::Usage`]), a writer refusing ([`Error::Write`]), an operation that does
//! not handle a valid input ([`Error::Unsupported`]), an input of another format or
//! a malformed foreign one ([`Error::Format`]) and I/O.
//!
//! Dequantizing, exporting, viewing a tensor as typed values, layout conversion,
//! reading model files (`content`), `convert` and the server's catalog all return
//! it. The remaining error types are `serve::client::ClientError` (a network
//! client's failures: a server's ERROR answer, timeouts, a closed connection) and
//! the `.holo` reader's.

use std::io;

use crate::limits::Limit;
use crate::validate::{Level, Rule, Violation};

/// Why a file, stream or message could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An I/O error from the underlying source or sink.
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),
    /// The bytes break a rule: the rule, the absolute offset of the offending field,
    /// and what was expected and found. A limit exceeded is `HF-LIM-001`, with
    /// [`Violation::limit`] saying which. The message of a `hardening` or `limit`
    /// rule says the refusal is the policy's, not the spec's.
    #[error("{}", refusal(.0))]
    Invalid(Violation),
    /// A reader was called in a way it cannot serve: an index entry of another
    /// file, an option the file cannot honour.
    #[error("invalid use: {0}")]
    Usage(String),
    /// A writer was asked for output it cannot write: a tensor or value that would
    /// break a rule of the format (a duplicate name, a shape too large, a buffer
    /// of the wrong size), or calls out of order.
    #[error("cannot write: {0}")]
    Write(String),
    /// The input is valid, but this operation does not handle it: a layout or
    /// element type it has no conversion for, a tensor that is not quantized given
    /// to the dequantizer, an output larger than the caller's bound. Another
    /// operation (or a row-wise one) may serve it.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The input is not in a format this operation reads, or is malformed in a
    /// format hrry has no rules for (safetensors, GGUF, a sharded checkpoint's
    /// index): the message names the format, and the file or offset where known.
    #[error("{0}")]
    Format(String),
}

/// The text of a violation as a reader's error: a rule of hrry's policy is named
/// as such, so that a refusal is never taken for the spec's verdict.
fn refusal(v: &Violation) -> String {
    match v.rule.level {
        Level::Spec => v.to_string(),
        Level::Hardening => format!("refused by the hardening policy (not a spec violation): {v}"),
        Level::Limit => format!("refused by a resource limit (not a spec violation): {v}"),
    }
}

impl Error {
    /// An [`Error::Invalid`] for `rule` at `offset`.
    pub fn invalid(rule: &'static Rule, offset: u64, message: impl Into<String>) -> Self {
        Error::Invalid(Violation::new(rule, offset, message))
    }

    /// An [`Error::Invalid`] for `HF-LIM-001`: the input asks for more than `limit`.
    pub fn limit(limit: Limit, offset: u64, message: impl Into<String>) -> Self {
        Error::Invalid(Violation::limit(limit, offset, message))
    }

    /// The violation, when the error is one.
    pub fn violation(&self) -> Option<&Violation> {
        match self {
            Error::Invalid(v) => Some(v),
            _ => None,
        }
    }

    /// The broken rule, when the error is a violation.
    pub fn rule(&self) -> Option<&'static Rule> {
        self.violation().map(|v| v.rule)
    }

    /// The error with `path` named in its message, for a caller handling several
    /// files: an I/O error keeps its kind, a violation its rule and offset.
    pub fn in_file(self, path: impl AsRef<std::path::Path>) -> Self {
        let path = path.as_ref().display();
        match self {
            Error::Io(e) => io_at(path.to_string(), e),
            Error::Invalid(mut v) => {
                v.message = format!("{path}: {}", v.message);
                Error::Invalid(v)
            }
            Error::Usage(m) => Error::Usage(format!("{path}: {m}")),
            Error::Write(m) => Error::Write(format!("{path}: {m}")),
            Error::Unsupported(m) => Error::Unsupported(format!("{path}: {m}")),
            Error::Format(m) => Error::Format(format!("{path}: {m}")),
        }
    }

    /// The limit exceeded, when the error is a violation of `HF-LIM-001`.
    pub fn exceeded_limit(&self) -> Option<Limit> {
        self.violation().and_then(|v| v.limit)
    }
}

impl Error {
    /// An [`Error::Usage`]: the caller asked for something the input cannot serve.
    pub fn usage(message: impl Into<String>) -> Self {
        Error::Usage(message.into())
    }

    /// An [`Error::Unsupported`]: the input is valid but this operation does not
    /// handle it.
    pub fn unsupported(message: impl Into<String>) -> Self {
        Error::Unsupported(message.into())
    }
}

/// An [`Error::Io`] of `path`: the path in front of the message, the kind kept.
pub(crate) fn io_at(path: impl AsRef<std::path::Path>, source: io::Error) -> Error {
    Error::Io(io::Error::new(
        source.kind(),
        format!("{}: {source}", path.as_ref().display()),
    ))
}

/// A rule a function of a lower layer (`layout`, `model`) found broken, named by
/// what it is about: those layers come before the rule table, so the rule itself is
/// looked up here ([`Broken::rule`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Broken {
    /// `TD-BUF-001`: the buffer count fits the layout.
    BufferCount,
    /// `TD-BUF-005`: a buffer holds what shape, type and layout need.
    BufferSize,
    /// `TD-SHD-001`: a shard's box lies inside its parent.
    ShardBounds,
    /// `LY-TIL-001`: tile_shape entries are positive.
    TileShape,
    /// `LY-TIL-002`: the tiled outer layout is affine.
    TiledOuter,
    /// `LY-TIL-003`: the tiled inner layout is affine or tiled.
    TiledInner,
    /// `LY-MOR-001`: morton_bits entries are positive.
    MortonBits,
    /// `LY-MOR-002`: each dimension fits its Morton bits.
    MortonShape,
    /// `LY-HIL-001`: hilbert_order is positive.
    HilbertOrder,
    /// `LY-HIL-002`: hilbert_rank is the tensor's rank.
    HilbertRank,
    /// `LY-HIL-003`: hilbert_rank is at least 2.
    HilbertMinRank,
    /// `LY-HIL-004`: every dimension is 2^hilbert_order.
    HilbertShape,
    /// `LY-CMP-001`: a member carries a shard section.
    MemberShard,
    /// `LY-CMP-003`: a member decodes to the head's type.
    MemberType,
    /// `LY-CSR-001` or `LY-CSC-001` (`by_column`): rank 2.
    CompressedRank {
        /// CSC rather than CSR.
        by_column: bool,
    },
    /// `LY-CSF-004`: mode_order is a permutation.
    CsfModeOrder,
    /// The buffer size rule of the sparse layout with this tag.
    SparseSizes(u8),
    /// The coordinate range rule of the sparse layout with this tag.
    SparseRange(u8),
    /// The pointer ends rule of the sparse layout with this tag (COO, which has no
    /// pointers: its sizes rule).
    SparseEnds(u8),
    /// The non-decreasing pointers rule of the sparse layout with this tag (COO:
    /// its sizes rule).
    SparseMonotone(u8),
}

impl Broken {
    /// The rule.
    pub(crate) fn rule(self) -> &'static Rule {
        use crate::schema::{LAYOUT_COO, LAYOUT_CSC, LAYOUT_CSR};
        use crate::validate::rules::container as c;
        use crate::validate::rules::layout as l;
        match self {
            Broken::BufferCount => &c::TD_BUF_COUNT,
            Broken::BufferSize => &c::TD_BUF_SIZE,
            Broken::ShardBounds => &c::TD_SHD_BOUNDS,
            Broken::TileShape => &l::LY_TIL_TILE_SHAPE,
            Broken::TiledOuter => &l::LY_TIL_OUTER,
            Broken::TiledInner => &l::LY_TIL_INNER,
            Broken::MortonBits => &l::LY_MOR_BITS,
            Broken::MortonShape => &l::LY_MOR_SHAPE,
            Broken::HilbertOrder => &l::LY_HIL_ORDER,
            Broken::HilbertRank => &l::LY_HIL_RANK,
            Broken::HilbertMinRank => &l::LY_HIL_MIN_RANK,
            Broken::HilbertShape => &l::LY_HIL_SHAPE,
            Broken::MemberShard => &l::LY_CMP_SHARD,
            Broken::MemberType => &l::LY_CMP_TYPE,
            Broken::CompressedRank { by_column: false } => &l::LY_CSR_RANK,
            Broken::CompressedRank { by_column: true } => &l::LY_CSC_RANK,
            Broken::CsfModeOrder => &l::LY_CSF_MODE_ORDER,
            Broken::SparseSizes(tag) => match tag {
                LAYOUT_COO => &l::LY_COO_SIZES,
                LAYOUT_CSR => &l::LY_CSR_SIZES,
                LAYOUT_CSC => &l::LY_CSC_SIZES,
                _ => &l::LY_CSF_SIZES,
            },
            Broken::SparseRange(tag) => match tag {
                LAYOUT_COO => &l::LY_COO_RANGE,
                LAYOUT_CSR => &l::LY_CSR_RANGE,
                LAYOUT_CSC => &l::LY_CSC_RANGE,
                _ => &l::LY_CSF_RANGE,
            },
            Broken::SparseEnds(tag) => match tag {
                LAYOUT_COO => &l::LY_COO_SIZES,
                LAYOUT_CSR => &l::LY_CSR_ENDS,
                LAYOUT_CSC => &l::LY_CSC_ENDS,
                _ => &l::LY_CSF_ENDS,
            },
            Broken::SparseMonotone(tag) => match tag {
                LAYOUT_COO => &l::LY_COO_SIZES,
                LAYOUT_CSR => &l::LY_CSR_MONOTONE,
                LAYOUT_CSC => &l::LY_CSC_MONOTONE,
                _ => &l::LY_CSF_MONOTONE,
            },
        }
    }
}

impl Error {
    /// An [`Error::Invalid`] for the rule `broken` names, at `offset`.
    pub(crate) fn broken(broken: Broken, offset: u64, message: impl Into<String>) -> Self {
        Error::invalid(broken.rule(), offset, message)
    }
}

impl From<Violation> for Error {
    fn from(v: Violation) -> Self {
        Error::Invalid(v)
    }
}

#[cfg(test)]
mod tests {
    use super::Error;

    #[test]
    fn reader_misuse_and_write_failures_say_what_they_are() {
        let misuse = Error::Usage("tensor_count_hint is unknown".into()).to_string();
        assert!(!misuse.contains("write"), "{misuse}");
        assert_eq!(misuse, "invalid use: tensor_count_hint is unknown");
        let write = Error::Write("duplicate tensor name \"t\"".into()).to_string();
        assert_eq!(write, "cannot write: duplicate tensor name \"t\"");
        let unsupported = Error::Unsupported("layout tag 0x09".into()).to_string();
        assert_eq!(unsupported, "unsupported: layout tag 0x09");
    }

    #[test]
    fn a_path_in_front_keeps_the_kind_and_the_rule() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        match Error::Io(io).in_file("m.hrry") {
            Error::Io(e) => {
                assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
                assert_eq!(e.to_string(), "m.hrry: gone");
            }
            other => panic!("{other:?}"),
        }
        let rule = crate::validate::rules::container::TD_BUF_SIZE.id;
        let invalid = Error::invalid(&crate::validate::rules::container::TD_BUF_SIZE, 7, "short");
        let named = invalid.in_file("m.hrry");
        assert_eq!(named.rule().map(|r| r.id), Some(rule));
        assert_eq!(named.violation().map(|v| v.offset), Some(7));
        assert_eq!(
            named.to_string(),
            format!("{rule} at offset 7: m.hrry: short")
        );
    }
}
