//! How a file is opened: [`OpenOptions`], judging as a [`Judging`] says.

use std::path::Path;

use crate::limits::Limits;
use crate::validate::{Depth, Judging, Pass, Rule, Rules};

use super::mirror::Mirror;
use super::reader::Source;
use super::{Error, HrryFile, Mapping};
use crate::source::ReadAt;

/// Options for opening a HRRYFILE: limits, the [`Judging`] (which rules refuse
/// the file, how much of it is read), and which rules to let pass. Every judging
/// refuses the file at the first broken rule it judges, naming the rule `hrry
/// validate` reports for it.
///
/// ```
/// use hrry::file::{HrryWriter, OpenOptions};
/// use hrry::validate::Depth;
///
/// let mut w = HrryWriter::new(Vec::new(), Default::default())?;
/// w.write_row_major::<f32>("w", &[2], &[1.0, 2.0])?;
/// let bytes = w.finish()?;
///
/// // Every rule `hrry validate` judges, padding and data bytes included.
/// let file = OpenOptions::new().depth(Depth::Data).open_bytes(&bytes)?;
/// assert_eq!(file.tensor("w")?.unwrap().shape(), [2]);
/// # Ok::<(), hrry::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct OpenOptions {
    limits: Limits,
    judging: Judging,
    allowed: Vec<&'static str>,
    allow_all: bool,
    mirror_dir: Option<std::path::PathBuf>,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            limits: Limits::default(),
            judging: Judging::new(Rules::HardenedPermissive, Depth::Metadata),
            allowed: Vec::new(),
            allow_all: false,
            mirror_dir: None,
        }
    }
}

impl OpenOptions {
    /// Default limits, judging every rule of [`Rules::HardenedPermissive`] to
    /// [`Depth::Metadata`]: the spec's rules with its permissive allowances (a
    /// tensor of an unknown extension does not refuse the file) and hrry's
    /// `hardening` rules, on everything but the contents of padding and data
    /// buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// The caps on what the file may ask for.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Which rules refuse the file and how far opening reads it. Opened to
    /// [`Depth::Data`], a file is refused exactly when `hrry validate` with the
    /// same [`Rules`] does not call it valid.
    pub fn judging(mut self, judging: Judging) -> Self {
        self.judging = judging;
        self
    }

    /// Which rules refuse the file ([`Rules::HardenedPermissive`] by default). A refusal by
    /// a `hardening` rule is an [`Error::Invalid`] whose message says it is the
    /// policy's, not the spec's. Under [`Rules::Permissive`], a file holding an
    /// extension layout, composition rule or quantization scheme this library
    /// does not know opens, and reading that tensor is what fails.
    pub fn rules(mut self, rules: Rules) -> Self {
        self.judging.rules = rules;
        self
    }

    /// How far opening reads the file ([`Depth::Metadata`] by default): see
    /// [`Depth`] for what each depth judges.
    pub fn depth(mut self, depth: Depth) -> Self {
        self.judging.depth = depth;
        self
    }

    /// Lets violations of `rule` pass: to look into a damaged file (`hrry inspect
    /// --permissive` allows `HF-CRC-001`). Reading stays memory-safe whatever is
    /// allowed; a lookup whose correctness rested on the rule may fail instead.
    pub fn allow(mut self, rule: &'static Rule) -> Self {
        self.allowed.push(rule.id);
        self
    }

    /// Lets every rule pass: opens whatever can be located, to show what can be
    /// read of a damaged file (`hrry inspect --permissive`). Reading stays
    /// memory-safe; a tensor whose descriptor or placement is broken is an error
    /// when asked for, and lookups do not trust the `SORTED_INDEX` flag.
    pub fn allow_all(mut self) -> Self {
        self.allow_all = true;
        self
    }

