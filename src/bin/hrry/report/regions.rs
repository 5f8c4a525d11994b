//! The regions of a file that `hrry report`'s byte map draws, per format: a
//! HRRYFILE's header, descriptors, data, KV, index and trailer; a safetensors or
//! GGUF file's header and tensor data; a `.holo` archive's header, section table,
//! sections and footer, with each section's inside (Weights entries, Extension
//! keys and values, and the structure of a HRRYFILE held there) on a second row;
//! a bare stream's tensors (descriptor, data); a conversation's frames (header,
//! payload).

use std::sync::Arc;

use hrry::content::{embedded_files, ModelFile, Window, MAX_EMBEDDED};
use hrry::file::{HrryFile, OpenOptions};
use hrry::holo::{ArchiveMap, SectionKind};
use hrry::schema::holo::{
    HOLO_FOOTER_LEN, HOLO_HEADER_LEN, SECTION_ENTRY_LEN, WEIGHT_ENTRY_HEAD_LEN,
};
use hrry::schema::transport::{MessageHeader, MESSAGE_HEADER_LEN};
use hrry::source::ReadAt;
use hrry::stream::{StreamReader, TensorNames};

/// Regions listed at most per row: a file of more (a stream of millions of tiny
/// tensors, say) shows the rest as one region, not drawn apart.
const MAX_REGIONS: usize = 100_000;

/// One region of the file, drawn on one row of the byte map.
pub struct Region {
    /// What it is: the CSS class that colours it.
    pub kind: &'static str,
    /// What the tooltip calls it.
    pub label: String,
    /// Absolute offset.
    pub start: u64,
    /// Length in bytes.
    pub len: u64,
}

impl Region {
    fn new(kind: &'static str, label: impl Into<String>, start: u64, len: u64) -> Region {
        Region {
            kind,
            label: label.into(),
            start,
            len,
        }
    }

    /// The offset after its last byte.
    pub fn end(&self) -> u64 {
        self.start.saturating_add(self.len)
    }
}

/// The regions of a HRRYFILE read leniently, padding (gaps) included; `base` is
/// where the file starts (inside an archive), `prefix` names it in labels.
pub fn hrry_regions(file: &HrryFile<'_>, base: u64, prefix: &str) -> Vec<Region> {
    let len = file.size();
    let mut r = vec![Region::new(
        "header",
        format!("{prefix}file header"),
        0,
        64.min(len),
    )];
    for e in file.entries().take(MAX_REGIONS / 2) {
        let ix = e.index_entry();
        r.push(Region::new(
            "descriptor",
            format!("{prefix}descriptor of {}", e.name()),
            ix.descriptor_offset,
            u64::from(ix.descriptor_length),
        ));
        r.push(Region::new(
            "data",
            format!("{prefix}data of {}", e.name()),
            ix.data_offset,
            ix.data_length,
        ));
    }
    let t = file.trailer();
    r.push(Region::new(
        "kv",
        format!("{prefix}KV metadata"),
        t.kv_offset,
        u64::from(t.kv_length),
    ));
    r.push(Region::new(
        "index",
        format!("{prefix}tensor index"),
        t.index_offset,
        t.index_length,
    ));
    let trailer = hrry::schema::TRAILER_LEN.min(len);
    r.push(Region::new(
        "trailer",
        format!("{prefix}trailer"),
        len - trailer,
        trailer,
    ));
    let mut r = with_padding(r, 0, len);
    for region in &mut r {
        region.start += base;
    }
    r
}

/// The regions of another format: its header, then each tensor's data.
pub fn model_regions(m: &ModelFile<'_>) -> Vec<Region> {
    let mut r: Vec<Region> = m
        .tensors()
        .iter()
        .take(MAX_REGIONS)
        .map(|t| {
            Region::new(
                "data",
                format!("data of {}", t.name),
                t.data_offset,
                t.stored_bytes,
            )
        })
        .collect();
    let first = r.iter().map(|x| x.start).min().unwrap_or(m.len());
    r.push(Region::new(
        "header",
        format!("{} header and metadata", m.format_name()),
        0,
        first,
    ));
    with_padding(r, 0, m.len())
}

/// Sorts `regions`, clipped to `start..end`, and fills the gaps with padding.
pub fn with_padding(mut regions: Vec<Region>, start: u64, end: u64) -> Vec<Region> {
    regions.retain(|r| r.len > 0 && r.start >= start && r.start < end);
    for r in &mut regions {
        r.len = r.len.min(end - r.start);
    }
    regions.sort_by_key(|r| r.start);
    let mut out = Vec::with_capacity(regions.len() * 2);
    let mut at = start;
    for r in regions {
        if r.start > at {
            out.push(Region::new("padding", "padding", at, r.start - at));
        }
        at = at.max(r.end());
        out.push(r);
    }
    if at < end {
        out.push(Region::new(
            "padding",
            "padding / unaccounted",
            at,
            end - at,
        ));
    }
    out
}

