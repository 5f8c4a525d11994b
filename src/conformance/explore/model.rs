//! Files as the writer makes them: a [`Model`] (writer options, KV entries, groups
//! of tensors) written by [`HrryWriter`]. Exploration starts from random models
//! ([`Model::random`]: dense tensors of every element type of fixed width, ranks 0
//! to 3, some with a statistics section, KV values of every type, and tensor groups
//! taken from the valid files it was given) beside the valid files themselves, and
//! shrinks a case by re-writing its base file smaller ([`Model::smaller`]: a group
//! or KV entry dropped, a dense tensor's shape shrunk, the writer's options back to
//! their defaults).

use crate::file::{HrryFile, HrryWriter, WriterOptions};
use crate::model::{build, element_count, ElementType, BUILTIN_TYPES};
use crate::schema::{
    KvArray, KvScalar, KvValue, LayoutFields, LenBytes, Statistics, TensorDescriptor,
    LAYOUT_ROW_MAJOR,
};
use crate::Format;

use super::rng::Rng;

/// A named tensor: its name, descriptor and buffers.
pub type Item = (String, TensorDescriptor, Vec<Vec<u8>>);

/// Largest buffer a random dense tensor gets (cases stay small and quick).
const MAX_RANDOM_BUFFER: u64 = 256;

/// What a HRRYFILE holds, as [`HrryWriter`] takes it.
#[derive(Clone, Debug)]
pub struct Model {
    /// How the file is written.
    pub options: WriterOptions,
    /// KV entries, keys unique.
    pub kv: Vec<(String, KvValue)>,
    /// Groups of tensors in write order: a tensor, or a composite head followed by
    /// its members. Names are unique across groups.
    pub groups: Vec<Vec<Item>>,
}

/// How many tensors from `i` on belong to the group starting at `i` (a composite
/// head counts its members, recursively); `None` when the members run out.
fn group_len(items: &[Item], i: usize) -> Option<usize> {
    let (_, d, _) = items.get(i)?;
    let LayoutFields::Composite(c) = &d.layout else {
        return Some(1);
    };
    let mut n = 1usize;
    for _ in 0..c.member_count {
        n = n.checked_add(group_len(items, i.checked_add(n)?)?)?;
    }
    Some(n)
}

impl Model {
    /// The model of a HRRYFILE that opens: its options (as its header says), KV
    /// entries with UTF-8 keys, and tensors in the order of their descriptors, cut
    /// into groups. `None` when it does not open, a tensor does not read or a
    /// composite's members run out.
    pub fn of_file(bytes: &[u8]) -> Option<Model> {
        let file = HrryFile::from_bytes(bytes).ok()?;
        let h = file.header();
        let options = WriterOptions {
            data_buffer_alignment: h.data_buffer_alignment,
            sorted_index: h.file_flags.sorted_index(),
            index_crc32c: h.file_flags.has_index_crc32c(),
            tensor_count_hint: (h.tensor_count_hint != 0).then_some(h.tensor_count_hint),
            first_descriptor_offset: h.first_descriptor_offset,
            ..WriterOptions::default()
        };
        let kv = file
            .kv()
            .iter()
            .filter_map(|e| Some((String::from_utf8(e.key.clone()).ok()?, e.value.clone())))
            .collect();
        let mut entries: Vec<_> = file.entries().collect();
        entries.sort_by_key(|e| e.index_entry().descriptor_offset);
        let items = entries
            .iter()
            .map(|&e| {
                let t = file.tensor_at(e).ok()?;
                Some((
                    e.name().to_string(),
                    t.descriptor.clone(),
                    t.buffers.iter().map(|b| b.to_vec()).collect(),
                ))
            })
            .collect::<Option<Vec<Item>>>()?;
        let mut groups = Vec::new();
        let mut i = 0;
        while i < items.len() {
            let n = group_len(&items, i)?;
            groups.push(items.get(i..i.checked_add(n)?)?.to_vec());
            i += n;
        }
        Some(Model {
            options,
            kv,
            groups,
        })
    }