    /// Maps `path` read-only and opens it: zero-copy, and the mapping's hazard
    /// (see [`map_file`]): the file must not change while it is open.
    /// [`OpenOptions::open_read`] reads it instead.
    pub fn open(&self, path: &Path) -> Result<HrryFile<'static>, Error> {
        self.open_mmap(map_file(path)?)
    }

    /// Opens the regular file at `path` without mapping it: what it reads (the
    /// metadata now, a tensor's bytes when first asked for) is read with
    /// positioned reads ([`FileSource`](crate::source::FileSource)) into a private
    /// mirror, as [`OpenOptions::open_source`] does. Another process truncating or
    /// rewriting the file then gives an error, never a `SIGBUS` nor bytes of two
    /// versions: every read checks that the file is still as it was opened, and
    /// fails with [`Changed`](crate::source::Changed) otherwise. What the CLI
    /// opens files with.
    pub fn open_read(&self, path: &Path) -> Result<HrryFile<'static>, Error> {
        self.open_source(crate::source::FileSource::open(path)?)
    }

    /// Opens a file already mapped (see [`map_file`]). The decode pass reads
    /// the mapping: the pages it reads (the metadata's; to [`Depth::Data`],
    /// every page) stay resident in this process until the system reclaims them.
    /// [`OpenOptions::open_mmap_read`] decodes without touching them.
    pub fn open_mmap(&self, map: Mapping) -> Result<HrryFile<'static>, Error> {
        self.decode(Source::Mapped(map), None)
    }

    /// Opens `map`, a mapping of the file `file` reads, decoding it with
    /// positioned reads of `file` ([`FileSource`](crate::source::FileSource))
    /// rather than through the mapping: opening holds what the metadata decodes
    /// to and pieces of what it reads, and makes none of the mapping's pages
    /// resident (to [`Depth::Data`], the decode pass reads every byte);
    /// tensors are then borrowed from the mapping as with
    /// [`OpenOptions::open_mmap`], each page resident once touched. `file`
    /// must be the file `map` maps (a length that differs is an error).
    ///
    /// ```
    /// use hrry::file::{map_file, HrryWriter, OpenOptions, WriterOptions};
    /// use hrry::source::FileSource;
    ///
    /// let path = std::env::temp_dir().join(format!("hrry-mmap-read-{}.hrry", std::process::id()));
    /// let mut w = HrryWriter::create(&path, WriterOptions::default())?;
    /// w.write_row_major::<f32>("w", &[2], &[1.0, 2.0])?;
    /// w.finish_file()?;
    ///
    /// let source = FileSource::open(&path)?;
    /// let map = source.map()?; // nobody changes the file while it is mapped
    /// let file = OpenOptions::new().open_mmap_read(map, &source)?;
    /// assert_eq!(file.tensor("w")?.unwrap().as_slice::<f32>()?, [1.0, 2.0]);
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_mmap_read(
        &self,
        map: Mapping,
        file: &dyn ReadAt,
    ) -> Result<HrryFile<'static>, Error> {
        if file.len() != map.len() as u64 {
            return Err(Error::Io(std::io::Error::other(format!(
                "the mapping holds {} bytes but the file {}: not the file mapped, or it changed",
                map.len(),
                file.len()
            ))));
        }
        self.decode(Source::Mapped(map), Some(file))
    }

    /// Opens the HRRYFILE `source` holds: a remote object (`hrry::remote::RemoteSource`,
    /// or `OpenOptions::open_url`, with feature `remote`), a Python file object,
    /// anything read at an offset. Same decode pass, checks and
    /// refusals as [`OpenOptions::open`].
    ///
    /// What the file reads is mirrored in a sparse temporary file of the source's
    /// length (in [`OpenOptions::mirror_dir`], else the system's temporary folder),
    /// mapped: tensors are borrowed `&[u8]` as from a mapped file, only the byte
    /// ranges asked for are read from the source (the metadata while opening, a
    /// descriptor or a tensor's buffers when first asked for), each once, and
    /// memory does not grow with what was read. The descriptors are fetched
    /// together ([`ReadAt::prefetch`](crate::source::ReadAt::prefetch)). Bytes
    /// not fetched are never handed out: [`HrryFile::bytes`] is `None`,
    /// [`HrryFile::read_range`] fetches what it returns. A failed read of the
    /// source is [`Error::Io`], when opening or when a tensor is asked for.
    ///
    /// The source must not change while it is read (a remote source checks that
    /// it does not). Pass an `Arc` of the source to keep a handle on it (to ask a
    /// remote one what reading cost).
    ///
    /// ```
    /// use hrry::file::{HrryWriter, OpenOptions};
    ///
    /// let mut w = HrryWriter::new(Vec::new(), Default::default())?;
    /// w.write_row_major::<f32>("w", &[2], &[1.0, 2.0])?;
    /// let bytes = w.finish()?;
    ///
    /// // Any ReadAt: here bytes in memory, standing in for a remote object.
    /// let file = OpenOptions::new().open_source(bytes)?;
    /// assert_eq!(file.tensor("w")?.unwrap().as_slice::<f32>()?, [1.0, 2.0]);
    /// assert!(file.bytes().is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_source(
        &self,
        source: impl ReadAt + Send + 'static,
    ) -> Result<HrryFile<'static>, Error> {
        let mirror = Mirror::new(Box::new(source), self.mirror_dir.as_deref())?;
        self.decode(Source::Mirrored(Box::new(mirror)), None)
    }

    /// Opens the HRRYFILE at `url` (`http://`, `https://`, `s3://`) through
    /// [`OpenOptions::open_source`] over a [`crate::remote::RemoteSource`] opened
    /// with `remote`.
    #[cfg(feature = "remote")]
    pub fn open_url(
        &self,
        url: &str,
        remote: &crate::remote::RemoteOptions,
    ) -> Result<HrryFile<'static>, Error> {
        self.open_source(crate::remote::RemoteSource::open(url, remote)?)
    }

    /// Where [`OpenOptions::open_source`] puts its temporary mirror (the system's
    /// temporary folder, `TMPDIR`, by default). The mirror holds what was fetched:
    /// keep it on a disk, not in RAM (`tmpfs`), for large files.
    pub fn mirror_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.mirror_dir = Some(dir.into());
        self
    }

    /// Opens a file held in memory.
    pub fn open_bytes<'a>(&self, bytes: &'a [u8]) -> Result<HrryFile<'a>, Error> {
        self.decode(Source::Borrowed(bytes), None)
    }

    /// The decode pass these options ask for, over `source` (reading through
    /// `read_through` when given).
    fn decode<'a>(
        &self,
        source: Source<'a>,
        read_through: Option<&dyn ReadAt>,
    ) -> Result<HrryFile<'a>, Error> {
        let pass = Pass {
            allow_all: self.allow_all,
            ..Pass::reader(self.allowed.clone())
        };
        HrryFile::decode(source, read_through, self.limits, self.judging, pass)
    }
}

impl HrryFile<'static> {
    /// Maps `path` and opens it with the default [`OpenOptions`].
    pub fn open(path: &Path) -> Result<Self, Error> {
        OpenOptions::new().open(path)
    }
}

impl<'a> HrryFile<'a> {
    /// Opens a file held in memory with the default [`OpenOptions`].
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        OpenOptions::new().open_bytes(bytes)
    }
}

/// Maps the file at `path` read-only. Anything but a regular file (a directory,
/// a device, a FIFO) is refused with [`NotRegularFile`](crate::source::NotRegularFile)
/// (mapping it would fail with the obscure "No such device", or map nothing).
///
/// A mapping shows the file as it is now, not as it was: if another process
/// rewrites the file, bytes read later are the new ones, and if it truncates
/// the file, touching a page past the new end kills the process with `SIGBUS`.
/// Map only files nobody changes while they are open; [`OpenOptions::open_read`]
/// reads them instead.
pub fn map_file(path: &Path) -> std::io::Result<Mapping> {
    Mapping::map(&crate::source::open_regular(path)?)
}
