//! The wire: one `binrw` declaration per on-disk structure.
//!
//! Nothing here decides whether a value is *allowed* (that is [`crate::validate`]);
//! it only says where the bytes are. Reading a value then writing it gives the same
//! bytes back. Every variable-length count is checked against the bytes that remain
//! before anything is allocated (see `counted`), so parsing is safe on any input as
//! long as the reader is a bounded cursor over the input.

pub mod container;
pub mod descriptor;
pub mod holo;
pub mod kv;
pub mod layout;
pub mod placement;
pub mod quant;
pub mod sections;
pub mod transport;

pub use container::*;
pub use descriptor::*;
pub use kv::*;
pub use layout::*;
pub use quant::*;
pub use sections::*;

use binrw::io::{Read, Seek, SeekFrom};
use binrw::{BinRead, BinResult, Endian};

/// Bytes left between the reader's position and its end.
pub(crate) fn remaining<R: Read + Seek>(reader: &mut R) -> BinResult<u64> {
    let here = reader.stream_position()?;
    let end = reader.seek(SeekFrom::End(0))?;
    reader.seek(SeekFrom::Start(here))?;
    Ok(end.saturating_sub(here))
}

/// Largest multiple of the remaining input bytes that [`counted`] reserves up front
/// for the items' in-memory representation.
const RESERVE_PER_INPUT_BYTE: u64 = 4;

/// A `parse_with` helper reading `n` items of at least `min_item_size` bytes each,
/// refusing before any allocation when the input cannot hold them.
///
/// The vector is reserved once (never more than [`RESERVE_PER_INPUT_BYTE`] times the
/// bytes that remain, so untrusted counts stay bounded by the input), and byte vectors
/// are filled with one `read_exact`: decoding a long index or a large opaque field
/// neither regrows nor copies the vector.
pub(crate) fn counted<T, R, A>(
    n: u64,
    min_item_size: u64,
) -> impl Fn(&mut R, Endian, A) -> BinResult<Vec<T>>
where
    T: for<'a> BinRead<Args<'a> = A> + 'static,
    R: Read + Seek,
    A: Clone,
{
    move |reader, endian, args| {
        let pos = reader.stream_position()?;
        let left = remaining(reader)?;
        let need = n.checked_mul(min_item_size);
        if need.is_none_or(|need| need > left) {
            return Err(binrw::Error::AssertFail {
                pos,
                message: format!(
                    "count {n} needs at least {} bytes but only {left} remain",
                    need.map_or_else(|| "more than 2^64".to_string(), |b| b.to_string())
                ),
            });
        }
        let n = usize::try_from(n).map_err(|_| binrw::Error::AssertFail {
            pos,
            message: "count does not fit in memory".into(),
        })?;
        let item_size = (std::mem::size_of::<T>() as u64).max(1);
        let reserve = (n as u64).min(left.saturating_mul(RESERVE_PER_INPUT_BYTE) / item_size);
        let mut items: Vec<T> = Vec::with_capacity(usize::try_from(reserve).unwrap_or(0));
        if let Some(bytes) = <dyn core::any::Any>::downcast_mut::<Vec<u8>>(&mut items) {
            bytes.resize(n, 0);
            reader.read_exact(bytes)?;
        } else {
            for _ in 0..n {
                items.push(T::read_options(reader, endian, args.clone())?);
            }
        }
        Ok(items)
    }
}

