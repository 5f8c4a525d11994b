//! `HoloLoader`: a verified, read-only view of an archive held in memory or mapped
//! from a file. Every lookup returns slices of the archive itself.

use std::path::Path;

use memmap2::Mmap;

use crate::schema::holo::HoloHeader;

use super::types::{
    ConstantView, Fingerprint, PortDescriptor, SectionKind, SectionRef, ShapeDescriptor,
};
use super::walk::{walk, ArchiveIndex, ConstantBody};
use super::HoloError;

/// A verified `.holo` archive over storage `B` (a borrowed slice, a `Vec<u8>` or a
/// file mapping). Construction checks every `HOLO-…` rule in strict mode (footer,
/// section table, payloads); a loader exists only for a valid archive.
///
/// # Examples
///
/// ```
/// use hrry::holo::{HoloLoader, HoloWriter, PortDescriptor, SectionKind, WeightStore};
///
/// let mut weights = WeightStore::new();
/// let fingerprint = weights.insert(vec![7u8; 64]);
/// let mut writer = HoloWriter::new();
/// writer.set_weights(weights).set_outputs(vec![PortDescriptor {
///     name: "logits".into(),
///     slot: 1,
///     element_count: 10,
///     dtype: 1,
///     shape: vec![1, 10],
/// }]);
/// let bytes = writer.finish()?;
///
/// // HoloLoader::open(path) maps a file instead.
/// let archive = HoloLoader::from_bytes(&bytes)?;
/// assert_eq!(archive.output_port_by_name("logits").map(|p| p.slot), Some(1));
/// assert_eq!(archive.weight(&fingerprint), Some(&[7u8; 64][..]));
/// assert!(archive.has_section(SectionKind::Weights));
///
/// // A flipped byte breaks the footer hash: no loader for that archive.
/// let mut damaged = bytes.clone();
/// damaged[20] ^= 1;
/// assert!(HoloLoader::from_bytes(&damaged).is_err());
/// # Ok::<(), hrry::holo::HoloError>(())
/// ```
#[derive(Debug)]
pub struct HoloLoader<B> {
    storage: B,
    index: ArchiveIndex,
}

impl<'a> HoloLoader<&'a [u8]> {
    /// Verifies `bytes` and returns a loader borrowing them.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, HoloError> {
        Self::from_storage(bytes)
    }
}

impl HoloLoader<Mmap> {
    /// Maps the file at `path` read-only and verifies it.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, HoloError> {
        let path = path.as_ref();
        let io_error = |source| HoloError::Io {
            path: path.to_path_buf(),
            source,
        };
        // The mapping is read-only and lives inside the loader. The file could still
        // be changed by another process while mapped; like every mmap reader we
        // accept that, and the checks done at open time only hold for the bytes then.
        let map = crate::file::map_file(path).map_err(io_error)?;
        Self::from_storage(map)
    }
}

impl<B: AsRef<[u8]>> HoloLoader<B> {
    /// Verifies the bytes of `storage` and returns a loader owning it.
    pub fn from_storage(storage: B) -> Result<Self, HoloError> {
        let (report, index) = walk(storage.as_ref(), crate::validate::Judging::default());
        if let Some(v) = report.violations.first() {
            return Err(HoloError::Invalid {
                rule: v.rule,
                offset: v.offset,
                message: v.message.clone(),
                violations: report.violations.len(),
            });
        }
        let index = index.ok_or_else(|| HoloError::Invalid {
            rule: &crate::validate::rules::holo::HOLO_SIZE,
            offset: 0,
            message: "structure could not be followed".into(),
            violations: 0,
        })?;
        Ok(HoloLoader { storage, index })
    }

    /// The whole archive.
    pub fn bytes(&self) -> &[u8] {
        self.storage.as_ref()
    }

    /// The storage, giving up the loader.
    pub fn into_storage(self) -> B {
        self.storage
    }

    fn slice(&self, range: &std::ops::Range<usize>) -> &[u8] {
        self.bytes().get(range.clone()).unwrap_or_default()
    }

    /// The decoded header.
    pub fn header(&self) -> HoloHeader {
        self.index.header
    }

    /// `format_version` (2 or 3).
    pub fn format_version(&self) -> u16 {
        self.index.header.format_version
    }

    /// The header `flags` (no defined meaning; reported as found).
    pub fn flags(&self) -> u16 {
        self.index.header.flags
    }

    /// The verified 32-byte BLAKE3 content fingerprint (the footer).
    pub fn fingerprint(&self) -> Fingerprint {
        self.index.fingerprint
    }

