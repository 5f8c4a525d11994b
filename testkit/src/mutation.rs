//! Structure-aware inputs: a valid file written by [`HrryWriter`] from an arbitrary
//! model — dense tensors of every element type in every dense layout, and the
//! tensors of the valid conformance files (sparse layouts, every quantization
//! scheme, composites, shards, statistics, extension types) with KV entries of
//! every type — then one targeted mutation of a field, a count, an offset or a
//! flag, so that the deep validator paths are reached, not only the header checks.

use std::sync::OnceLock;

use arbitrary::{Result, Unstructured};

use hrry::file::{HrryFile, HrryWriter, WriterOptions};
use hrry::model::{ElementType, BUILTIN_TYPES};
use hrry::schema::{to_bytes, HilbertFields, KvValue, LayoutFields, TensorDescriptor, TiledFields};
use hrry::schema::{
    LAYOUT_COLUMN_MAJOR, LAYOUT_HILBERT, LAYOUT_MORTON, LAYOUT_ROW_MAJOR, LAYOUT_STRIDED,
    LAYOUT_TILED,
};

use crate::ArbitraryModel;

pub use hrry::conformance::explore::mutation::{data_sites, sites, Site};
use hrry::conformance::explore::mutation::{reseal_index, ValueChange};

/// A tensor to write: descriptor and buffers.
pub type Item = (TensorDescriptor, Vec<Vec<u8>>);

/// A model whose file the writer produces: options, KV entries and tensors in
/// write order (a composite head followed by its members).
#[derive(Clone, Debug)]
pub struct RichModel {
    /// How the file is written.
    pub options: WriterOptions,
    /// KV entries (keys unique).
    pub kv: Vec<(String, KvValue)>,
    /// Named tensors (names unique).
    pub tensors: Vec<(String, Item)>,
}

/// The tensors of the valid conformance files, cut into groups that stand alone:
/// a tensor, or a composite head with its members; their KV entries; and the
/// sparse and quantized tensors that stand alone in a file of their own.
struct Parts {
    groups: Vec<Vec<Item>>,
    kv: Vec<KvValue>,
    packed: Vec<Item>,
}

/// How many tensors from `i` on belong to the group starting at `i` (a composite
/// head counts its members, recursively); `None` when the members run out.
fn group_len(items: &[Item], i: usize) -> Option<usize> {
    let (d, _) = items.get(i)?;
    let LayoutFields::Composite(c) = &d.layout else {
        return Some(1);
    };
    let mut n = 1;
    for _ in 0..c.member_count {
        n += group_len(items, i + n)?;
    }
    Some(n)
}

/// Whether a file holding only `group`, written with default options, validates
/// strictly (the groups of files that need their neighbours are left out).
pub fn stands_alone(group: &[Item]) -> bool {
    let model = RichModel {
        options: WriterOptions::default(),
        kv: Vec::new(),
        tensors: group
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("t{i}"), t.clone()))
            .collect(),
    };
    model.write().is_some_and(|bytes| {
        hrry::Format::HrryFile
            .validate_bytes(&bytes, &Default::default())
            .is_valid()
    })
}

fn parts() -> &'static Parts {
    static PARTS: OnceLock<Parts> = OnceLock::new();
    PARTS.get_or_init(|| {
        let mut groups = Vec::new();
        let mut kv = Vec::new();
        for case in crate::corpus::all_cases() {
            if case.format != hrry::Format::HrryFile || case.expect != crate::corpus::Expect::Valid
            {
                continue;
            }
            let Ok(file) = HrryFile::from_bytes(&case.bytes) else {
                continue;
            };
            kv.extend(file.kv().iter().map(|e| e.value.clone()));
            let mut entries: Vec<_> = file.entries().collect();
            entries.sort_by_key(|e| e.index_entry().descriptor_offset);
            let items: Option<Vec<Item>> = entries
                .iter()
                .map(|&e| {
                    let t = file.tensor_at(e).ok()?;
                    Some((
                        t.descriptor.clone(),
                        t.buffers.iter().map(|b| b.to_vec()).collect(),
                    ))
                })
                .collect();
            let Some(items) = items else { continue };
            let mut i = 0;
            while let Some(n) = group_len(&items, i) {
                let group = items[i..i + n].to_vec();
                if stands_alone(&group) {
                    groups.push(group);
                }
                i += n;
            }
        }
        let packed = groups
            .iter()
            .filter_map(|g| match g.as_slice() {
                [item] if is_packed(&item.0) => Some(item.clone()),
                _ => None,
            })
            .collect();
        Parts { groups, kv, packed }
    })
}

