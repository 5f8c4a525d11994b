//! The JSON summary of an archive that `hrry inspect` prints.

use serde_json::{json, Value};

use super::loader::HoloLoader;
use super::types::{hex, PortDescriptor};

fn port_json(p: &PortDescriptor) -> Value {
    json!({
        "name": p.name,
        "slot": p.slot,
        "element_count": p.element_count,
        "dtype": p.dtype,
        "shape": p.shape,
    })
}

/// Verifies `bytes` and describes the archive: format, version, flags, the
/// fingerprint as hex, the section table, ports, extension keys, weight and
/// constant counts (and, with the `kappa` feature, its κ-labels).
pub fn inspect_json(bytes: &[u8]) -> Result<Value, crate::Error> {
    Ok(describe(&HoloLoader::from_bytes(bytes)?))
}

/// [`inspect_json`] for an archive already loaded (e.g. mapped from a file).
pub fn describe<B: AsRef<[u8]>>(archive: &HoloLoader<B>) -> Value {
    let sections: Vec<Value> = archive
        .sections()
        .iter()
        .map(|s| {
            json!({
                "kind": s.kind.number(),
                "kind_name": s.kind.name(),
                "offset": s.offset,
                "length": s.length,
            })
        })
        .collect();
    let weight_bytes: u64 = archive.weights().map(|(_, b)| b.len() as u64).sum();
    let by_reference = archive
        .constants()
        .filter(|c| c.fingerprint.is_some())
        .count();
    let constant_count = archive.constants().count();
    #[allow(unused_mut)]
    let mut out = json!({
        "format": "holo",
        "format_version": archive.format_version(),
        "flags": archive.flags(),
        "size": archive.bytes().len(),
        "fingerprint": hex(&archive.fingerprint()),
        "sections": sections,
        "inputs": archive.inputs().iter().map(port_json).collect::<Vec<_>>(),
        "outputs": archive.outputs().iter().map(port_json).collect::<Vec<_>>(),
        "extension_keys": archive.extension_keys().collect::<Vec<_>>(),
        "weights": { "count": archive.weight_count(), "bytes": weight_bytes },
        "constants": {
            "count": constant_count,
            "inline": constant_count - by_reference,
            "by_reference": by_reference,
        },
    });
    #[cfg(feature = "kappa")]
    if let Value::Object(map) = &mut out {
        map.insert("kappa".into(), super::kappa::archive_labels_json(archive));
    }
    out
}
