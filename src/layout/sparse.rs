//! Sparse layouts (COO, CSR, CSC, CSF) expanded to dense logical row-major order.
//!
//! Unstored elements are the all-zero bit pattern of the element type (+0.0 for
//! floats, 0 for integers, false for bool). Every pointer and coordinate is checked
//! before it is used, pointers must not decrease (so the walk touches each stored
//! entry once), and the output is allocated only after its size passed the caller's
//! limit.

use crate::schema::{
    LayoutFields, TensorDescriptor, LAYOUT_COO, LAYOUT_CSC, LAYOUT_CSF, LAYOUT_CSR,
};

use super::bits::{read_bits, write_bits};
use super::dense::row_major_len;
use super::element::element_bits;
use super::error;
use crate::error::Broken;
use crate::error::Error;

/// True for the sparse layout tags (COO, CSR, CSC, CSF).
pub fn is_sparse(layout_tag: u8) -> bool {
    matches!(
        layout_tag,
        LAYOUT_COO | LAYOUT_CSR | LAYOUT_CSC | LAYOUT_CSF
    )
}

/// A buffer read as an array of little-endian unsigned integers (`uint32` or
/// `uint64` entries).
#[derive(Clone, Copy, Debug)]
pub struct IndexArray<'a> {
    /// The bytes.
    pub bytes: &'a [u8],
    /// Bytes per entry (4 or 8).
    pub entry_size: usize,
    /// Buffer table index, for error messages.
    pub buffer: usize,
}

impl<'a> IndexArray<'a> {
    /// `buffers[index]` read as `uint64` entries.
    pub fn u64s(buffers: &[&'a [u8]], index: usize) -> Result<Self, Error> {
        Self::with_size(buffers, index, 8)
    }

    /// `buffers[index]` read as entries of `entry_size` bytes.
    pub fn with_size(buffers: &[&'a [u8]], index: usize, entry_size: usize) -> Result<Self, Error> {
        let bytes = buffers
            .get(index)
            .copied()
            .ok_or_else(|| error::missing_buffer(index))?;
        Ok(IndexArray {
            bytes,
            entry_size,
            buffer: index,
        })
    }

    /// Entries the buffer holds.
    pub fn len(&self) -> u64 {
        (self.bytes.len() / self.entry_size) as u64
    }

    /// True when the buffer holds no whole entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Entry `i`, or `None` when the buffer is too short.
    pub fn get(&self, i: u64) -> Option<u64> {
        let start = usize::try_from(i)
            .ok()
            .and_then(|i| i.checked_mul(self.entry_size));
        let bytes = start.and_then(|s| self.bytes.get(s..s.checked_add(self.entry_size)?));
        bytes.map(|b| {
            let mut le = [0u8; 8];
            le[..b.len()].copy_from_slice(b);
            u64::from_le_bytes(le)
        })
    }

    /// Entry `i`, or a violation of the layout's buffer size rule when the buffer
    /// is too short.
    fn entry(&self, i: u64, rules: &Rules) -> Result<u64, Error> {
        self.get(i).ok_or_else(|| {
            error::structure(
                rules.sizes,
                self.buffer,
                i,
                &format!("entry lies beyond the buffer's {} bytes", self.bytes.len()),
            )
        })
    }
}

/// The rules of one sparse layout that a walk over its stored structure reports.
struct Rules {
    /// Buffer sizes (values, indices, pointers hold their counts).
    sizes: Broken,
    /// Coordinates below their dimension's size.
    range: Broken,
    /// Pointer arrays start at 0 and end at nnz.
    ends: Broken,
    /// Pointer arrays do not decrease.
    monotone: Broken,
}

impl Rules {
    /// The rules of the sparse layout `tag`.
    fn of(tag: u8) -> Rules {
        Rules {
            sizes: Broken::SparseSizes(tag),
            range: Broken::SparseRange(tag),
            ends: Broken::SparseEnds(tag),
            monotone: Broken::SparseMonotone(tag),
        }
    }
}

/// Output under construction: packed row-major bytes, zero-initialised.
struct Dense<'a> {
    out: Vec<u8>,
    width: u32,
    values: &'a [u8],
    strides: Vec<u64>,
    shape: &'a [u64],
    rules: Rules,
}

impl<'a> Dense<'a> {
    fn new(desc: &'a TensorDescriptor, buffers: &[&'a [u8]], limit: u64) -> Result<Self, Error> {
        let width = element_bits(desc)?;
        let len = row_major_len(desc, width, limit)?;
        let values = buffers
            .first()
            .copied()
            .ok_or_else(|| error::missing_buffer(0))?;
        // Row-major strides; the element count fits in u64, so they do too.
        let mut strides = vec![1u64; desc.shape.len()];
        for k in (0..desc.shape.len().saturating_sub(1)).rev() {
            strides[k] = strides[k + 1].saturating_mul(desc.shape[k + 1]);
        }
        Ok(Dense {
            out: vec![0u8; len],
            width,
            values,
            strides,
            shape: &desc.shape,
            rules: Rules::of(desc.layout_tag),
        })
    }

