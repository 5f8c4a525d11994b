//! Model identity as κ-labels (feature `kappa`), built on the `uor-addr` crate.
//!
//! A κ-label here is 71 ASCII bytes, `blake3:` followed by 64 lowercase hex
//! digits. [`address_ring`] labels canonical ring-element bytes through
//! `uor_addr::ring::address_blake3`; [`address_bytes`] labels arbitrary bytes by
//! their BLAKE3 hash; [`compose_model`] folds part labels into one model label
//! with `uor_addr::composition::compose_g2_product_blake3`.

#[cfg(feature = "json")]
use serde_json::{json, Value};

pub use uor_addr::composition::CompositionFailure;
pub use uor_addr::ring::AddressFailure;
pub use uor_addr::{AddressOutcome, KappaLabel};

#[cfg(feature = "json")]
use super::loader::HoloLoader;
use super::types::{hex, Fingerprint};

/// A 71-byte BLAKE3-axis κ-label.
pub type Label = KappaLabel<71>;

/// Why a label could not be made.
///
/// The one error type of its own in `holo`: it is about computing labels (the
/// failures of `uor-addr`, behind the `kappa` feature), not about reading or
/// writing archives, so it is not a case of [`crate::Error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum KappaError {
    /// The input is not the canonical bytes of a ring element.
    #[error("not a canonical ring element: {0:?}")]
    Address(AddressFailure),
    /// A part label was rejected by the composition.
    #[error("composition failed: {0:?}")]
    Composition(CompositionFailure),
    /// [`compose_model`] was given no parts.
    #[error("a model needs at least one part label")]
    NoParts,
}

/// Labels the canonical bytes of a ring element (Witt level byte then its
/// little-endian coefficient) on the BLAKE3 σ-axis.
pub fn address_ring(canonical_bytes: &[u8]) -> Result<AddressOutcome<71>, KappaError> {
    uor_addr::ring::address_blake3(canonical_bytes).map_err(KappaError::Address)
}

/// The label of a known BLAKE3 digest: `blake3:` and the digest in hex.
pub fn label_from_fingerprint(digest: &Fingerprint) -> Label {
    let text = format!("blake3:{}", hex(digest));
    // 7 + 64 ASCII bytes: always a well-formed 71-byte label.
    KappaLabel::from_bytes(text.as_bytes()).expect("blake3:<64 hex> is a 71-byte label")
}

/// The label of arbitrary bytes: the label of their BLAKE3 hash. Equal bytes give
/// equal labels.
pub fn address_bytes(bytes: &[u8]) -> Label {
    label_from_fingerprint(blake3::hash(bytes).as_bytes())
}

/// Folds part labels into one model label with the commutative G2 product.
///
/// The product of two labels does not depend on their order, but a fold of three
/// or more would depend on the order of the steps, so the parts are first put in
/// byte order and then folded from the left: the result is the same for any
/// permutation of `parts`. One part gives that part's label back.
pub fn compose_model(parts: &[Label]) -> Result<Label, KappaError> {
    let mut sorted: Vec<&Label> = parts.iter().collect();
    sorted.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    let (first, rest) = sorted.split_first().ok_or(KappaError::NoParts)?;
    let mut acc = **first;
    for part in rest {
        acc = uor_addr::composition::compose_g2_product_blake3(&acc, part)
            .map_err(KappaError::Composition)?
            .address;
    }
    Ok(acc)
}

/// The labels `hrry inspect` shows for an archive: `content` (the label of the
/// bytes the footer covers) and `model` (the composition of every section
/// payload's label, so independent of section order).
#[cfg(feature = "json")]
pub fn archive_labels_json<B: AsRef<[u8]>>(archive: &HoloLoader<B>) -> Value {
    let content = label_from_fingerprint(&archive.fingerprint());
    let parts: Vec<Label> = archive
        .sections()
        .iter()
        .map(|s| address_bytes(archive.section_payload(s)))
        .collect();
    let model = compose_model(&parts);
    json!({
        "content": content.as_str(),
        "model": model.as_ref().map_or_else(|e| Value::String(format!("error: {e}")), |l| Value::String(l.as_str().to_string())),
        "parts": parts.len(),
    })
}
