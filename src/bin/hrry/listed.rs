//! A tensor as `hrry inspect` lists it (HRRYFILEs and bare streams alike): where its
//! data sits and its descriptor, or why the descriptor does not decode; and the
//! totals over the tensors of an input.

use hrry::model::element_type::element_count;
use hrry::model::ElementType;
use hrry::schema::{scheme_name, TensorDescriptor, LAYOUT_COMPOSITE};
use serde_json::{json, Map, Value};

/// One tensor of an input, for the tensor table and the totals.
pub struct Listed<'d> {
    /// Its name (for a bare stream, the one `hrry stream unpack` gives it).
    pub name: &'d str,
    /// Absolute offset of its data.
    pub data_offset: u64,
    /// Bytes of its data.
    pub data_length: u64,
    /// Its descriptor, or why it does not decode.
    pub descriptor: Result<&'d TensorDescriptor, String>,
}

/// The element type's name of `d` (`unknown` for an unassigned tag).
pub fn element_type_name(d: &TensorDescriptor) -> &'static str {
    ElementType::from_tag(d.type_tag).map_or("unknown", |t| t.name())
}

/// The scheme name of `d`'s quantization section, when it has one.
pub fn scheme_of(d: &TensorDescriptor) -> Option<&'static str> {
    let q = d.quantization.as_ref()?;
    Some(scheme_name(q.bytes().first().copied().unwrap_or(0)))
}

/// Totals over the tensors of an input: tensors, parameters (elements of every
/// tensor but composite heads, whose members hold the data; `None` when a count
/// is unknown or overflows), data bytes, and a count per element type (`"int4
/// per-block affine"` for a quantized one), in order of first appearance.
#[derive(Clone, Debug)]
pub struct Totals {
    /// Tensors counted.
    pub tensors: u64,
    /// Their parameters.
    pub parameters: Option<u64>,
    /// Their data bytes.
    pub data_bytes: u64,
    /// Tensors per type.
    pub by_type: Vec<(String, u64)>,
}

impl Default for Totals {
    fn default() -> Self {
        Totals {
            tensors: 0,
            parameters: Some(0),
            data_bytes: 0,
            by_type: Vec::new(),
        }
    }
}

impl Totals {
    /// Counts one tensor.
    pub fn add(&mut self, t: &Listed<'_>) {
        self.tensors += 1;
        self.data_bytes = self.data_bytes.saturating_add(t.data_length);
        let Ok(d) = t.descriptor else {
            return;
        };
        let ty = element_type_name(d);
        let key = match scheme_of(d) {
            Some(scheme) => format!("{ty} {scheme}"),
            None => ty.to_string(),
        };
        self.count_type(key);
        if d.layout_tag != LAYOUT_COMPOSITE {
            self.parameters = match (self.parameters, element_count(&d.shape)) {
                (Some(p), Some(n)) => p.checked_add(n),
                _ => None,
            };
        }
    }

    /// Counts one more tensor of type `key` (only in `by_type`).
    pub fn count_type(&mut self, key: String) {
        match self.by_type.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => *n += 1,
            None => self.by_type.push((key, 1)),
        }
    }

    /// The `summary` object of an inspect document.
    pub fn json(&self) -> Value {
        let by_type: Map<String, Value> = self
            .by_type
            .iter()
            .map(|(k, n)| (k.clone(), json!(n)))
            .collect();
        json!({
            "tensors": self.tensors,
            "parameters": self.parameters,
            "data_bytes": self.data_bytes,
            "by_type": by_type,
        })
    }
}
