//! `HoloWriter`: builds a version-2 archive from the sections it is given.
//!
//! Sections are emitted in a fixed order (KernelCalls, Schedule, Weights,
//! ShapeRegistry, DTypeRegistry, Certificates, Trace, Metadata, Inputs, Outputs,
//! Constants, ExecPlan, WarmStart, then the Extensions in the order added), with
//! no gaps, so equal inputs always give equal bytes. KernelCalls and Weights are
//! always written (possibly empty); every other section only when set.

use std::io::Write;
use std::path::Path;

use crate::schema::holo::{
    ConstantEntryHead, EntryCount, ExtensionHead, HoloFooter, HoloHeader, IndexLevel, LevelList,
    PortEntry, PortList, SectionEntry, ShapeRegistryList, WeightEntryHead, HOLO_FOOTER_LEN,
    HOLO_HEADER_LEN, HOLO_WRITE_VERSION, SECTION_ENTRY_LEN,
};
use crate::schema::to_bytes;

use super::loader::HoloLoader;
use super::types::{
    Constant, Fingerprint, PortDescriptor, SectionKind, ShapeDescriptor, WeightStore,
    INLINE_CONSTANT_LIMIT,
};
use crate::Error;

/// Builder for a `.holo` archive.
///
/// # Examples
///
/// ```
/// use hrry::holo::{Constant, HoloLoader, HoloWriter};
///
/// let mut writer = HoloWriter::new();
/// writer
///     .set_kernel_calls(vec![1, 2, 3])
///     .set_schedule(vec![vec![0], vec![1, 2]])
///     .set_constants(vec![Constant { slot: 4, dtype: 1, bytes: vec![0; 16] }])
///     .add_extension("tokenizer", br#"{"vocab": 32000}"#.to_vec());
/// let bytes = writer.finish()?;
/// // The same sections always give the same bytes.
/// assert_eq!(writer.finish()?, bytes);
///
/// let archive = HoloLoader::from_bytes(&bytes)?;
/// assert_eq!(archive.schedule(), Some(&[vec![0], vec![1, 2]][..]));
/// assert_eq!(archive.constant_for_slot(4).map(|c| c.bytes.len()), Some(16));
/// // Re-encoding a loaded archive gives its bytes back.
/// assert_eq!(HoloWriter::from_loader(&archive).finish()?, bytes);
/// # Ok::<(), hrry::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct HoloWriter {
    kernel_calls: Vec<u8>,
    schedule: Option<Vec<Vec<u32>>>,
    weights: WeightStore,
    shape_registry: Option<Vec<ShapeDescriptor>>,
    dtype_registry: Option<Vec<u8>>,
    certificates: Option<Vec<u8>>,
    trace: Option<Vec<u8>>,
    metadata: Option<Vec<u8>>,
    inputs: Option<Vec<PortDescriptor>>,
    outputs: Option<Vec<PortDescriptor>>,
    constants: Option<Vec<Constant>>,
    exec_plan: Option<Vec<Vec<u32>>>,
    warm_start: Option<Vec<u8>>,
    extensions: Vec<(String, Vec<u8>)>,
}

/// A value that does not fit its wire field (or another the writer cannot write).
fn limit(field: &str, what: String) -> Error {
    Error::Write(format!("{field}: {what}"))
}

fn fits<T: TryFrom<usize>>(n: usize, field: &str) -> Result<(), Error> {
    T::try_from(n).map(|_| ()).map_err(|_| {
        limit(
            field,
            format!("{n} does not fit the field's {} bytes", size_of::<T>()),
        )
    })
}