/// A dense tensor of an arbitrary built-in element type, rank (0 to 4) and dense
/// layout (row-major, column-major, strided with negative strides too, tiled with
/// strided or nested levels, Morton, Hilbert), its buffer 0 of exactly the size the
/// layout needs (or, when `exact` is false, sometimes a little more or less) filled
/// with arbitrary bytes.
pub fn arbitrary_dense(u: &mut Unstructured<'_>, exact: bool) -> Result<Item> {
    let ty: ElementType = *u.choose(&BUILTIN_TYPES)?;
    let mut rank = u.int_in_range(0..=4usize)?;
    let mut shape: Vec<u64> = (0..rank)
        .map(|_| u.int_in_range(0..=5))
        .collect::<Result<_>>()?;
    // A rank-0 tensor is row-major (TD-LAY-002).
    let tag = if rank == 0 {
        LAYOUT_ROW_MAJOR
    } else {
        *u.choose(&[
            LAYOUT_ROW_MAJOR,
            LAYOUT_COLUMN_MAJOR,
            LAYOUT_STRIDED,
            LAYOUT_TILED,
            LAYOUT_MORTON,
            LAYOUT_HILBERT,
        ])?
    };
    let bits_for = |n: u64| (64 - n.saturating_sub(1).leading_zeros()).max(1);
    let layout = match tag {
        LAYOUT_STRIDED => LayoutFields::Strided {
            strides: (0..rank)
                .map(|_| u.int_in_range(-12..=12))
                .collect::<Result<_>>()?,
        },
        LAYOUT_TILED => LayoutFields::Tiled(arbitrary_tiled(u, rank, 0)?),
        LAYOUT_MORTON => {
            let mut morton_bits = Vec::new();
            for &n in &shape {
                morton_bits.push(bits_for(n) + u.int_in_range(0..=1)?);
            }
            LayoutFields::Morton { morton_bits }
        }
        LAYOUT_HILBERT => {
            // Every dimension is 2^hilbert_order (LY-HIL-004), rank 2 or more.
            let order = u.int_in_range(1..=2u32)?;
            rank = rank.clamp(2, 3);
            shape = vec![1 << order; rank];
            LayoutFields::Hilbert(HilbertFields {
                hilbert_order: order,
                hilbert_rank: rank as u32,
            })
        }
        _ => LayoutFields::Implicit,
    };
    let mut d = hrry::model::build::descriptor(ty.tag(), tag, &shape, layout, &[0]);
    // Negative strides address below `byte_offset`: start buffer 0 high enough.
    if let Some(lo) = hrry::layout::dense::lowest_bit_address(&d) {
        if lo < 0 {
            d.byte_offset = u64::try_from((-lo + 7) / 8).unwrap_or(0);
        }
    }
    if !exact {
        d.byte_offset += u64::from(u.int_in_range(0u8..=2)?);
    }
    let size = hrry::layout::required_buffer_size(&d)
        .filter(|&n| n <= 1 << 16)
        .ok_or(arbitrary::Error::IncorrectFormat)?;
    let data = if exact {
        // Arbitrary values laid out by the library: padding and unaddressed
        // positions zero, no reserved codes, zero bits after the last element.
        let mut rm = arbitrary_row_major(u, ty, &shape)?;
        if ty == ElementType::Float8E8m0 {
            for b in &mut rm {
                if ty.is_reserved_code((*b).into()) {
                    *b = 0x7F;
                }
            }
        }
        d.buffers[0].byte_size = size;
        hrry::layout::from_row_major(&d, &rm, 1 << 16)
            .map_err(|_| arbitrary::Error::IncorrectFormat)?
    } else {
        let mut size = size;
        if u.ratio(1, 4)? {
            size = (size + u64::from(u.int_in_range(0u8..=3)?))
                .saturating_sub(u64::from(u.int_in_range(0u8..=3)?));
        }
        let mut data = vec![0u8; size as usize];
        u.fill_buffer(&mut data)?;
        data
    };
    d.buffers[0].byte_size = data.len() as u64;
    d.fix_length();
    Ok((d, vec![data]))
}