    /// The file the writer makes of the model, or `None` if it refuses it.
    pub fn write(&self) -> Option<Vec<u8>> {
        let mut w = HrryWriter::new(Vec::new(), self.options).ok()?;
        for (k, v) in &self.kv {
            w.add_kv(k, v.clone()).ok()?;
        }
        for (name, d, buffers) in self.groups.iter().flatten() {
            let slices: Vec<&[u8]> = buffers.iter().map(Vec::as_slice).collect();
            w.write_tensor(name, d, &slices).ok()?;
        }
        w.finish().ok()
    }

    /// The file of the model when the spec accepts it (and hrry's policy too).
    pub fn write_valid(&self) -> Option<Vec<u8>> {
        let bytes = self.write()?;
        Format::HrryFile
            .validate_bytes(&bytes, &Default::default())
            .is_valid()
            .then_some(bytes)
    }

    /// A random model: writer options, up to four KV entries of random types (or
    /// taken from `pool`), up to three random dense tensors and up to two groups of
    /// `pool`, in a random order. Groups that do not give a valid file on their own
    /// are left out.
    pub fn random(rng: &mut Rng, pool: &Model) -> Model {
        let options = WriterOptions {
            data_buffer_alignment: if rng.percent(85) { 4096 } else { 8192 },
            sorted_index: rng.percent(30),
            index_crc32c: rng.percent(75),
            tensor_count_hint: None,
            first_descriptor_offset: if rng.percent(80) {
                64
            } else {
                64 + 8 * (1 + rng.below(8))
            },
            pad_last_buffer_to_alignment: rng.percent(10),
            ..WriterOptions::default()
        };
        let mut kv = Vec::new();
        for i in 0..rng.below(5) {
            let value = match pool.kv.get(rng.index(pool.kv.len())) {
                Some((_, v)) if rng.percent(30) => v.clone(),
                _ => random_kv(rng),
            };
            kv.push((format!("explore.k{i}"), value));
        }
        let mut groups: Vec<Vec<Item>> = Vec::new();
        let mut next_name = 0usize;
        let mut name = || {
            next_name += 1;
            format!("t{}", next_name - 1)
        };
        for _ in 0..rng.below(4) {
            if let Some(item) = random_dense(rng, name()) {
                groups.push(vec![item]);
            }
        }
        for _ in 0..rng.below(3) {
            if let Some(g) = pool.groups.get(rng.index(pool.groups.len())) {
                groups.push(
                    g.iter()
                        .map(|(_, d, b)| (name(), d.clone(), b.clone()))
                        .collect(),
                );
            }
        }
        let mut ordered = Vec::with_capacity(groups.len());
        while !groups.is_empty() {
            ordered.push(groups.swap_remove(rng.index(groups.len())));
        }
        let mut model = Model {
            options,
            kv,
            groups: Vec::new(),
        };
        // Keep each group only if the file stays valid with it.
        for g in ordered {
            model.groups.push(g);
            if model.write_valid().is_none() {
                model.groups.pop();
            }
        }
        if rng.percent(20) {
            model.options.tensor_count_hint =
                Some(model.groups.iter().map(Vec::len).sum::<usize>() as u64);
        }
        model
    }

