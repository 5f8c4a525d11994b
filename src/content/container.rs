//! Tensors held by containers, opened as [`ModelFile`]s: the HRRYFILEs inside a
//! `.holo` archive (a section's payload, a Weights body or an Extension value
//! that is one), and the tensors of a bare stream.

use std::io::{self, BufWriter, Read};
use std::ops::Range;
use std::sync::Arc;

use super::error::Error;
use super::open::ModelFile;
use crate::file::{HrryWriter, OpenOptions};
use crate::holo::{hex, map_source, ArchiveMap, SectionKind};
use crate::schema::{KvValue, LenBytes, FILE_MAGIC};
use crate::source::ReadAt;
use crate::stream::{unpack, StreamReader, UnpackOptions};

/// The most HRRYFILEs of one archive opened together (each holds a temporary
/// mirror): more is an error rather than thousands of open files.
pub const MAX_EMBEDDED: usize = 256;

/// A byte range of a shared source, itself a source: a HRRYFILE inside an archive.
#[derive(Clone)]
pub struct Window {
    source: Arc<dyn ReadAt + Send>,
    start: u64,
    len: u64,
}

impl Window {
    /// Bytes `range` of `source`; a range past its end is cut to it.
    pub fn new(source: Arc<dyn ReadAt + Send>, range: Range<u64>) -> Window {
        let end = range.end.min(source.len());
        let start = range.start.min(end);
        Window {
            source,
            start,
            len: end - start,
        }
    }
}

impl ReadAt for Window {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        match offset.checked_add(buf.len() as u64) {
            Some(end) if end <= self.len => self.source.read_at(self.start + offset, buf),
            _ => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "{} bytes at offset {offset} run past the end of a {}-byte part",
                    buf.len(),
                    self.len
                ),
            )),
        }
    }
}

/// A HRRYFILE inside an archive: a label naming where (`Weights[2]`,
/// `Extension[tokenizer]`, `ContentBlob[0]`) and its absolute byte range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Embedded {
    /// Where it is: the section kind, with the entry's index or key.
    pub label: String,
    /// Its bytes in the archive.
    pub range: Range<u64>,
}

/// Whether `range` of `source` starts with the HRRYFILE magic.
fn holds_hrryfile(source: &dyn ReadAt, range: &Range<u64>) -> io::Result<bool> {
    if range.end.saturating_sub(range.start) < FILE_MAGIC.len() as u64 {
        return Ok(false);
    }
    let mut head = [0u8; FILE_MAGIC.len()];
    source.read_at(range.start, &mut head)?;
    Ok(head == FILE_MAGIC)
}

/// The HRRYFILEs inside the archive `map` describes (read from `source`): every
/// Weights body and Extension value, and the payload of every other section,
/// that starts with the HRRYFILE magic, in table order.
pub fn embedded_files(source: &dyn ReadAt, map: &ArchiveMap) -> io::Result<Vec<Embedded>> {
    let mut found = Vec::new();
    let mut seen = [0usize; 17];
    for section in &map.sections {
        let n = &mut seen[usize::from(section.kind.number()).min(16)];
        let label = if section.kind.is_repeatable() {
            format!("{}[{n}]", section.kind.name())
        } else {
            section.kind.name().to_string()
        };
        *n += 1;
        let range = section.offset..section.offset.saturating_add(section.length);
        match section.kind {
            SectionKind::Weights => {
                for (i, (_, body)) in map.weights.iter().enumerate() {
                    if body.start >= range.start
                        && body.end <= range.end
                        && holds_hrryfile(source, body)?
                    {
                        found.push(Embedded {
                            label: format!("Weights[{i}]"),
                            range: body.clone(),
                        });
                    }
                }
            }
            SectionKind::Extension => {
                for (key, value) in &map.extensions {
                    if value.start >= range.start
                        && value.end <= range.end
                        && holds_hrryfile(source, value)?
                    {
                        found.push(Embedded {
                            label: format!("Extension[{key}]"),
                            range: value.clone(),
                        });
                    }
                }
            }
            _ if holds_hrryfile(source, &range)? => found.push(Embedded { label, range }),
            _ => {}
        }
    }
    Ok(found)
}