    /// Copies stored value `position` to the logical index given coordinate by
    /// coordinate through `coord(d)`.
    fn place(
        &mut self,
        position: u64,
        mut coord: impl FnMut(usize) -> Result<u64, Error>,
        coord_buffer: usize,
    ) -> Result<(), Error> {
        let mut linear = 0u64;
        for d in 0..self.shape.len() {
            let c = coord(d)?;
            if c >= self.shape[d] {
                return Err(error::structure(
                    self.rules.range,
                    coord_buffer,
                    position,
                    &format!(
                        "coordinate {c} along dimension {d} is not below shape {}",
                        self.shape[d]
                    ),
                ));
            }
            linear += c * self.strides[d];
        }
        let w = u64::from(self.width);
        let value = position
            .checked_mul(w)
            .and_then(|bit| read_bits(self.values, bit, self.width))
            .ok_or_else(|| {
                error::structure(
                    self.rules.sizes,
                    0,
                    position,
                    &format!("value lies beyond the buffer's {} bytes", self.values.len()),
                )
            })?;
        // linear < element count, so the bit lies inside the packed output.
        write_bits(&mut self.out, linear * w, self.width, value)
            .ok_or_else(|| error::overflow("output bit address"))
    }
}

fn nnz_of(desc: &TensorDescriptor) -> Result<u64, Error> {
    match &desc.layout {
        LayoutFields::Coo(c) => Ok(c.nnz),
        LayoutFields::Csr(c) | LayoutFields::Csc(c) => Ok(c.nnz),
        LayoutFields::Csf(c) => Ok(c.nnz),
        _ => Err(error::unsupported_layout(desc.layout_tag)),
    }
}

/// Checks a compressed pointer slice `ptr[k]..ptr[k+1]` and returns it.
fn slice(ptr: &IndexArray, k: u64, nnz: u64, rules: &Rules) -> Result<(u64, u64), Error> {
    let (start, end) = (ptr.entry(k, rules)?, ptr.entry(k + 1, rules)?);
    if start > end || end > nnz {
        return Err(error::structure(
            if start > end {
                rules.monotone
            } else {
                rules.ends
            },
            ptr.buffer,
            k,
            &format!("pointer slice {start}..{end} is decreasing or beyond nnz {nnz}"),
        ));
    }
    Ok((start, end))
}

fn densify_compressed(
    dense: &mut Dense,
    desc: &TensorDescriptor,
    buffers: &[&[u8]],
    by_column: bool,
) -> Result<(), Error> {
    if desc.shape.len() != 2 {
        return Err(error::field(
            Broken::CompressedRank { by_column },
            "rank",
            format!("{} (CSR and CSC need 2)", desc.shape.len()),
        ));
    }
    let rules = Rules::of(desc.layout_tag);
    let nnz = nnz_of(desc)?;
    let minor = IndexArray::u64s(buffers, 1)?;
    let ptr = IndexArray::u64s(buffers, 2)?;
    let major_dim = usize::from(by_column);
    let majors = desc.shape[major_dim];
    if ptr.entry(0, &rules)? != 0 {
        return Err(error::structure(
            rules.ends,
            2,
            0,
            "the first pointer is not 0",
        ));
    }
    for m in 0..majors {
        let (start, end) = slice(&ptr, m, nnz, &rules)?;
        for j in start..end {
            let c = minor.entry(j, &rules)?;
            dense.place(j, |d| Ok(if d == major_dim { m } else { c }), 1)?;
        }
    }
    Ok(())
}