impl HoloWriter {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// A builder holding every section of `archive`, so that `finish` re-encodes it
    /// (byte-identically for an archive this writer produced). Constants are taken
    /// by value and placed again by the inline threshold.
    pub fn from_loader<B: AsRef<[u8]>>(archive: &HoloLoader<B>) -> Self {
        let mut w = HoloWriter::new();
        let opaque = |kind| archive.section_bytes(kind).map(<[u8]>::to_vec);
        w.kernel_calls = opaque(SectionKind::KernelCalls).unwrap_or_default();
        w.schedule = archive.schedule().map(<[Vec<u32>]>::to_vec);
        for (_, body) in archive.weights() {
            w.weights.insert(body.to_vec());
        }
        w.shape_registry = archive.shape_registry().map(<[ShapeDescriptor]>::to_vec);
        w.dtype_registry = opaque(SectionKind::DTypeRegistry);
        w.certificates = opaque(SectionKind::Certificates);
        w.trace = opaque(SectionKind::Trace);
        w.metadata = opaque(SectionKind::Metadata);
        let has = |kind| archive.has_section(kind);
        w.inputs = has(SectionKind::Inputs).then(|| archive.inputs().to_vec());
        w.outputs = has(SectionKind::Outputs).then(|| archive.outputs().to_vec());
        w.constants = has(SectionKind::Constants).then(|| {
            archive
                .constants()
                .map(|c| Constant {
                    slot: c.slot,
                    dtype: c.dtype,
                    bytes: c.bytes.to_vec(),
                })
                .collect()
        });
        w.exec_plan = archive.exec_plan().map(<[Vec<u32>]>::to_vec);
        w.warm_start = opaque(SectionKind::WarmStart);
        for key in archive.extension_keys() {
            let value = archive.extension(key).unwrap_or_default().to_vec();
            w.extensions.push((key.to_string(), value));
        }
        w
    }

    /// Sets the KernelCalls stream (opaque bytes).
    pub fn set_kernel_calls(&mut self, bytes: Vec<u8>) -> &mut Self {
        self.kernel_calls = bytes;
        self
    }

    /// Sets the Schedule: levels of node ids.
    pub fn set_schedule(&mut self, levels: Vec<Vec<u32>>) -> &mut Self {
        self.schedule = Some(levels);
        self
    }

    /// Sets the weight pool. Large constants are added to it by `finish`.
    pub fn set_weights(&mut self, weights: WeightStore) -> &mut Self {
        self.weights = weights;
        self
    }

    /// Sets the ShapeRegistry.
    pub fn set_shape_registry(&mut self, shapes: Vec<ShapeDescriptor>) -> &mut Self {
        self.shape_registry = Some(shapes);
        self
    }

    /// Sets the DTypeRegistry (opaque bytes).
    pub fn set_dtype_registry(&mut self, bytes: Vec<u8>) -> &mut Self {
        self.dtype_registry = Some(bytes);
        self
    }

    /// Sets the Certificates (opaque bytes).
    pub fn set_certificates(&mut self, bytes: Vec<u8>) -> &mut Self {
        self.certificates = Some(bytes);
        self
    }

    /// Sets the Trace (opaque bytes).
    pub fn set_trace(&mut self, bytes: Vec<u8>) -> &mut Self {
        self.trace = Some(bytes);
        self
    }

    /// Sets the Metadata (opaque bytes).
    pub fn set_metadata(&mut self, bytes: Vec<u8>) -> &mut Self {
        self.metadata = Some(bytes);
        self
    }

    /// Sets the input ports.
    pub fn set_inputs(&mut self, ports: Vec<PortDescriptor>) -> &mut Self {
        self.inputs = Some(ports);
        self
    }

    /// Sets the output ports.
    pub fn set_outputs(&mut self, ports: Vec<PortDescriptor>) -> &mut Self {
        self.outputs = Some(ports);
        self
    }

    /// Sets the constants. Bodies longer than [`INLINE_CONSTANT_LIMIT`] bytes are
    /// stored once in Weights and referenced by fingerprint; the rest are inlined.
    pub fn set_constants(&mut self, constants: Vec<Constant>) -> &mut Self {
        self.constants = Some(constants);
        self
    }

    /// Sets the ExecPlan: levels of kernel-call indices.
    pub fn set_exec_plan(&mut self, levels: Vec<Vec<u32>>) -> &mut Self {
        self.exec_plan = Some(levels);
        self
    }

    /// Sets the WarmStart data (opaque bytes).
    pub fn set_warm_start(&mut self, bytes: Vec<u8>) -> &mut Self {
        self.warm_start = Some(bytes);
        self
    }

    /// Adds an Extension section holding `bytes` under `key`. Keys must be unique;
    /// `finish` rejects a repeated key.
    pub fn add_extension(&mut self, key: impl Into<String>, bytes: Vec<u8>) -> &mut Self {
        self.extensions.push((key.into(), bytes));
        self
    }