/// The two rows of a `.holo` archive of `len` bytes: its header, table,
/// sections and footer; and inside the sections, Weights entries (head, body),
/// Extensions (key, value) and the structure of each HRRYFILE held in one
/// (read leniently, so that a damaged one still shows where its parts are; at
/// most [`MAX_EMBEDDED`] of them).
pub fn holo_rows(
    source: &Arc<dyn ReadAt + Send>,
    map: Option<&ArchiveMap>,
    len: u64,
) -> Vec<Vec<Region>> {
    let footer = HOLO_FOOTER_LEN.min(len);
    let mut outer = vec![
        Region::new("header", "archive header", 0, HOLO_HEADER_LEN.min(len)),
        Region::new("trailer", "footer (BLAKE3)", len - footer, footer),
    ];
    let Some(map) = map else {
        return vec![with_padding(outer, 0, len)];
    };
    let mut count = [0u8; 2];
    if source.read_at(8, &mut count).is_ok() {
        let table = u64::from(u16::from_le_bytes(count)) * SECTION_ENTRY_LEN;
        outer.push(Region::new(
            "index",
            "section table",
            HOLO_HEADER_LEN,
            table,
        ));
    }
    let mut inner = Vec::new();
    for s in map.sections.iter().take(MAX_REGIONS) {
        outer.push(Region::new(
            "section",
            format!("{} section", s.kind.name()),
            s.offset,
            s.length,
        ));
        let end = s.offset.saturating_add(s.length);
        match s.kind {
            SectionKind::Weights => {
                inner.push(Region::new(
                    "descriptor",
                    "weight count",
                    s.offset,
                    s.length.min(4),
                ));
                for (i, (_, body)) in map.weights.iter().enumerate().take(MAX_REGIONS / 2) {
                    if body.start < s.offset || body.end > end {
                        continue;
                    }
                    let head = body
                        .start
                        .saturating_sub(WEIGHT_ENTRY_HEAD_LEN)
                        .max(s.offset);
                    inner.push(Region::new(
                        "descriptor",
                        format!("weight {i}: fingerprint and length"),
                        head,
                        body.start - head,
                    ));
                    inner.push(Region::new(
                        "data",
                        format!("weight {i} body"),
                        body.start,
                        body.end - body.start,
                    ));
                }
            }
            SectionKind::Extension => {
                if let Some((key, value)) = map
                    .extensions
                    .iter()
                    .find(|(_, v)| v.start >= s.offset && v.end == end)
                {
                    inner.push(Region::new(
                        "kv",
                        format!("Extension key {key:?}"),
                        s.offset,
                        value.start - s.offset,
                    ));
                    inner.push(Region::new(
                        "data",
                        format!("Extension {key:?} value"),
                        value.start,
                        value.end - value.start,
                    ));
                }
            }
            _ => {}
        }
    }
    // A HRRYFILE held in a section replaces the region of its bytes.
    let embedded = embedded_files(&**source, map).unwrap_or_default();
    for e in embedded.into_iter().take(MAX_EMBEDDED) {
        if inner.len() >= MAX_REGIONS {
            break;
        }
        let window = Window::new(source.clone(), e.range.clone());
        let Ok(file) = OpenOptions::new().allow_all().open_source(window) else {
            continue;
        };
        inner.retain(|r| !(r.start == e.range.start && r.end() == e.range.end));
        inner.extend(hrry_regions(
            &file,
            e.range.start,
            &format!("{}: ", e.label),
        ));
    }
    inner.retain(|r| r.len > 0);
    inner.sort_by_key(|r| r.start);
    vec![with_padding(outer, 0, len), inner]
}

/// The tensors of a bare stream of `len` bytes read from `source`: each one's
/// descriptor and data, named as `hrry stream unpack` names them; what follows a
/// point the reader cannot pass is one region, "not read".
pub fn stream_regions(source: &dyn ReadAt, len: u64) -> Vec<Region> {
    let mut reader = StreamReader::new(hrry::source::Sequential::new(source));
    let mut names = TensorNames::new();
    let mut r = Vec::new();
    let mut end = 0u64;
    while r.len() < MAX_REGIONS {
        let Ok(Some(t)) = reader.next_tensor() else {
            break;
        };
        let name = names.next(&t.descriptor);
        r.push(Region::new(
            "descriptor",
            format!("descriptor of {name}"),
            t.descriptor_offset,
            t.data_offset - t.descriptor_offset,
        ));
        r.push(Region::new(
            "data",
            format!("data of {name}"),
            t.data_offset,
            t.data_length,
        ));
        end = t.data_offset.saturating_add(t.data_length);
    }
    if end < len {
        r.push(Region::new("unread", "not read", end, len - end));
    }
    with_padding(r, 0, len)
}

/// The frames of a captured conversation of `len` bytes: each message's header
/// and payload, named by its type; a frame running past the end, and what
/// follows, is one region, "not read".
pub fn message_regions(source: &dyn ReadAt, len: u64) -> Vec<Region> {
    let mut r = Vec::new();
    let mut at = 0u64;
    let mut head = [0u8; MESSAGE_HEADER_LEN as usize];
    while at < len && r.len() < MAX_REGIONS {
        if len - at < MESSAGE_HEADER_LEN || source.read_at(at, &mut head).is_err() {
            break;
        }
        let Ok((h, _)) = hrry::schema::read_from::<MessageHeader>(&head) else {
            break;
        };
        let payload_end = at + MESSAGE_HEADER_LEN + u64::from(h.payload_length);
        if payload_end > len {
            break;
        }
        let name = hrry::stream::message::MessageType::from_tag(h.message_type).map_or_else(
            || format!("type {:#x}", h.message_type),
            |t| t.name().to_string(),
        );
        r.push(Region::new(
            "header",
            format!("{name} header (stream {})", h.stream_id),
            at,
            MESSAGE_HEADER_LEN,
        ));
        r.push(Region::new(
            "data",
            format!("{name} payload"),
            at + MESSAGE_HEADER_LEN,
            u64::from(h.payload_length),
        ));
        at = payload_end;
    }
    if at < len {
        r.push(Region::new("unread", "not read", at, len - at));
    }
    with_padding(r, 0, len)
}
