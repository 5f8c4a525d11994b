//! Whole checkpoints: a sharded safetensors checkpoint (its `*.index.json`, or the
//! directory holding it) and GGUF split files (`NAME-0000N-of-0000M.gguf`), resolved
//! to the files to read, and the KV entries that record where each tensor of the
//! single output file came from.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use super::{Error, FileSource, ModelFormat};
use crate::schema::{KvArray, KvScalar, KvValue, LenBytes};

/// KV key of the input files' names (a string array, in reading order), written
/// when a checkpoint of several files (or its index) is converted.
pub const SOURCE_FILES_KEY: &str = "hrry.source.files";
/// Prefix of the KV key naming, for each tensor, the input file it came from:
/// `hrry.source.tensor.<tensor name>` holds that file's name (an element of
/// [`SOURCE_FILES_KEY`]).
pub const SOURCE_TENSOR_PREFIX: &str = "hrry.source.tensor.";
/// KV key of the safetensors index file's name.
pub const SOURCE_INDEX_KEY: &str = "hrry.source.index";
/// KV key of the safetensors index's own `metadata` object, as JSON text.
pub const SOURCE_INDEX_METADATA_KEY: &str = "hrry.source.index_metadata";

/// Largest `*.index.json` read (the same bound as a safetensors header).
const MAX_INDEX_BYTES: u64 = 100_000_000;

fn checkpoint_error(path: &Path, message: impl std::fmt::Display) -> Error {
    super::checkpoint_at(path, message)
}

/// A string KV value.
pub(crate) fn kv_string(s: &str) -> KvValue {
    KvValue::String(LenBytes {
        bytes: s.as_bytes().to_vec(),
    })
}

/// Records where tensors came from: the file names in order, then one entry per
/// tensor naming its file (`files[i]` for each `(tensor, i)`).
pub(crate) struct Provenance {
    /// Names of the input files, in reading order.
    pub files: Vec<String>,
    /// Extra entries (index name and metadata) written with them.
    pub extra: Vec<(String, KvValue)>,
}

impl Provenance {
    /// The KV entries for `tensors` (`(name, index into files)`).
    pub fn entries<'a>(
        &'a self,
        tensors: impl Iterator<Item = (&'a str, usize)> + 'a,
    ) -> impl Iterator<Item = (String, KvValue)> + 'a {
        let files = KvValue::Array(KvArray::new(
            0x01,
            self.files.iter().map(|f| {
                KvScalar::String(LenBytes {
                    bytes: f.as_bytes().to_vec(),
                })
            }),
        ));
        std::iter::once((SOURCE_FILES_KEY.to_string(), files))
            .chain(self.extra.iter().cloned())
            .chain(tensors.map(|(name, i)| {
                (
                    format!("{SOURCE_TENSOR_PREFIX}{name}"),
                    kv_string(&self.files[i]),
                )
            }))
    }
}

/// A sharded safetensors checkpoint as its index describes it.
#[derive(Debug)]
pub(crate) struct SafetensorsIndex {
    /// The index file.
    pub path: PathBuf,
    /// Shard file names as the index writes them, sorted (the reading order).
    pub shard_names: Vec<String>,
    /// The shard files.
    pub shards: Vec<PathBuf>,
    /// Tensor name to shard (index into `shards`).
    pub weight_map: HashMap<String, usize>,
    /// The index's `metadata` object, as JSON text, when present.
    pub metadata: Option<String>,
}