/// Arbitrary packed row-major bytes of a `ty` tensor of `shape`, the bits after
/// its last element zero.
fn arbitrary_row_major(
    u: &mut Unstructured<'_>,
    ty: ElementType,
    shape: &[u64],
) -> Result<Vec<u8>> {
    let count = hrry::model::element_count(shape).ok_or(arbitrary::Error::IncorrectFormat)?;
    let size = ty
        .buffer_size(count)
        .ok_or(arbitrary::Error::IncorrectFormat)?;
    let mut bytes = vec![0u8; size as usize];
    u.fill_buffer(&mut bytes)?;
    let desc = hrry::model::build::dense(ty, shape).ok_or(arbitrary::Error::IncorrectFormat)?;
    hrry::layout::dense::clear_unused_tail(&desc, &mut bytes);
    Ok(bytes)
}

/// Tiled fields for `rank` dimensions: tiles of 1 to 4, a row-, column-major or
/// strided tile grid, and row-, column-major, strided or (twice at most) tiled
/// elements within a tile.
fn arbitrary_tiled(u: &mut Unstructured<'_>, rank: usize, depth: u32) -> Result<TiledFields> {
    let tile_shape: Vec<u64> = (0..rank)
        .map(|_| u.int_in_range(1..=4))
        .collect::<Result<_>>()?;
    let outer_layout = u.int_in_range(1..=3)?;
    let inner_layout = u.int_in_range(1..=if depth < 2 { 4 } else { 3 })?;
    // Strided levels take the row- or column-major strides of the tile (so that
    // the inner layout stays inside its tile, LY-TIL-007), the outer level
    // arbitrary positive ones.
    let tile: &Vec<u64> = &tile_shape;
    let compact = |column: bool| -> Vec<i64> {
        let mut s = vec![0i64; rank];
        let mut step = 1i64;
        for k in 0..rank {
            let k = if column { k } else { rank - 1 - k };
            s[k] = step;
            step *= tile[k] as i64;
        }
        s
    };
    let inner_strides = if inner_layout == LAYOUT_STRIDED {
        Some(compact(u.arbitrary()?))
    } else {
        None
    };
    let outer_strides = if outer_layout == LAYOUT_STRIDED {
        Some(
            (0..rank)
                .map(|_| u.int_in_range(1..=40))
                .collect::<Result<_>>()?,
        )
    } else {
        None
    };
    let inner_tiled = if inner_layout == LAYOUT_TILED {
        Some(Box::new(arbitrary_tiled(u, rank, depth + 1)?))
    } else {
        None
    };
    Ok(TiledFields {
        tile_shape,
        outer_layout,
        inner_layout,
        reserved: [0; 2],
        outer_strides,
        inner_strides,
        inner_tiled,
    })
}

impl RichModel {
    /// An arbitrary model: the options, KV entries and dense row-major tensors of
    /// an [`ArbitraryModel`], dense tensors in other layouts, groups of tensors
    /// from the valid conformance files, and KV values from them, in an arbitrary
    /// order. Dense tensors whose layout fields turn out not to be valid are left
    /// out (each is checked in a file of its own).
    pub fn arbitrary(u: &mut Unstructured<'_>) -> Result<Self> {
        let base: ArbitraryModel = u.arbitrary()?;
        let parts = parts();
        let mut kv = base.kv;
        for i in 0..u.int_in_range(0..=2)? {
            if let Some(v) = pick(u, &parts.kv)? {
                kv.push((format!("corpus.{i}"), v.clone()));
            }
        }
        let mut groups: Vec<Vec<Item>> = base
            .tensors
            .into_iter()
            .map(|(_, d, data)| vec![(d, vec![data])])
            .collect();
        for _ in 0..u.int_in_range(0..=3)? {
            if let Some(g) = pick(u, &parts.groups)? {
                groups.push(g.clone());
            }
        }
        for _ in 0..u.int_in_range(0..=3)? {
            let item = arbitrary_dense(u, true)?;
            if stands_alone(std::slice::from_ref(&item)) {
                groups.push(vec![item]);
            }
        }
        // An arbitrary order of the groups (members stay after their head).
        let mut ordered = Vec::with_capacity(groups.len());
        while !groups.is_empty() {
            let i = u.choose_index(groups.len())?;
            ordered.push(groups.swap_remove(i));
        }
        let tensors = ordered
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, t)| (format!("t{i}"), t))
            .collect();
        Ok(RichModel {
            options: base.options,
            kv,
            tensors,
        })
    }

    /// The file [`HrryWriter`] writes for the model, or `None` if it refuses it.
    pub fn write(&self) -> Option<Vec<u8>> {
        let mut w = HrryWriter::new(Vec::new(), self.options).ok()?;
        for (k, v) in &self.kv {
            w.add_kv(k, v.clone()).ok()?;
        }
        for (name, (d, buffers)) in &self.tensors {
            let slices: Vec<&[u8]> = buffers.iter().map(Vec::as_slice).collect();
            w.write_tensor(name, d, &slices).ok()?;
        }
        w.finish().ok()
    }

    /// Writes the model and checks that the writer accepts it, that the file
    /// validates strictly and that [`HrryFile`] reads back every KV entry,
    /// descriptor and buffer. Returns the file.
    ///
    /// # Panics
    /// When one of those fails.
    pub fn assert_written_faithfully(&self) -> Vec<u8> {
        let bytes = self.write().expect("the writer accepts a valid model");
        let report = hrry::Format::HrryFile.validate_bytes(&bytes, &Default::default());
        assert!(
            report.is_valid(),
            "the writer's output does not validate: {:?}",
            report.violations
        );
        let file = HrryFile::from_bytes(&bytes).expect("the writer's output opens");
        assert_eq!(file.len(), self.tensors.len(), "tensor count");
        let kv: Vec<(&[u8], &KvValue)> = file
            .kv()
            .iter()
            .map(|e| (e.key.as_slice(), &e.value))
            .collect();
        let expected: Vec<(&[u8], &KvValue)> =
            self.kv.iter().map(|(k, v)| (k.as_bytes(), v)).collect();
        assert!(
            format!("{kv:?}") == format!("{expected:?}"),
            "KV entries read back differ"
        );
        for (name, (d, buffers)) in &self.tensors {
            let t = file.tensor(name).expect("reads").expect("present");
            assert!(to_bytes(t.descriptor) == to_bytes(d), "{name}: descriptor");
            assert!(t.buffers == *buffers, "{name}: buffers");
        }
        bytes
    }
}

