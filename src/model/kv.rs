//! KV metadata values from and to Rust values.
//!
//! `KvValue::from("text")`, `KvValue::from(42)`, `KvValue::from(vec![1.0, 2.0])`
//! build values of the matching KV type (file-format.md, "KV Value Types"); the
//! `as_*` accessors read them back. Rust integers become `int64` when signed and
//! `uint64` when unsigned; byte vectors and slices become `bytes`; vectors of
//! numbers, booleans or strings become typed arrays.

use crate::schema::{KvArray, KvElement, KvScalar, KvValue, LenBytes};

/// The value tags of the KV types (file-format.md, "KV Value Types").
const TAG_STRING: u8 = 0x01;
const TAG_INT64: u8 = 0x02;
const TAG_UINT64: u8 = 0x03;
const TAG_FLOAT64: u8 = 0x04;
const TAG_BOOL: u8 = 0x05;
const TAG_BYTES: u8 = 0x06;

fn len_bytes(bytes: impl Into<Vec<u8>>) -> LenBytes {
    LenBytes {
        bytes: bytes.into(),
    }
}

/// `From` impls for `$target`, one per source type, each a closure-like body.
macro_rules! from_impls {
    ($target:ty { $($t:ty => |$v:ident| $e:expr),+ $(,)? }) => {$(
        impl From<$t> for $target {
            fn from($v: $t) -> Self {
                $e
            }
        }
    )+};
}

from_impls! { KvScalar {
    &str => |v| KvScalar::String(len_bytes(v)),
    String => |v| KvScalar::String(len_bytes(v)),
    i64 => |v| KvScalar::Int64(v),
    i32 => |v| KvScalar::Int64(v.into()),
    u64 => |v| KvScalar::Uint64(v),
    u32 => |v| KvScalar::Uint64(v.into()),
    f64 => |v| KvScalar::Float64(v),
    f32 => |v| KvScalar::Float64(v.into()),
    bool => |v| KvScalar::Bool(u8::from(v)),
    &[u8] => |v| KvScalar::Bytes(len_bytes(v)),
}}

from_impls! { KvValue {
    &str => |v| KvValue::String(len_bytes(v)),
    String => |v| KvValue::String(len_bytes(v)),
    &String => |v| KvValue::String(len_bytes(v.as_str())),
    i64 => |v| KvValue::Int64(v),
    i32 => |v| KvValue::Int64(v.into()),
    u64 => |v| KvValue::Uint64(v),
    u32 => |v| KvValue::Uint64(v.into()),
    usize => |v| KvValue::Uint64(v as u64),
    f64 => |v| KvValue::Float64(v),
    f32 => |v| KvValue::Float64(v.into()),
    bool => |v| KvValue::Bool(u8::from(v)),
    Vec<u8> => |v| KvValue::Bytes(len_bytes(v)),
    &[u8] => |v| KvValue::Bytes(len_bytes(v)),
}}

/// A typed array of `values`, all of type `element_tag` (also when empty).
fn array<T: Into<KvScalar>>(element_tag: u8, values: impl IntoIterator<Item = T>) -> KvValue {
    KvValue::Array(KvArray::new(
        element_tag,
        values.into_iter().map(Into::into),
    ))
}

macro_rules! array_from {
    ($($t:ty => $tag:expr),+ $(,)?) => {$(
        impl From<Vec<$t>> for KvValue {
            fn from(v: Vec<$t>) -> Self {
                array($tag, v)
            }
        }
        impl From<&[$t]> for KvValue {
            fn from(v: &[$t]) -> Self {
                array($tag, v.iter().cloned())
            }
        }
    )+};
}

array_from! {
    i64 => TAG_INT64,
    i32 => TAG_INT64,
    u64 => TAG_UINT64,
    u32 => TAG_UINT64,
    f64 => TAG_FLOAT64,
    f32 => TAG_FLOAT64,
    bool => TAG_BOOL,
    String => TAG_STRING,
    &str => TAG_STRING,
}

impl From<Vec<Vec<u8>>> for KvValue {
    fn from(v: Vec<Vec<u8>>) -> Self {
        array(
            TAG_BYTES,
            v.into_iter().map(|b| KvScalar::Bytes(len_bytes(b))),
        )
    }
}

/// The readers shared by values and array elements.
macro_rules! accessors {
    ($t:ident) => {
        impl $t {
            /// The text of a `string` value (`None` for another type or bytes that
            /// are not UTF-8).
            pub fn as_str(&self) -> Option<&str> {
                match self {
                    $t::String(s) => std::str::from_utf8(&s.bytes).ok(),
                    _ => None,
                }
            }

            /// An `int64` value.
            pub fn as_i64(&self) -> Option<i64> {
                match self {
                    $t::Int64(v) => Some(*v),
                    _ => None,
                }
            }

            /// A `uint64` value.
            pub fn as_u64(&self) -> Option<u64> {
                match self {
                    $t::Uint64(v) => Some(*v),
                    _ => None,
                }
            }

            /// A `float64` value.
            pub fn as_f64(&self) -> Option<f64> {
                match self {
                    $t::Float64(v) => Some(*v),
                    _ => None,
                }
            }

            /// A `bool` value (`None` for a stored byte other than 0 or 1).
            pub fn as_bool(&self) -> Option<bool> {
                match self {
                    $t::Bool(0) => Some(false),
                    $t::Bool(1) => Some(true),
                    _ => None,
                }
            }

            /// The bytes of a `bytes` value.
            pub fn as_bytes(&self) -> Option<&[u8]> {
                match self {
                    $t::Bytes(b) => Some(&b.bytes),
                    _ => None,
                }
            }
        }
    };
}

accessors!(KvValue);
accessors!(KvScalar);

impl<'a> KvElement<'a> {
    /// The text of a `string` element (`None` for another type or bytes that are
    /// not UTF-8).
    pub fn as_str(&self) -> Option<&'a str> {
        match *self {
            KvElement::String(s) => std::str::from_utf8(s).ok(),
            _ => None,
        }
    }

    /// An `int64` element.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            KvElement::Int64(v) => Some(v),
            _ => None,
        }
    }

    /// A `uint64` element.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            KvElement::Uint64(v) => Some(v),
            _ => None,
        }
    }

    /// A `float64` element.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            KvElement::Float64(v) => Some(v),
            _ => None,
        }
    }

    /// A `bool` element (`None` for a stored byte other than 0 or 1).
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            KvElement::Bool(0) => Some(false),
            KvElement::Bool(1) => Some(true),
            _ => None,
        }
    }

    /// The bytes of a `bytes` element.
    pub fn as_bytes(&self) -> Option<&'a [u8]> {
        match *self {
            KvElement::Bytes(b) => Some(b),
            _ => None,
        }
    }
}

impl KvValue {
    /// An `array` value (its elements are read in place: [`KvArray::iter`]).
    pub fn as_array(&self) -> Option<&KvArray> {
        match self {
            KvValue::Array(a) => Some(a),
            _ => None,
        }
    }
}