impl ModelFile<'static> {
    /// Opens `source`, of any format hrry reads tensors from, recognised as
    /// [`crate::Format::detect_source`] recognises it (by its magic, else the
    /// extension of `name`): a HRRYFILE, safetensors or GGUF file
    /// ([`ModelFile::open_source`]), a `.holo` archive ([`ModelFile::open_holo`])
    /// or a bare stream ([`ModelFile::open_stream`]). A captured conversation is
    /// an error.
    pub fn open_any(
        source: Arc<dyn ReadAt + Send>,
        name: Option<&std::path::Path>,
    ) -> Result<ModelFile<'static>, Error> {
        let format = crate::Format::detect_source(&*source, name).map_err(Error::Io)?;
        match format {
            crate::Format::Holo => ModelFile::open_holo(source),
            crate::Format::Stream => {
                let len = source.len();
                let reader = io::BufReader::new(crate::source::Sequential::new(&*source));
                ModelFile::open_stream(reader, len)
            }
            crate::Format::Messages => Err(Error::Format(
                "a captured conversation: its tensors are not compared (unpack them first)".into(),
            )),
            crate::Format::HrryFile => ModelFile::open_source(source),
        }
    }

    /// Opens the `.holo` archive `source` holds as the tensors of the HRRYFILEs
    /// inside it ([`embedded_files`]), each named `LABEL/NAME` (`Weights[0]/w`).
    /// Its metadata is theirs (keys `LABEL/KEY`), then the archive's own: its
    /// sections and lengths (`holo/sections`) and the fingerprint of each Weights
    /// body that is not a HRRYFILE (`holo/Weights[i]`). The archive is validated
    /// on the way (its footer hash reads every byte once); an archive whose table
    /// cannot be followed, or an inner HRRYFILE that does not open, is an error.
    pub fn open_holo(source: Arc<dyn ReadAt + Send>) -> Result<ModelFile<'static>, Error> {
        let io = Error::Io;
        let (report, map) = map_source(&*source, &Default::default()).map_err(io)?;
        let map = map.ok_or_else(|| {
            Error::Format(match report.violations.first() {
                Some(v) => format!(
                    "the archive's structure cannot be followed: {} at offset {}: {}",
                    v.rule.id, v.offset, v.message
                ),
                None => "the archive's structure cannot be followed".into(),
            })
        })?;
        Self::of_archive(source, &map)
    }

    /// [`ModelFile::open_holo`] with the archive's map at hand.
    pub fn of_archive(
        source: Arc<dyn ReadAt + Send>,
        map: &ArchiveMap,
    ) -> Result<ModelFile<'static>, Error> {
        let io = Error::Io;
        let embedded = embedded_files(&*source, map).map_err(io)?;
        if embedded.len() > MAX_EMBEDDED {
            return Err(Error::Format(format!(
                "the archive holds {} HRRYFILEs; at most {MAX_EMBEDDED} are opened together",
                embedded.len()
            )));
        }
        let mut parts = Vec::with_capacity(embedded.len());
        for e in &embedded {
            let window = Window::new(source.clone(), e.range.clone());
            let file = ModelFile::open_source(window)
                .map_err(|why| Error::Format(format!("{}: {why}", e.label)))?;
            parts.push((e.label.clone(), e.range.start, file));
        }
        let text = |s: String| {
            KvValue::String(LenBytes {
                bytes: s.into_bytes(),
            })
        };
        let sections: Vec<String> = map
            .sections
            .iter()
            .map(|s| format!("{} {}", s.kind.name(), s.length))
            .collect();
        let mut metadata = vec![("holo/sections".to_string(), text(sections.join(", ")))];
        let inner: std::collections::HashSet<u64> =
            embedded.iter().map(|e| e.range.start).collect();
        for (i, (fingerprint, body)) in map.weights.iter().enumerate() {
            if !inner.contains(&body.start) {
                metadata.push((format!("holo/Weights[{i}]"), text(hex(fingerprint))));
            }
        }
        Ok(ModelFile::of_parts(
            crate::Format::Holo,
            source.len(),
            parts,
            metadata,
        ))
    }

    /// Opens the bare stream read from `reader` as its tensors, named as
    /// [`crate::stream::unpack`] names them (`t0`, `t1.0`, …): the stream is
    /// checked and written to an unnamed temporary HRRYFILE as it is read (one
    /// tensor's data in memory at a time), which is then read. A stream breaking a
    /// rule is an error. `len` is the stream's length, for [`ModelFile::len`].
    pub fn open_stream(reader: impl Read, len: u64) -> Result<ModelFile<'static>, Error> {
        let io = Error::Io;
        let spool = tempfile::tempfile().map_err(io)?;
        let mut writer = HrryWriter::new(BufWriter::new(spool), Default::default())?;
        let mut stream = StreamReader::new(reader);
        unpack(&mut stream, &mut writer, &UnpackOptions::default())
            .map_err(|e| Error::Format(e.to_string()))?;
        let spool = writer
            .finish()?
            .into_inner()
            .map_err(|e| io(e.into_error()))?;
        let source = crate::source::FileSource::new(spool).map_err(io)?;
        let spooled = source.len();
        let file = OpenOptions::new().open_source(source)?;
        Ok(ModelFile::from_hrry(file, spooled).in_container(crate::Format::Stream, len))
    }
}