    /// Encodes the archive: header, section table, payloads and BLAKE3 footer.
    ///
    /// Fails only when a value does not fit its wire field (more than 65535
    /// sections, a name or key over 65535 bytes, a rank over 255, a count over
    /// 2^32 − 1) or when two extensions share a key.
    pub fn finish(&self) -> Result<Vec<u8>, Error> {
        let payloads = self.payloads()?;
        assemble(&payloads)
    }

    /// Encodes the archive and writes it to `path` as [`crate::file::Output`] does:
    /// a regular file through a temporary file in the same directory, which is then
    /// renamed over `path`.
    pub fn write_to_path(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        let path = path.as_ref();
        let bytes = self.finish()?;
        let io_error = |e: std::io::Error| {
            Error::Io(std::io::Error::new(
                e.kind(),
                format!("{}: {e}", path.display()),
            ))
        };
        let mut out = crate::file::Output::create(path, &[]).map_err(|e| io_error(e.into()))?;
        out.write_all(&bytes).map_err(io_error)?;
        out.commit().map_err(|e| io_error(e.into()))
    }

    /// The `(kind, payload)` list in emission order, as [`assemble`] frames it.
    pub fn payloads(&self) -> Result<Vec<(SectionKind, Vec<u8>)>, Error> {
        let mut out = Vec::new();
        out.push((SectionKind::KernelCalls, self.kernel_calls.clone()));
        if let Some(levels) = &self.schedule {
            out.push((SectionKind::Schedule, encode_levels(levels, "Schedule")?));
        }
        // Large constant bodies not already in the pool join it after the pool's
        // own entries, borrowed rather than copied into a second store.
        let mut extra: Vec<(Fingerprint, &[u8])> = Vec::new();
        let constants = match &self.constants {
            Some(c) => Some(encode_constants(c, &self.weights, &mut extra)?),
            None => None,
        };
        out.push((SectionKind::Weights, encode_weights(&self.weights, &extra)?));
        if let Some(shapes) = &self.shape_registry {
            out.push((SectionKind::ShapeRegistry, encode_shapes(shapes)?));
        }
        let opaque = [
            (SectionKind::DTypeRegistry, &self.dtype_registry),
            (SectionKind::Certificates, &self.certificates),
            (SectionKind::Trace, &self.trace),
            (SectionKind::Metadata, &self.metadata),
        ];
        for (kind, bytes) in opaque {
            if let Some(b) = bytes {
                out.push((kind, b.clone()));
            }
        }
        if let Some(ports) = &self.inputs {
            out.push((SectionKind::Inputs, encode_ports(ports, "Inputs")?));
        }
        if let Some(ports) = &self.outputs {
            out.push((SectionKind::Outputs, encode_ports(ports, "Outputs")?));
        }
        if let Some(c) = constants {
            out.push((SectionKind::Constants, c));
        }
        if let Some(levels) = &self.exec_plan {
            out.push((SectionKind::ExecPlan, encode_levels(levels, "ExecPlan")?));
        }
        if let Some(b) = &self.warm_start {
            out.push((SectionKind::WarmStart, b.clone()));
        }
        for (i, (key, value)) in self.extensions.iter().enumerate() {
            if self.extensions[..i].iter().any(|(k, _)| k == key) {
                return Err(limit(
                    "Extension key",
                    format!("{key:?} is added twice; keys must be unique"),
                ));
            }
            fits::<u16>(key.len(), "Extension key_length")?;
            let mut payload = to_bytes(&ExtensionHead {
                key: key.as_bytes().to_vec(),
            });
            payload.extend_from_slice(value);
            out.push((SectionKind::Extension, payload));
        }
        Ok(out)
    }
}

/// Frames `(kind, payload)` sections into an archive: header, table, the payloads
/// back to back in the given order, and the footer.
pub fn assemble(sections: &[(SectionKind, Vec<u8>)]) -> Result<Vec<u8>, Error> {
    let section_count = u16::try_from(sections.len())
        .map_err(|_| limit("section_count", format!("{} sections", sections.len())))?;
    let table_end = HOLO_HEADER_LEN + u64::from(section_count) * SECTION_ENTRY_LEN;
    let payload_total: u64 = sections.iter().map(|(_, p)| p.len() as u64).sum();
    let total = table_end + payload_total + HOLO_FOOTER_LEN;
    let mut out = Vec::with_capacity(usize::try_from(total).unwrap_or(0));
    out.extend_from_slice(&to_bytes(&HoloHeader {
        format_version: HOLO_WRITE_VERSION,
        flags: 0,
        section_count,
    }));
    let mut offset = table_end;
    for (kind, payload) in sections {
        out.extend_from_slice(&to_bytes(&SectionEntry {
            kind: kind.number(),
            padding: [0; 7],
            offset,
            length: payload.len() as u64,
        }));
        offset += payload.len() as u64;
    }
    for (_, payload) in sections {
        out.extend_from_slice(payload);
    }
    let fingerprint = *blake3::hash(&out).as_bytes();
    out.extend_from_slice(&to_bytes(&HoloFooter { fingerprint }));
    Ok(out)
}