/// Whether `desc` is sparse or quantized: a tensor whose values the densifier or
/// the dequantizer computes from several buffers.
fn is_packed(desc: &TensorDescriptor) -> bool {
    hrry::layout::sparse::is_sparse(desc.layout_tag) || desc.quantization.is_some()
}

/// A sparse or quantized tensor alone, as the densifier and the dequantizer take
/// it: one of the valid conformance files' (every sparse layout and quantization
/// scheme the corpus holds) or an arbitrary dense tensor encoded as COO, CSR, CSC
/// or CSF; then up to four changes ([`change_packed`]) to its descriptor and
/// buffers.
pub fn arbitrary_packed(u: &mut Unstructured<'_>) -> Result<Item> {
    let mut item = match pick(u, &parts().packed)? {
        Some(item) if u.arbitrary()? => item.clone(),
        _ => arbitrary_sparse(u)?,
    };
    for _ in 0..u.int_in_range(0..=4)? {
        change_packed(u, &mut item)?;
    }
    Ok(item)
}

/// An arbitrary dense tensor (a built-in element type of fixed width, rank 1 to
/// 3, dimensions up to 6) encoded by [`hrry::layout::sparse::encode`] in a sparse
/// layout (CSR and CSC take rank 2; CSF any mode order).
fn arbitrary_sparse(u: &mut Unstructured<'_>) -> Result<Item> {
    use hrry::layout::sparse::encode;
    let fixed: Vec<ElementType> = BUILTIN_TYPES
        .iter()
        .copied()
        .filter(|t| t.bit_width().is_some())
        .collect();
    let ty = *u.choose(&fixed)?;
    let layout = u.int_in_range(0..=3u8)?;
    let rank = if matches!(layout, 1 | 2) {
        2
    } else {
        u.int_in_range(1..=3usize)?
    };
    let shape: Vec<u64> = (0..rank)
        .map(|_| u.int_in_range(0..=6))
        .collect::<Result<_>>()?;
    let dense = arbitrary_row_major(u, ty, &shape)?;
    let encoded = match layout {
        0 => encode::coo(ty.tag(), &shape, &dense),
        1 | 2 => encode::compressed(ty.tag(), &shape, &dense, layout == 2),
        _ => {
            let mut order: Vec<u32> = (0..rank as u32).collect();
            for i in (1..order.len()).rev() {
                order.swap(i, u.int_in_range(0..=i)?);
            }
            encode::csf(ty.tag(), &shape, &dense, &order)
        }
    };
    encoded.map_err(|_| arbitrary::Error::IncorrectFormat)
}