fn densify_coo(dense: &mut Dense, desc: &TensorDescriptor, buffers: &[&[u8]]) -> Result<(), Error> {
    let nnz = nnz_of(desc)?;
    let rank = desc.shape.len() as u64;
    let indices = IndexArray::u64s(buffers, 1)?;
    let need = nnz
        .checked_mul(rank)
        .ok_or_else(|| error::overflow("nnz * rank"))?;
    if indices.len() < need {
        return Err(error::structure(
            Broken::SparseSizes(LAYOUT_COO),
            1,
            indices.len(),
            &format!("indices hold fewer than nnz * rank = {need} entries"),
        ));
    }
    let rules = Rules::of(LAYOUT_COO);
    for i in 0..nnz {
        dense.place(i, |d| indices.entry(i * rank + d as u64, &rules), 1)?;
    }
    Ok(())
}

fn densify_csf(dense: &mut Dense, desc: &TensorDescriptor, buffers: &[&[u8]]) -> Result<(), Error> {
    let LayoutFields::Csf(fields) = &desc.layout else {
        return Err(error::unsupported_layout(desc.layout_tag));
    };
    let rank = desc.shape.len();
    let nnz = fields.nnz;
    let mode_order = &fields.mode_order;
    let mut seen = vec![false; rank];
    if rank == 0
        || mode_order.len() != rank
        || !mode_order
            .iter()
            .all(|&m| (m as usize) < rank && !std::mem::replace(&mut seen[m as usize], true))
    {
        return Err(error::field(
            Broken::CsfModeOrder,
            "mode_order",
            format!("{mode_order:?} is not a permutation of 0..{rank}"),
        ));
    }
    // level_of[d] is the tree level storing logical dimension d.
    let mut level_of = vec![0usize; rank];
    for (level, &m) in mode_order.iter().enumerate() {
        level_of[m as usize] = level;
    }
    let pos: Vec<IndexArray> = (0..rank)
        .map(|l| IndexArray::u64s(buffers, 2 * l + 1))
        .collect::<Result<_, _>>()?;
    let crd: Vec<IndexArray> = (0..rank)
        .map(|l| IndexArray::u64s(buffers, 2 * l + 2))
        .collect::<Result<_, _>>()?;
    let rules = Rules::of(LAYOUT_CSF);
    let mut coords = vec![0u64; rank];
    // (level, next position, end of the slice)
    let root = (pos[0].entry(0, &rules)?, pos[0].entry(1, &rules)?);
    if root.0 != 0 || root.0 > root.1 {
        return Err(error::structure(
            if root.0 != 0 {
                rules.ends
            } else {
                rules.monotone
            },
            1,
            0,
            &format!("pos_0 is [{}, {}]", root.0, root.1),
        ));
    }
    let mut stack = vec![(0usize, root.0, root.1)];
    while let Some(top) = stack.last_mut() {
        let (level, i, end) = *top;
        if i == end {
            stack.pop();
            continue;
        }
        top.1 += 1;
        let c = crd[level].entry(i, &rules)?;
        let dim = mode_order[level] as usize;
        if c >= desc.shape[dim] {
            return Err(error::structure(
                rules.range,
                2 * level + 2,
                i,
                &format!(
                    "coordinate {c} is not below shape[{dim}] = {}",
                    desc.shape[dim]
                ),
            ));
        }
        coords[level] = c;
        if level + 1 == rank {
            if i >= nnz {
                return Err(error::structure(
                    rules.ends,
                    2 * level + 2,
                    i,
                    &format!("leaf position beyond nnz {nnz}"),
                ));
            }
            dense.place(i, |d| Ok(coords[level_of[d]]), 2 * level + 2)?;
        } else {
            let next = &pos[level + 1];
            let (start, stop) = (next.entry(i, &rules)?, next.entry(i + 1, &rules)?);
            if start > stop || stop > crd[level + 1].len() {
                return Err(error::structure(
                    if start > stop {
                        rules.monotone
                    } else {
                        rules.sizes
                    },
                    2 * level + 3,
                    i,
                    &format!(
                        "pointer slice {start}..{stop} is decreasing or beyond crd_{}",
                        level + 1
                    ),
                ));
            }
            stack.push((level + 1, start, stop));
        }
    }
    Ok(())
}