    /// Smaller models, each one step from this one, largest steps first: each group
    /// dropped, each KV entry dropped, each dense tensor's dimensions shrunk (the
    /// largest halved, or every one set to 1) with its buffer cut to fit, and the
    /// writer's options back to their defaults. Each comes with what was done.
    pub fn smaller(&self) -> Vec<(String, Model)> {
        let mut out = Vec::new();
        for (i, g) in self.groups.iter().enumerate() {
            let mut m = self.clone();
            m.groups.remove(i);
            out.push((format!("tensor {:?} dropped", g[0].0), m));
        }
        for (i, (key, _)) in self.kv.iter().enumerate() {
            let mut m = self.clone();
            m.kv.remove(i);
            out.push((format!("KV entry {key:?} dropped"), m));
        }
        for (i, g) in self.groups.iter().enumerate() {
            let [(name, d, _)] = g.as_slice() else {
                continue;
            };
            for shape in smaller_shapes(&d.shape) {
                if let Some(item) = reshaped(&g[0], &shape) {
                    let mut m = self.clone();
                    m.groups[i] = vec![item];
                    out.push((format!("tensor {name:?} reshaped to {shape:?}"), m));
                }
            }
        }
        let defaults = WriterOptions::default();
        let plain = WriterOptions {
            unchecked: self.options.unchecked,
            ..defaults
        };
        if self.options != plain {
            let mut m = self.clone();
            m.options = plain;
            out.push(("the writer's default options".into(), m));
        }
        out
    }
}

/// Smaller shapes for a tensor of `shape`: every dimension 1 (or 0 where it was),
/// and the largest dimension halved.
fn smaller_shapes(shape: &[u64]) -> Vec<Vec<u64>> {
    let mut out = Vec::new();
    let ones: Vec<u64> = shape.iter().map(|&d| d.min(1)).collect();
    if ones != shape {
        out.push(ones);
    }
    if let Some((i, &d)) = shape.iter().enumerate().max_by_key(|(_, &d)| d) {
        if d > 1 {
            let mut halved = shape.to_vec();
            halved[i] = d / 2;
            if !out.contains(&halved) {
                out.push(halved);
            }
        }
    }
    out
}

/// A dense row-major tensor with no optional section but statistics, reshaped to
/// `shape` with its buffer cut (or zero-extended) to the new size; `None` for any
/// other tensor.
fn reshaped((name, d, buffers): &Item, shape: &[u64]) -> Option<Item> {
    if d.layout_tag != LAYOUT_ROW_MAJOR
        || buffers.len() != 1
        || d.quantization.is_some()
        || d.shard.is_some()
        || d.extension_type.is_some()
        || d.composite_member.is_some()
    {
        return None;
    }
    let ty = ElementType::from_tag(d.type_tag)?;
    let mut new = build::dense(ty, shape)?;
    new.statistics = d.statistics.clone();
    new.sync_sections();
    let size = usize::try_from(new.buffers.first()?.byte_size).ok()?;
    let mut data = buffers[0].clone();
    data.resize(size, 0);
    clear_unused_bits(&mut data, element_count(shape)?, ty.bit_width()?);
    Some((name.clone(), new, vec![data]))
}

/// Clears the bits of `data` after its `count` elements of `bits` bits each (the
/// padding of sub-byte types, which must be zero).
fn clear_unused_bits(data: &mut [u8], count: u64, bits: u32) {
    let Some(used) = count.checked_mul(u64::from(bits)) else {
        return;
    };
    let whole = usize::try_from(used / 8).unwrap_or(usize::MAX);
    if let Some(partial) = data.get_mut(whole) {
        *partial &= ((1u16 << (used % 8)) - 1) as u8;
    }
    if let Some(rest) = data.get_mut(whole.saturating_add(usize::from(used % 8 != 0))..) {
        rest.fill(0);
    }
}