/// One change to a packed tensor: a new value (see [`new_value`]) in a byte or
/// word of its encoded descriptor, kept when the descriptor still decodes; a new
/// value in one of its buffers (a pointer, a coordinate, a scale, a zero point,
/// a code, padding); or a buffer a few bytes shorter or longer.
fn change_packed(u: &mut Unstructured<'_>, (desc, buffers): &mut Item) -> Result<()> {
    let width = *u.choose(&[1usize, 4, 8])?;
    let set = |bytes: &mut [u8], u: &mut Unstructured<'_>| -> Result<()> {
        let Some(last) = bytes.len().checked_sub(width) else {
            return Ok(());
        };
        let at = u.int_in_range(0..=last)?;
        let mut le = [0u8; 8];
        le[..width].copy_from_slice(&bytes[at..at + width]);
        let v = new_value(u, u64::from_le_bytes(le), width, bytes.len() as u64)?;
        bytes[at..at + width].copy_from_slice(&v.to_le_bytes()[..width]);
        Ok(())
    };
    match u.int_in_range(0..=3u8)? {
        0 => {
            let mut encoded = to_bytes(&*desc);
            set(&mut encoded, u)?;
            if let Ok((changed, _)) = hrry::schema::read_from::<TensorDescriptor>(&encoded) {
                *desc = changed;
            }
        }
        1 | 2 if !buffers.is_empty() => {
            let i = u.choose_index(buffers.len())?;
            set(&mut buffers[i], u)?;
        }
        _ if !buffers.is_empty() => {
            let i = u.choose_index(buffers.len())?;
            let len = buffers[i].len();
            let step = usize::from(u.int_in_range(1u8..=9)?);
            let new_len = if u.arbitrary()? {
                len.saturating_sub(step)
            } else {
                len + step
            };
            buffers[i].resize(new_len, u.arbitrary()?);
        }
        _ => {}
    }
    Ok(())
}

/// One of `items`, or `None` when there are none.
fn pick<'a, T>(u: &mut Unstructured<'_>, items: &'a [T]) -> Result<Option<&'a T>> {
    if items.is_empty() {
        return Ok(None);
    }
    Ok(Some(&items[u.choose_index(items.len())?]))
}

/// What a mutation writes into its field: a [`ValueChange`] of an arbitrary kind.
fn new_value(u: &mut Unstructured<'_>, old: u64, width: usize, file_len: u64) -> Result<u64> {
    let kind = u.int_in_range(0..=ValueChange::KINDS - 1)?;
    let param: u64 = u.arbitrary()?;
    Ok(ValueChange::of_kind(kind, param).apply(old, width, file_len))
}

/// Applies one arbitrary targeted mutation to `bytes`: a new value in one of its
/// [`sites`] (a bit flip, a small step, a boundary value, an offset near the end of
/// the file, or arbitrary), or a cut at a site; then, sometimes, the index CRC is
/// recomputed so that index mutations get past the checksum.
pub fn mutate(u: &mut Unstructured<'_>, bytes: &[u8]) -> Result<Vec<u8>> {
    let sites = sites(bytes);
    let Some(&site) = pick(u, &sites)? else {
        return Ok(bytes.to_vec());
    };
    let mut out = bytes.to_vec();
    if u.ratio(1, 16)? {
        out.truncate(site.at);
        return Ok(out);
    }
    let mut le = [0u8; 8];
    le[..site.width].copy_from_slice(&out[site.at..site.at + site.width]);
    let old = u64::from_le_bytes(le);
    let v = new_value(u, old, site.width, bytes.len() as u64)?;
    out[site.at..site.at + site.width].copy_from_slice(&v.to_le_bytes()[..site.width]);
    if u.arbitrary()? {
        reseal_index(&mut out);
    }
    // Then, for a quarter of the inputs (none of those whose bytes ran out), up to
    // three changes inside the tensors' buffers.
    let extra: u8 = u.arbitrary()?;
    if extra >= 0xC0 {
        let data = data_sites(bytes);
        for _ in 0..=extra % 3 {
            let Some(&site) = pick(u, &data)? else { break };
            let mut le = [0u8; 8];
            le[..site.width].copy_from_slice(&out[site.at..site.at + site.width]);
            let v = new_value(u, u64::from_le_bytes(le), site.width, bytes.len() as u64)?;
            out[site.at..site.at + site.width].copy_from_slice(&v.to_le_bytes()[..site.width]);
        }
    }
    Ok(out)
}