/// The sparse tensor `desc` (COO, CSR, CSC or CSF) as packed row-major bytes of at
/// most `limit` bytes. Fails on any pointer, coordinate or count that does not fit
/// the shape or the buffers.
pub fn densify(desc: &TensorDescriptor, buffers: &[&[u8]], limit: u64) -> Result<Vec<u8>, Error> {
    if !is_sparse(desc.layout_tag) {
        return Err(error::unsupported_layout(desc.layout_tag));
    }
    let mut dense = Dense::new(desc, buffers, limit)?;
    match desc.layout_tag {
        LAYOUT_COO => densify_coo(&mut dense, desc, buffers)?,
        LAYOUT_CSR => densify_compressed(&mut dense, desc, buffers, false)?,
        LAYOUT_CSC => densify_compressed(&mut dense, desc, buffers, true)?,
        _ => densify_csf(&mut dense, desc, buffers)?,
    }
    Ok(dense.out)
}

/// Encoders: a dense packed row-major tensor to each sparse layout, storing the
/// elements whose bit pattern is not all zero. Used by writers, tests and the
/// corpus generator.
pub mod encode {
    use crate::error::Error;
    use crate::layout::bits::{pack, read_bits};
    use crate::layout::error;
    use crate::model::build::descriptor;
    use crate::model::ElementType;
    use crate::schema::{
        CompressedFields, CooFields, CsfFields, LayoutFields, TensorDescriptor, LAYOUT_COO,
        LAYOUT_CSC, LAYOUT_CSF, LAYOUT_CSR,
    };

    /// A descriptor and its buffers, in buffer table order.
    pub type Encoded = (TensorDescriptor, Vec<Vec<u8>>);

    fn width(type_tag: u8) -> Result<u32, Error> {
        ElementType::from_tag(type_tag)
            .and_then(|t| t.bit_width())
            .ok_or_else(|| error::element_width(type_tag))
    }

    /// The stored (non-zero) elements of a dense row-major tensor: logical index
    /// and raw value, in row-major order.
    pub fn nonzeros(
        type_tag: u8,
        shape: &[u64],
        dense: &[u8],
    ) -> Result<Vec<(Vec<u64>, u128)>, Error> {
        let w = width(type_tag)?;
        let count = crate::layout::checked_count(shape)?;
        let mut out = Vec::new();
        let mut index = vec![0u64; shape.len()];
        for i in 0..count {
            let v = read_bits(dense, i * u64::from(w), w).ok_or_else(|| {
                error::out_of_bounds(0, i128::from(i) * i128::from(w), w, dense.len())
            })?;
            if v != 0 {
                out.push((index.clone(), v));
            }
            for k in (0..shape.len()).rev() {
                index[k] += 1;
                if index[k] < shape[k] {
                    break;
                }
                index[k] = 0;
            }
        }
        Ok(out)
    }

    fn u64s(values: impl IntoIterator<Item = u64>) -> Vec<u8> {
        values.into_iter().flat_map(u64::to_le_bytes).collect()
    }

    /// Sets each buffer handle's `byte_size` to its buffer's length.
    fn finish(mut desc: TensorDescriptor, buffers: Vec<Vec<u8>>) -> Encoded {
        for (h, b) in desc.buffers.iter_mut().zip(&buffers) {
            h.byte_size = b.len() as u64;
        }
        (desc, buffers)
    }

    /// COO with entries in row-major (sorted) order and `is_sorted = 1`.
    pub fn coo(type_tag: u8, shape: &[u64], dense: &[u8]) -> Result<Encoded, Error> {
        let nz = nonzeros(type_tag, shape, dense)?;
        let fields = CooFields {
            nnz: nz.len() as u64,
            is_sorted: 1,
            reserved: [0; 7],
        };
        let values = pack(width(type_tag)?, nz.iter().map(|(_, v)| *v));
        let indices = u64s(nz.iter().flat_map(|(i, _)| i.iter().copied()));
        let desc = descriptor(
            type_tag,
            LAYOUT_COO,
            shape,
            LayoutFields::Coo(fields),
            &[0, 0],
        );
        Ok(finish(desc, vec![values, indices]))
    }