    /// The section table, in table order.
    pub fn sections(&self) -> &[SectionRef] {
        &self.index.sections
    }

    /// The payload of `section` (an entry of [`Self::sections`]).
    pub fn section_payload(&self, section: &SectionRef) -> &[u8] {
        let start = section.offset as usize;
        self.slice(&(start..start.saturating_add(section.length as usize)))
    }

    /// The payload of the first section of `kind`, if present.
    pub fn section_bytes(&self, kind: SectionKind) -> Option<&[u8]> {
        self.index
            .sections
            .iter()
            .find(|s| s.kind == kind)
            .map(|s| self.section_payload(s))
    }

    /// The payloads of every section of `kind`, in table order.
    pub fn sections_of(&self, kind: SectionKind) -> impl Iterator<Item = &[u8]> {
        self.index
            .sections
            .iter()
            .filter(move |s| s.kind == kind)
            .map(|s| self.section_payload(s))
    }

    /// Whether a section of `kind` is present.
    pub fn has_section(&self, kind: SectionKind) -> bool {
        self.index.sections.iter().any(|s| s.kind == kind)
    }

    /// The input ports (empty without an Inputs section).
    pub fn inputs(&self) -> &[PortDescriptor] {
        &self.index.inputs
    }

    /// The output ports (empty without an Outputs section).
    pub fn outputs(&self) -> &[PortDescriptor] {
        &self.index.outputs
    }

    /// The first input port named `name`.
    pub fn input_port_by_name(&self, name: &str) -> Option<&PortDescriptor> {
        self.index.inputs.iter().find(|p| p.name == name)
    }

    /// The first output port named `name`.
    pub fn output_port_by_name(&self, name: &str) -> Option<&PortDescriptor> {
        self.index.outputs.iter().find(|p| p.name == name)
    }

    /// The value of the Extension section with `key`.
    pub fn extension(&self, key: &str) -> Option<&[u8]> {
        self.index
            .extensions
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, range)| self.slice(range))
    }

    /// The Extension keys, in table order.
    pub fn extension_keys(&self) -> impl Iterator<Item = &str> {
        self.index.extensions.iter().map(|(k, _)| k.as_str())
    }

    /// The weight body with `fingerprint`.
    pub fn weight(&self, fingerprint: &Fingerprint) -> Option<&[u8]> {
        let i = *self.index.weight_index.get(fingerprint)?;
        self.index
            .weights
            .get(i)
            .map(|(_, range)| self.slice(range))
    }

    /// Every `(fingerprint, body)` of the Weights section, in section order.
    pub fn weights(&self) -> impl Iterator<Item = (&Fingerprint, &[u8])> {
        self.index
            .weights
            .iter()
            .map(|(fp, range)| (fp, self.slice(range)))
    }

    /// Number of Weights entries.
    pub fn weight_count(&self) -> usize {
        self.index.weights.len()
    }

    /// The constants in section order, each resolved to its bytes.
    pub fn constants(&self) -> impl Iterator<Item = ConstantView<'_>> {
        self.index.constants.iter().map(|c| {
            let (fingerprint, bytes) = match &c.body {
                ConstantBody::Inline(range) => (None, self.slice(range)),
                ConstantBody::Reference {
                    fingerprint,
                    weight,
                } => (
                    Some(*fingerprint),
                    weight
                        .and_then(|w| self.index.weights.get(w))
                        .map_or(&[][..], |(_, range)| self.slice(range)),
                ),
            };
            ConstantView {
                slot: c.slot,
                dtype: c.dtype,
                fingerprint,
                bytes,
            }
        })
    }

    /// The constant filling `slot`, if any.
    pub fn constant_for_slot(&self, slot: u32) -> Option<ConstantView<'_>> {
        self.constants().find(|c| c.slot == slot)
    }

    /// The Schedule levels (node ids), when present.
    pub fn schedule(&self) -> Option<&[Vec<u32>]> {
        self.index.schedule.as_deref()
    }

    /// The ExecPlan levels (kernel-call indices), when present.
    pub fn exec_plan(&self) -> Option<&[Vec<u32>]> {
        self.index.exec_plan.as_deref()
    }

    /// The interned shapes, when a ShapeRegistry is present.
    pub fn shape_registry(&self) -> Option<&[ShapeDescriptor]> {
        self.index.shape_registry.as_deref()
    }

    /// The KernelCalls stream (opaque), when present.
    pub fn kernel_calls(&self) -> Option<&[u8]> {
        self.section_bytes(SectionKind::KernelCalls)
    }
}