fn encode_levels(levels: &[Vec<u32>], what: &str) -> Result<Vec<u8>, Error> {
    fits::<u32>(levels.len(), what)?;
    for level in levels {
        fits::<u32>(level.len(), what)?;
    }
    Ok(to_bytes(&LevelList {
        levels: levels
            .iter()
            .map(|l| IndexLevel { indices: l.clone() })
            .collect(),
    }))
}

fn encode_ports(ports: &[PortDescriptor], what: &str) -> Result<Vec<u8>, Error> {
    fits::<u32>(ports.len(), what)?;
    let mut entries = Vec::with_capacity(ports.len());
    for p in ports {
        fits::<u16>(p.name.len(), "port name_length")?;
        fits::<u8>(p.shape.len(), "port rank")?;
        entries.push(PortEntry {
            name: p.name.as_bytes().to_vec(),
            slot: p.slot,
            element_count: p.element_count,
            dtype: p.dtype,
            shape: p.shape.clone(),
        });
    }
    Ok(to_bytes(&PortList { ports: entries }))
}

fn encode_shapes(shapes: &[ShapeDescriptor]) -> Result<Vec<u8>, Error> {
    fits::<u32>(shapes.len(), "ShapeRegistry")?;
    for s in shapes {
        fits::<u32>(s.overflow.len(), "ShapeRegistry overflow_count")?;
    }
    Ok(to_bytes(&ShapeRegistryList {
        shapes: shapes.to_vec(),
    }))
}

fn encode_weights(weights: &WeightStore, extra: &[(Fingerprint, &[u8])]) -> Result<Vec<u8>, Error> {
    let entries = || {
        weights
            .iter()
            .map(|(f, b)| (*f, b))
            .chain(extra.iter().copied())
    };
    let count = weights.len() + extra.len();
    fits::<u32>(count, "Weights count")?;
    let body_total: usize = entries().map(|(_, b)| b.len() + 40).sum();
    let mut out = Vec::with_capacity(4 + body_total);
    out.extend_from_slice(&to_bytes(&EntryCount {
        count: count as u32,
    }));
    for (fingerprint, body) in entries() {
        out.extend_from_slice(&to_bytes(&WeightEntryHead {
            fingerprint,
            body_length: body.len() as u64,
        }));
        out.extend_from_slice(body);
    }
    Ok(out)
}

/// Encodes the Constants payload. Bodies over the inline limit become references;
/// those the pool lacks are appended to `extra` (once each).
fn encode_constants<'a>(
    constants: &'a [Constant],
    pool: &WeightStore,
    extra: &mut Vec<(Fingerprint, &'a [u8])>,
) -> Result<Vec<u8>, Error> {
    fits::<u32>(constants.len(), "Constants count")?;
    let mut out = to_bytes(&EntryCount {
        count: constants.len() as u32,
    });
    let mut added = std::collections::HashSet::new();
    for c in constants {
        if c.bytes.len() > INLINE_CONSTANT_LIMIT {
            let fingerprint = *blake3::hash(&c.bytes).as_bytes();
            if !pool.contains(&fingerprint) && added.insert(fingerprint) {
                extra.push((fingerprint, &c.bytes));
            }
            out.extend_from_slice(&to_bytes(&ConstantEntryHead::Reference {
                slot: c.slot,
                dtype: c.dtype,
                fingerprint,
            }));
        } else {
            out.extend_from_slice(&to_bytes(&ConstantEntryHead::Inline {
                slot: c.slot,
                dtype: c.dtype,
                body_length: c.bytes.len() as u32,
            }));
            out.extend_from_slice(&c.bytes);
        }
    }
    Ok(out)
}