    /// CSR (`by_column = false`) or CSC (`by_column = true`) of a rank-2 tensor.
    pub fn compressed(
        type_tag: u8,
        shape: &[u64],
        dense: &[u8],
        by_column: bool,
    ) -> Result<Encoded, Error> {
        if shape.len() != 2 {
            return Err(Error::Write(format!(
                "CSR and CSC need rank 2, the shape has {}",
                shape.len()
            )));
        }
        let mut nz = nonzeros(type_tag, shape, dense)?;
        let (major, minor) = if by_column { (1, 0) } else { (0, 1) };
        nz.sort_by_key(|(i, _)| (i[major], i[minor]));
        let mut ptr = vec![0u64; shape[major] as usize + 1];
        for (i, _) in &nz {
            ptr[i[major] as usize + 1] += 1;
        }
        for k in 1..ptr.len() {
            ptr[k] += ptr[k - 1];
        }
        let fields = CompressedFields {
            nnz: nz.len() as u64,
            reserved: [0; 8],
        };
        let (tag, layout) = if by_column {
            (LAYOUT_CSC, LayoutFields::Csc(fields))
        } else {
            (LAYOUT_CSR, LayoutFields::Csr(fields))
        };
        let values = pack(width(type_tag)?, nz.iter().map(|(_, v)| *v));
        let indices = u64s(nz.iter().map(|(i, _)| i[minor]));
        let desc = descriptor(type_tag, tag, shape, layout, &[0, 0, 0]);
        Ok(finish(desc, vec![values, indices, u64s(ptr)]))
    }

    /// CSF with the given `mode_order` (a permutation of `0..rank`).
    pub fn csf(
        type_tag: u8,
        shape: &[u64],
        dense: &[u8],
        mode_order: &[u32],
    ) -> Result<Encoded, Error> {
        let rank = shape.len();
        let mut nz = nonzeros(type_tag, shape, dense)?;
        // Storage-order coordinates, sorted: the leaf order of the tree.
        let key =
            |i: &Vec<u64>| -> Vec<u64> { mode_order.iter().map(|&m| i[m as usize]).collect() };
        nz.sort_by_key(|(i, _)| key(i));
        let keys: Vec<Vec<u64>> = nz.iter().map(|(i, _)| key(i)).collect();
        let mut buffers = vec![pack(width(type_tag)?, nz.iter().map(|(_, v)| *v))];
        // A node at level L is a distinct prefix of length L + 1.
        let mut parents_of_prev = 1usize; // nodes at level L - 1
        for level in 0..rank {
            let mut pos = vec![0u64];
            let mut crd = Vec::new();
            let mut count_in_parent = 0u64;
            let mut last: Option<&[u64]> = None;
            let mut parent_prefix: Option<&[u64]> = None;
            for k in &keys {
                let prefix = &k[..=level];
                if last == Some(prefix) {
                    continue;
                }
                let this_parent = &k[..level];
                if parent_prefix.is_some() && parent_prefix != Some(this_parent) {
                    pos.push(pos.last().copied().unwrap_or(0) + count_in_parent);
                    count_in_parent = 0;
                }
                parent_prefix = Some(this_parent);
                crd.push(k[level]);
                count_in_parent += 1;
                last = Some(prefix);
            }
            if parent_prefix.is_some() {
                pos.push(pos.last().copied().unwrap_or(0) + count_in_parent);
            }
            // Level 0 always has the single root; deeper levels one slot per parent.
            while pos.len() < parents_of_prev + 1 {
                pos.push(pos.last().copied().unwrap_or(0));
            }
            parents_of_prev = crd.len();
            buffers.push(u64s(pos));
            buffers.push(u64s(crd));
        }
        let fields = CsfFields {
            nnz: nz.len() as u64,
            mode_order: mode_order.to_vec(),
            reserved: [0; 8],
        };
        let desc = descriptor(
            type_tag,
            LAYOUT_CSF,
            shape,
            LayoutFields::Csf(fields),
            &vec![0; 2 * rank + 1],
        );
        Ok(finish(desc, buffers))
    }
}