/// True when `path` names a safetensors index rather than a tensor file: a
/// `.json` name, or a first non-blank byte `{` (a safetensors file starts with its
/// header length).
pub(crate) fn looks_like_index(path: &Path, prefix: &[u8]) -> bool {
    let json_name = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    json_name || prefix.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

/// True when the file `path` is a safetensors index rather than a tensor file.
pub(crate) fn is_index(path: &Path) -> Result<bool, Error> {
    let mut src = FileSource::open(path)?;
    let prefix = src.read_prefix(16)?;
    Ok(ModelFormat::sniff(&prefix, src.len()).is_none() && looks_like_index(path, &prefix))
}

/// Reads and checks a `*.safetensors.index.json`: a JSON object whose
/// `weight_map` maps every tensor name to the file (beside the index) holding it.
pub(crate) fn read_index(path: &Path) -> Result<SafetensorsIndex, Error> {
    let err = |m: String| checkpoint_error(path, m);
    let len = std::fs::metadata(path)
        .map_err(|source| super::io_at(path, source))?
        .len();
    if len > MAX_INDEX_BYTES {
        return Err(err(format!(
            "the index is {len} bytes, over the {MAX_INDEX_BYTES}-byte limit"
        )));
    }
    let text = std::fs::read(path).map_err(|source| super::io_at(path, source))?;
    let json: serde_json::Value =
        serde_json::from_slice(&text).map_err(|e| err(format!("not valid JSON: {e}")))?;
    let root = json
        .as_object()
        .ok_or_else(|| err("the index is not a JSON object".into()))?;
    let map = root
        .get("weight_map")
        .ok_or_else(|| err("no \"weight_map\" object (tensor name -> shard file)".into()))?
        .as_object()
        .ok_or_else(|| err("\"weight_map\" is not an object (tensor name -> shard file)".into()))?;
    let metadata = match root.get("metadata") {
        None | Some(serde_json::Value::Null) => None,
        Some(m @ serde_json::Value::Object(_)) => Some(m.to_string()),
        Some(other) => return Err(err(format!("\"metadata\" is {other}, not an object"))),
    };
    let mut pairs: Vec<(&String, &str)> = Vec::with_capacity(map.len());
    for (tensor, file) in map {
        let file = file.as_str().ok_or_else(|| {
            err(format!(
                "weight_map[{tensor:?}] is {file}, not a shard file name"
            ))
        })?;
        if !is_plain_relative(file) {
            return Err(err(format!(
                "weight_map[{tensor:?}] names {file:?}: shard names must be relative paths inside the index's directory"
            )));
        }
        pairs.push((tensor, file));
    }
    let mut files: Vec<&str> = pairs.iter().map(|(_, f)| *f).collect();
    files.sort_unstable();
    files.dedup();
    let dir = parent_dir(path);
    let weight_map = pairs
        .iter()
        .filter_map(|(t, f)| Some(((*t).clone(), files.binary_search(f).ok()?)))
        .collect();
    Ok(SafetensorsIndex {
        path: path.to_path_buf(),
        shards: files.iter().map(|f| dir.join(f)).collect(),
        shard_names: files.iter().map(|f| f.to_string()).collect(),
        weight_map,
        metadata,
    })
}

/// True for a non-empty relative path made of plain names only (no `..`, no root).
fn is_plain_relative(name: &str) -> bool {
    let path = Path::new(name);
    !name.is_empty() && path.components().all(|c| matches!(c, Component::Normal(_)))
}

/// The directory holding `path` (`.` for a bare file name).
pub(crate) fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// The last component of `path`, as recorded in the provenance KV.
pub(crate) fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// The checkpoint file inside directory `dir`: its one `*.index.json`, else its
/// one `.safetensors` or `.gguf` file, else the first file of its one GGUF split
/// set. Anything else is ambiguous and refused with what was found.
pub(crate) fn resolve_directory(dir: &Path) -> Result<PathBuf, Error> {
    let entries = std::fs::read_dir(dir).map_err(|source| super::io_at(dir, source))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| super::io_at(dir, source))?;
        if entry
            .file_type()
            .is_ok_and(|t| t.is_file() || t.is_symlink())
        {
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    names.sort();
    let with = |suffix: &str| -> Vec<&String> {
        names
            .iter()
            .filter(|n| n.to_ascii_lowercase().ends_with(suffix))
            .collect()
    };
    let indexes = with(".index.json");
    match indexes.as_slice() {
        [one] => return Ok(dir.join(one)),
        [] => {}
        many => {
            return Err(super::no_checkpoint(
                dir,
                format!(
                    "several index files ({}): name the one to convert",
                    list(many)
                ),
            ))
        }
    }
    let tensors: Vec<&String> = with(".safetensors")
        .into_iter()
        .chain(with(".gguf"))
        .collect();
    if let [one] = tensors.as_slice() {
        return Ok(dir.join(one));
    }
    let firsts: Vec<&&String> = tensors
        .iter()
        .filter(|n| split_name(n).is_some_and(|(_, no, _)| no == 1))
        .collect();
    if let ([first], true) = (
        firsts.as_slice(),
        tensors.iter().all(|n| split_name(n).is_some()),
    ) {
        return Ok(dir.join(first));
    }
    Err(super::no_checkpoint(
        dir,
        if tensors.is_empty() {
            "no *.index.json, .safetensors or .gguf file in this directory".to_string()
        } else {
            format!(
                "no *.index.json and several model files ({}): name the index or one file",
                list(&tensors)
            )
        },
    ))
}

fn list(names: &[&String]) -> String {
    const SHOWN: usize = 4;
    let mut s = names
        .iter()
        .take(SHOWN)
        .map(|n| n.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        s.push_str(&format!(", … ({} more)", names.len() - SHOWN));
    }
    s
}

/// Splits a GGUF split file name `PREFIX-NNNNN-of-MMMMM.gguf` into the prefix, the
/// split number (from 1) and the split count.
fn split_name(name: &str) -> Option<(&str, u32, u32)> {
    let stem = name
        .strip_suffix(".gguf")
        .or_else(|| name.strip_suffix(".GGUF"))?;
    let (rest, count) = stem.rsplit_once("-of-")?;
    let (prefix, no) = rest.rsplit_once('-')?;
    let digits = |s: &str| s.len() == 5 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(no) || !digits(count) {
        return None;
    }
    Some((prefix, no.parse().ok()?, count.parse().ok()?))
}

/// The files of the GGUF split set that `path` (split `split_no`, counted from 0,
/// of `split_count`, as its KV says) belongs to, in order, named as llama.cpp's
/// `gguf-split` names them.
pub(crate) fn gguf_split_paths(
    path: &Path,
    split_no: u64,
    split_count: u64,
) -> Result<Vec<PathBuf>, Error> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let Some((prefix, no, count)) = split_name(&name) else {
        return Err(checkpoint_error(
            path,
            format!(
                "split {} of {split_count} (split.no / split.count), but the file name does not end in -NNNNN-of-MMMMM.gguf, so the other splits cannot be found",
                split_no + 1
            ),
        ));
    };
    if u64::from(count) != split_count || u64::from(no) != split_no + 1 {
        return Err(checkpoint_error(
            path,
            format!(
                "the name says split {no} of {count}, the KV says split {} of {split_count}",
                split_no + 1
            ),
        ));
    }
    let dir = parent_dir(path);
    Ok((1..=count)
        .map(|i| dir.join(format!("{prefix}-{i:05}-of-{count:05}.gguf")))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_names() {
        assert_eq!(split_name("m-00002-of-00003.gguf"), Some(("m", 2, 3)));
        assert_eq!(split_name("a-b-00001-of-00010.gguf"), Some(("a-b", 1, 10)));
        assert_eq!(split_name("m-2-of-3.gguf"), None);
        assert_eq!(split_name("m-00002-of-00003.bin"), None);
        assert_eq!(split_name("m.gguf"), None);
        let p = gguf_split_paths(Path::new("d/m-00001-of-00002.gguf"), 0, 2).unwrap();
        assert_eq!(
            p,
            vec![
                PathBuf::from("d/m-00001-of-00002.gguf"),
                PathBuf::from("d/m-00002-of-00002.gguf")
            ]
        );
        assert!(gguf_split_paths(Path::new("m-00001-of-00002.gguf"), 1, 2).is_err());
        assert!(gguf_split_paths(Path::new("m.gguf"), 0, 2).is_err());
    }

    #[test]
    fn shard_names_stay_inside_the_directory() {
        assert!(is_plain_relative("model-00001-of-00002.safetensors"));
        assert!(is_plain_relative("sub/model.safetensors"));
        assert!(!is_plain_relative("../model.safetensors"));
        assert!(!is_plain_relative("/etc/passwd"));
        assert!(!is_plain_relative(""));
    }
}