/// A plain, one-line account of a parse error: the innermost cause with its offset
/// and the field being read, without binrw's backtrace decoration (colour codes, box
/// drawing, source locations), which must never reach a user or a report.
/// Returns the offset (when the error has one) and the message.
pub fn plain_error(e: &binrw::Error) -> (Option<u64>, String) {
    let (root, context) = match e {
        binrw::Error::Backtrace(bt) => {
            let field = bt.frames.iter().find_map(|f| match f {
                binrw::error::BacktraceFrame::Full { message, .. }
                | binrw::error::BacktraceFrame::Message(message) => Some(
                    message
                        .trim_start_matches("While parsing ")
                        .trim_start_matches("While ")
                        .to_string(),
                ),
                binrw::error::BacktraceFrame::Custom(_) => None,
            });
            (&*bt.error, field)
        }
        other => (other, None),
    };
    let (pos, message) = match root {
        binrw::Error::BadMagic { pos, found } => {
            (Some(*pos), format!("unexpected value {found:?}"))
        }
        binrw::Error::AssertFail { pos, message } => (Some(*pos), message.clone()),
        binrw::Error::Custom { pos, err } => (Some(*pos), err.to_string()),
        binrw::Error::NoVariantMatch { pos } => (Some(*pos), "no variant matches".to_string()),
        binrw::Error::EnumErrors {
            pos,
            variant_errors,
        } => {
            // The variant whose tag matched failed for a reason worth telling; the
            // others only say their tag differs.
            let chosen = variant_errors
                .iter()
                .find(|(_, e)| !matches!(e.root_cause(), binrw::Error::BadMagic { .. }));
            match chosen {
                Some((variant, e)) => {
                    let (at, message) = plain_error(e);
                    (at.or(Some(*pos)), format!("{message} (reading {variant})"))
                }
                None => (Some(*pos), "the tag matches no known variant".to_string()),
            }
        }
        binrw::Error::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            (None, "the data ends early".to_string())
        }
        binrw::Error::Io(io) => (None, io.to_string()),
        // A backtrace's root is never itself a backtrace (binrw flattens them).
        other => (None, other.to_string()),
    };
    let message = match context {
        Some(field) => format!("{message}, {field}"),
        None => message,
    };
    (pos, message)
}

/// Reads a value of type `T` from the start of `bytes` (little-endian), returning it
/// and the number of bytes consumed.
pub fn read_from<T>(bytes: &[u8]) -> BinResult<(T, u64)>
where
    T: for<'a> BinRead<Args<'a> = ()>,
{
    let mut cursor = binrw::io::Cursor::new(bytes);
    // Errors come back plain (see `plain_error`): callers put them in messages.
    let value = T::read_le(&mut cursor).map_err(|e| {
        let (pos, message) = plain_error(&e);
        binrw::Error::AssertFail {
            pos: pos.unwrap_or(0),
            message,
        }
    })?;
    Ok((value, cursor.position()))
}

/// Encodes a value to a new byte vector (little-endian).
pub fn to_bytes<T>(value: &T) -> Vec<u8>
where
    T: for<'a> binrw::BinWrite<Args<'a> = ()>,
{
    let mut cursor = binrw::io::Cursor::new(Vec::new());
    value
        .write_le(&mut cursor)
        .expect("writing to a Vec cannot fail");
    cursor.into_inner()
}

/// A decode error as one plain line for a violation message: the reason (an input
/// that ends inside a field, a failed count check, …) and the innermost field
/// being read, without binrw's multi-line, colored backtrace.
pub fn error_text(e: &binrw::Error) -> String {
    match e {
        binrw::Error::Backtrace(b) => {
            let reason = error_text(&b.error);
            let field = b.frames.iter().find_map(|f| match f {
                binrw::error::BacktraceFrame::Full { message, .. }
                | binrw::error::BacktraceFrame::Message(message) => Some(message.clone()),
                binrw::error::BacktraceFrame::Custom(_) => None,
            });
            match field {
                Some(m) => {
                    // binrw says "While parsing …": continue the sentence.
                    let m = m
                        .strip_prefix("While")
                        .map_or(m.to_string(), |r| format!("while{r}"));
                    format!("{reason} ({m})")
                }
                None => reason,
            }
        }
        binrw::Error::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            "the bytes end inside a field".to_string()
        }
        binrw::Error::AssertFail { message, .. } => message.clone(),
        other => other.to_string(),
    }
}