/// A random dense row-major tensor: a built-in element type of fixed width, rank 0
/// to 3, dimensions 0 to 6, random data (zeros for types whose every bit pattern is
/// not a value, and for the padding of sub-byte types), and a statistics section
/// (nothing computed) a fifth of the time.
fn random_dense(rng: &mut Rng, name: String) -> Option<Item> {
    let types: Vec<ElementType> = BUILTIN_TYPES
        .iter()
        .copied()
        .filter(|t| t.bit_width().is_some())
        .collect();
    let ty = *types.get(rng.index(types.len()))?;
    let rank = rng.below(4) as usize;
    let shape: Vec<u64> = (0..rank)
        .map(|_| if rng.percent(10) { 0 } else { 1 + rng.below(6) })
        .collect();
    let mut d = build::dense(ty, &shape)?;
    let size = d.buffers.first()?.byte_size;
    if size > MAX_RANDOM_BUFFER {
        return None;
    }
    let mut data = vec![0u8; size as usize];
    if rng.percent(70) {
        for b in &mut data {
            *b = rng.next() as u8;
        }
        clear_unused_bits(&mut data, element_count(&shape)?, ty.bit_width()?);
    }
    if rng.percent(20) {
        d.statistics = Some(Statistics::default());
        d.sync_sections();
    }
    let item = (name, d, vec![data]);
    // A value some types do not allow (a bool of 2, a reserved code): zeros.
    let alone = Model {
        options: WriterOptions::default(),
        kv: Vec::new(),
        groups: vec![vec![item.clone()]],
    };
    if alone.write_valid().is_some() {
        return Some(item);
    }
    let (name, d, mut buffers) = item;
    buffers[0].fill(0);
    Some((name, d, buffers))
}

/// A random KV value: each of the seven types, boundary numbers, short text and
/// bytes, arrays of up to four elements.
fn random_kv(rng: &mut Rng) -> KvValue {
    let text = |rng: &mut Rng| LenBytes {
        bytes: (0..rng.below(9))
            .map(|_| b'a' + rng.below(26) as u8)
            .collect(),
    };
    let bytes = |rng: &mut Rng| LenBytes {
        bytes: (0..rng.below(9)).map(|_| rng.next() as u8).collect(),
    };
    let int = |rng: &mut Rng| [0, 1, -1, i64::MIN, i64::MAX, rng.next() as i64][rng.index(6)];
    let float =
        |rng: &mut Rng| [0.0, -0.0, 1.5, f64::NAN, f64::INFINITY, f64::MIN_POSITIVE][rng.index(6)];
    match rng.below(7) {
        0 => KvValue::String(text(rng)),
        1 => KvValue::Int64(int(rng)),
        2 => KvValue::Uint64(int(rng) as u64),
        3 => KvValue::Float64(float(rng)),
        4 => KvValue::Bool(rng.below(2) as u8),
        5 => KvValue::Bytes(bytes(rng)),
        _ => {
            let tag = 1 + rng.below(6) as u8;
            let elements: Vec<KvScalar> = (0..1 + rng.below(4))
                .map(|_| match tag {
                    1 => KvScalar::String(text(rng)),
                    2 => KvScalar::Int64(int(rng)),
                    3 => KvScalar::Uint64(int(rng) as u64),
                    4 => KvScalar::Float64(float(rng)),
                    5 => KvScalar::Bool(rng.below(2) as u8),
                    _ => KvScalar::Bytes(bytes(rng)),
                })
                .collect();
            KvValue::Array(KvArray::new(tag, elements))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_models_are_valid_and_read_back_as_written() {
        let empty = Model {
            options: WriterOptions::default(),
            kv: Vec::new(),
            groups: Vec::new(),
        };
        let mut tensors = 0;
        for i in 0..40 {
            let m = Model::random(&mut Rng::new(9, i), &empty);
            let bytes = m.write_valid().expect("a valid file");
            let back = Model::of_file(&bytes).expect("it opens");
            assert_eq!(back.groups.len(), m.groups.len());
            assert_eq!(back.kv.len(), m.kv.len());
            tensors += m.groups.len();
            for smaller in m.smaller() {
                assert!(smaller.1.write().is_some(), "{}", smaller.0);
            }
        }
        assert!(tensors > 20, "{tensors} tensors in 40 models");
    }

    #[test]
    fn smaller_shapes_shrink() {
        assert_eq!(smaller_shapes(&[4, 6]), vec![vec![1, 1], vec![4, 3]]);
        assert_eq!(smaller_shapes(&[1, 0]), Vec::<Vec<u64>>::new());
        assert_eq!(smaller_shapes(&[]), Vec::<Vec<u64>>::new());
    }
}
