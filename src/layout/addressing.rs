//! Logical index → linear element offset for the dense layouts.
//!
//! A [`DenseMap`] is built once from a descriptor's layout fields and shape, then
//! maps a logical index `[i_0, …, i_{r-1}]` to the element's linear offset, counted
//! in elements from `byte_offset` (negative offsets are possible with reversed
//! strides). [`crate::layout::dense`] turns offsets into bit addresses.

use crate::schema::{
    LayoutFields, TiledFields, LAYOUT_COLUMN_MAJOR, LAYOUT_ROW_MAJOR, LAYOUT_STRIDED, LAYOUT_TILED,
};

use super::error;
use crate::error::Broken;
use crate::error::Error;

/// Highest rank the addressing handles (the spec's cap, and the parser's).
const MAX_RANK: usize = crate::schema::MAX_RANK as usize;

/// The addressing function of one dense layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DenseMap {
    /// `offset = Σ i_k · strides[k]`: row-major, column-major and strided.
    Affine(Vec<i128>),
    /// Tiled / blocked, possibly nested.
    Tiled(Box<TiledMap>),
    /// Morton (Z-order) with `morton_bits` per dimension.
    Morton(Vec<u32>),
    /// Hilbert curve of the given order (curve rank = tensor rank).
    Hilbert {
        /// `hilbert_order`.
        order: u32,
        /// `hilbert_rank`.
        rank: u32,
    },
}

/// One level of a tiled layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TiledMap {
    /// `tile_shape`.
    pub tile_shape: Vec<u64>,
    /// Tiles per dimension, `ceil(shape[k] / tile_shape[k])`.
    pub grid: Vec<u64>,
    /// Strides of the tile grid, in tiles.
    pub outer: Vec<i128>,
    /// Elements per tile, `product(tile_shape)`: the distance between tiles.
    pub tile_elements: i128,
    /// Addressing inside a tile (affine or a nested tiled level over `tile_shape`).
    pub inner: DenseMap,
}

/// Layout fields that do not fit the tensor's rank or layout tag: a descriptor
/// decoded from bytes always has them right, so only a caller's hand-built one
/// can get here.
fn inconsistent(field: &str, detail: String) -> Error {
    Error::Usage(format!("layout field {field}: {detail}"))
}

/// Implicit row-major strides of `shape` (all zero for an empty shape, whose
/// elements are never addressed).
pub fn row_major_strides(shape: &[u64]) -> Result<Vec<i128>, Error> {
    implicit_strides(shape.iter().rev()).map(|mut s| {
        s.reverse();
        s
    })
}

/// Implicit column-major strides of `shape` (all zero for an empty shape).
pub fn column_major_strides(shape: &[u64]) -> Result<Vec<i128>, Error> {
    implicit_strides(shape.iter())
}

fn implicit_strides<'a>(dims: impl Iterator<Item = &'a u64> + Clone) -> Result<Vec<i128>, Error> {
    if dims.clone().any(|&d| d == 0) {
        return Ok(dims.map(|_| 0).collect());
    }
    let mut acc: i128 = 1;
    let mut out = Vec::new();
    for &d in dims {
        out.push(acc);
        acc = acc
            .checked_mul(i128::from(d))
            .ok_or_else(|| error::overflow("implicit strides"))?;
    }
    Ok(out)
}

fn explicit_strides(strides: &[i64], rank: usize, name: &'static str) -> Result<Vec<i128>, Error> {
    if strides.len() != rank {
        return Err(inconsistent(
            name,
            format!("{} entries for rank {rank}", strides.len()),
        ));
    }
    Ok(strides.iter().map(|&s| i128::from(s)).collect())
}

fn affine_for(
    tag: u8,
    shape: &[u64],
    strides: Option<&Vec<i64>>,
    name: &'static str,
) -> Result<Vec<i128>, Error> {
    match tag {
        LAYOUT_ROW_MAJOR => row_major_strides(shape),
        LAYOUT_COLUMN_MAJOR => column_major_strides(shape),
        LAYOUT_STRIDED => match strides {
            Some(s) => explicit_strides(s, shape.len(), name),
            None => Err(inconsistent(name, "missing".into())),
        },
        other => Err(inconsistent(
            name,
            format!("layout tag {other:#04x} not allowed here"),
        )),
    }
}

impl TiledMap {
    /// Builds the tiled addressing of a tensor of `shape` from `fields`.
    pub fn new(fields: &TiledFields, shape: &[u64]) -> Result<Self, Error> {
        let rank = shape.len();
        if fields.tile_shape.len() != rank {
            return Err(inconsistent(
                "tile_shape",
                format!("{} entries for rank {rank}", fields.tile_shape.len()),
            ));
        }
        if let Some(k) = fields.tile_shape.iter().position(|&t| t == 0) {
            return Err(error::field(
                Broken::TileShape,
                "tile_shape",
                format!("entry {k} is 0"),
            ));
        }
        let grid: Vec<u64> = shape
            .iter()
            .zip(&fields.tile_shape)
            .map(|(&n, &t)| n.div_ceil(t))
            .collect();
        let outer = match fields.outer_layout {
            LAYOUT_ROW_MAJOR | LAYOUT_COLUMN_MAJOR | LAYOUT_STRIDED => affine_for(
                fields.outer_layout,
                &grid,
                fields.outer_strides.as_ref(),
                "outer_strides",
            )?,
            other => {
                return Err(error::field(
                    Broken::TiledOuter,
                    "outer_layout",
                    format!("{other:#04x}"),
                ))
            }
        };
        let tile_elements = fields
            .tile_shape
            .iter()
            .try_fold(1i128, |acc, &t| acc.checked_mul(i128::from(t)))
            .ok_or_else(|| error::overflow("product(tile_shape)"))?;
        let inner = match fields.inner_layout {
            LAYOUT_ROW_MAJOR | LAYOUT_COLUMN_MAJOR | LAYOUT_STRIDED => {
                DenseMap::Affine(affine_for(
                    fields.inner_layout,
                    &fields.tile_shape,
                    fields.inner_strides.as_ref(),
                    "inner_strides",
                )?)
            }
            LAYOUT_TILED => match &fields.inner_tiled {
                Some(nested) => {
                    DenseMap::Tiled(Box::new(TiledMap::new(nested, &fields.tile_shape)?))
                }
                None => {
                    return Err(inconsistent(
                        "inner_layout",
                        "nested tiled fields missing".into(),
                    ))
                }
            },
            other => {
                return Err(error::field(
                    Broken::TiledInner,
                    "inner_layout",
                    format!("{other:#04x}"),
                ))
            }
        };
        Ok(TiledMap {
            tile_shape: fields.tile_shape.clone(),
            grid,
            outer,
            tile_elements,
            inner,
        })
    }

    fn offset(&self, index: &[u64]) -> Option<i128> {
        // Stack scratch: ranks are at most 64 (the parser's ceiling).
        let rank = index.len();
        if rank > MAX_RANK {
            return None;
        }
        let mut within = [0u64; MAX_RANK];
        let mut tile_offset = 0i128;
        for (k, (&i, &t)) in index.iter().zip(&self.tile_shape).enumerate() {
            within[k] = i % t;
            let step = self.outer.get(k)?.checked_mul(i128::from(i / t))?;
            tile_offset = tile_offset.checked_add(step)?;
        }
        tile_offset
            .checked_mul(self.tile_elements)?
            .checked_add(self.inner.offset(&within[..rank])?)
    }

    /// Lowest and highest offsets over every padded tile position.
    fn padded_range(&self) -> Option<(i128, i128)> {
        if self.grid.contains(&0) {
            return None;
        }
        let (tmin, tmax) = affine_range(&self.outer, &self.grid)?;
        let (emin, emax) = self.inner.range(&self.tile_shape)?;
        Some((
            tmin.checked_mul(self.tile_elements)?.checked_add(emin)?,
            tmax.checked_mul(self.tile_elements)?.checked_add(emax)?,
        ))
    }

    /// Levels of tiling, this one included.
    pub fn depth(&self) -> u32 {
        1 + match &self.inner {
            DenseMap::Tiled(t) => t.depth(),
            _ => 0,
        }
    }
}

fn affine_offset(strides: &[i128], index: &[u64]) -> Option<i128> {
    strides.iter().zip(index).try_fold(0i128, |acc, (&s, &i)| {
        acc.checked_add(s.checked_mul(i128::from(i))?)
    })
}

/// Lowest and highest affine offsets over the box `[0, shape)` (non-empty).
fn affine_range(strides: &[i128], shape: &[u64]) -> Option<(i128, i128)> {
    let mut lo = 0i128;
    let mut hi = 0i128;
    for (&s, &n) in strides.iter().zip(shape) {
        let far = s.checked_mul(i128::from(n.checked_sub(1)?))?;
        if far < 0 {
            lo = lo.checked_add(far)?;
        } else {
            hi = hi.checked_add(far)?;
        }
    }
    Some((lo, hi))
}

impl DenseMap {
    /// The addressing of a tensor with `layout_tag`, `fields` and `shape`, or why
    /// the fields do not define one.
    pub fn new(layout_tag: u8, fields: &LayoutFields, shape: &[u64]) -> Result<Self, Error> {
        let rank = shape.len();
        match fields {
            LayoutFields::Implicit if layout_tag == LAYOUT_COLUMN_MAJOR => {
                Ok(DenseMap::Affine(column_major_strides(shape)?))
            }
            LayoutFields::Implicit => Ok(DenseMap::Affine(row_major_strides(shape)?)),
            LayoutFields::Strided { strides } => Ok(DenseMap::Affine(explicit_strides(
                strides, rank, "strides",
            )?)),
            LayoutFields::Tiled(t) => Ok(DenseMap::Tiled(Box::new(TiledMap::new(t, shape)?))),
            LayoutFields::Morton { morton_bits } => {
                if morton_bits.len() != rank {
                    return Err(inconsistent(
                        "morton_bits",
                        format!("{} entries for rank {rank}", morton_bits.len()),
                    ));
                }
                for (k, (&b, &n)) in morton_bits.iter().zip(shape).enumerate() {
                    if b == 0 {
                        return Err(error::field(
                            Broken::MortonBits,
                            "morton_bits",
                            format!("entry {k} is 0"),
                        ));
                    }
                    if b < 64 && n > 1u64 << b {
                        return Err(error::field(
                            Broken::MortonShape,
                            "morton_bits",
                            format!("shape[{k}] = {n} exceeds 2^{b}"),
                        ));
                    }
                }
                Ok(DenseMap::Morton(morton_bits.clone()))
            }
            LayoutFields::Hilbert(h) => {
                if h.hilbert_rank as usize != rank || rank < 2 {
                    let rule = if rank < 2 {
                        Broken::HilbertMinRank
                    } else {
                        Broken::HilbertRank
                    };
                    return Err(error::field(
                        rule,
                        "hilbert_rank",
                        format!("{} for tensor rank {rank}", h.hilbert_rank),
                    ));
                }
                let order = h.hilbert_order;
                if order == 0 || order > 63 || u64::from(order) * rank as u64 > 127 {
                    return Err(if order == 0 {
                        error::field(Broken::HilbertOrder, "hilbert_order", "0")
                    } else {
                        Error::Unsupported(format!(
                            "hilbert_order {order} for rank {rank}: more curve positions than 128-bit addresses reach"
                        ))
                    });
                }
                if let Some(k) = shape.iter().position(|&n| n > 1u64 << order) {
                    return Err(error::field(
                        Broken::HilbertShape,
                        "hilbert_order",
                        format!("shape[{k}] = {} exceeds 2^{order}", shape[k]),
                    ));
                }
                Ok(DenseMap::Hilbert {
                    order,
                    rank: h.hilbert_rank,
                })
            }
            _ => Err(error::unsupported_layout(layout_tag)),
        }
    }

    /// Linear element offset (from `byte_offset`) of `index`, `None` on overflow or
    /// when `index` has the wrong rank. `index` must lie inside the shape the map was
    /// built for.
    pub fn offset(&self, index: &[u64]) -> Option<i128> {
        match self {
            DenseMap::Affine(s) => {
                if s.len() != index.len() {
                    return None;
                }
                affine_offset(s, index)
            }
            DenseMap::Tiled(t) => {
                if t.tile_shape.len() != index.len() {
                    return None;
                }
                t.offset(index)
            }
            DenseMap::Morton(bits) => morton_code(index, bits).and_then(|c| i128::try_from(c).ok()),
            DenseMap::Hilbert { order, rank } => {
                if index.len() != *rank as usize {
                    return None;
                }
                hilbert_index(index, *order).and_then(|h| i128::try_from(h).ok())
            }
        }
    }

    /// The row through `index` (whose last coordinate is ignored), or `None` when
    /// the layout has no cheaper row form (Hilbert) or `index` does not fit.
    pub fn row(&self, index: &[u64]) -> Option<RowMap> {
        let (&_, prefix) = index.split_last()?;
        match self {
            DenseMap::Affine(s) => {
                let (&step, head) = s.split_last()?;
                Some(RowMap::Affine {
                    base: affine_offset(head, prefix)?,
                    step,
                })
            }
            DenseMap::Tiled(t) => {
                let (&tile, tiles) = t.tile_shape.split_last()?;
                let (&outer_step, outer) = t.outer.split_last()?;
                if index.len() > MAX_RANK || tiles.len() != prefix.len() {
                    return None;
                }
                let mut within = [0u64; MAX_RANK];
                let mut base = 0i128;
                for (k, (&i, &ts)) in prefix.iter().zip(tiles).enumerate() {
                    within[k] = i % ts;
                    base = base.checked_add(outer.get(k)?.checked_mul(i128::from(i / ts))?)?;
                }
                Some(RowMap::Tiled {
                    base,
                    outer_step,
                    tile_elements: t.tile_elements,
                    tile,
                    inner: Box::new(t.inner.row(&within[..index.len()])?),
                })
            }
            DenseMap::Morton(bits) => {
                let mut first = index.to_vec();
                *first.last_mut()? = 0;
                Some(RowMap::Morton {
                    prefix: morton_code(&first, bits)?,
                    rank: u32::try_from(index.len()).ok()?,
                    bits: *bits.last()?,
                })
            }
            DenseMap::Hilbert { .. } => None,
        }
    }

    /// Lowest and highest offsets this layout may address for a tensor of `shape`,
    /// padding included (whole tiles, the whole curve); `None` for an empty shape or
    /// on overflow.
    pub fn range(&self, shape: &[u64]) -> Option<(i128, i128)> {
        if shape.contains(&0) {
            return None;
        }
        match self {
            DenseMap::Affine(s) => affine_range(s, shape),
            DenseMap::Tiled(t) => t.padded_range(),
            DenseMap::Morton(bits) => {
                // The code grows with each coordinate, so the last index is the highest;
                // the curve itself spans 2^sum(bits) codes.
                let last: Vec<u64> = shape.iter().map(|&n| n - 1).collect();
                let top = i128::try_from(morton_code(&last, bits)?).ok()?;
                let total: u64 = bits.iter().map(|&b| u64::from(b)).sum();
                let curve = if total < 127 {
                    (1i128 << total) - 1
                } else {
                    return None;
                };
                Some((0, top.max(curve)))
            }
            DenseMap::Hilbert { order, rank } => {
                let total = u64::from(*order) * u64::from(*rank);
                (total < 127).then(|| (0, (1i128 << total) - 1))
            }
        }
    }
}

/// Offsets along the last dimension with every other coordinate fixed: what
/// [`DenseMap::row`] returns, so that a row can be walked without recomputing the
/// contribution of the other dimensions for each element.
#[derive(Clone, Debug)]
pub enum RowMap {
    /// `base + step * c`.
    Affine {
        /// Offset of the row's element 0.
        base: i128,
        /// Stride of the last dimension.
        step: i128,
    },
    /// `(base + outer_step * (c / tile)) * tile_elements + inner(c % tile)`.
    Tiled {
        /// Tile-grid offset of the row's first tile.
        base: i128,
        /// Tile-grid stride of the last dimension.
        outer_step: i128,
        /// Elements per tile.
        tile_elements: i128,
        /// Tile size along the last dimension.
        tile: u64,
        /// The row inside a tile.
        inner: Box<RowMap>,
    },
    /// `prefix | spread(c)`, bit `b` of `c` going to bit `b * rank + last`.
    Morton {
        /// Code of the row's element 0.
        prefix: u128,
        /// Tensor rank.
        rank: u32,
        /// Bits of the last dimension.
        bits: u32,
    },
}

impl RowMap {
    /// Offset of element `c` of the row. Arithmetic wraps: callers use it only
    /// after checking that the layout's extreme offsets are in range, which bounds
    /// every intermediate value.
    pub fn offset(&self, c: u64) -> i128 {
        match self {
            RowMap::Affine { base, step } => base.wrapping_add(step.wrapping_mul(i128::from(c))),
            RowMap::Tiled {
                base,
                outer_step,
                tile_elements,
                tile,
                inner,
            } => base
                .wrapping_add(outer_step.wrapping_mul(i128::from(c / tile)))
                .wrapping_mul(*tile_elements)
                .wrapping_add(inner.offset(c % tile)),
            RowMap::Morton { prefix, rank, bits } => {
                let last = rank - 1;
                let mut code = *prefix;
                let mut rest = if *bits < 64 {
                    c & ((1u64 << bits) - 1)
                } else {
                    c
                };
                while rest != 0 {
                    let b = rest.trailing_zeros();
                    let pos = b * rank + last;
                    if pos < 128 {
                        code |= 1u128 << pos;
                    }
                    rest &= rest - 1;
                }
                code as i128
            }
        }
    }
}

/// The Morton code of `index` (morton.md): bit `b` of `index[d]` goes to bit
/// `b * rank + d` for `b < morton_bits[d]` (the formula as written, also for
/// unequal bit counts). `None` when a coordinate needs more than its bits or the
/// code needs more than 128 bits.
pub fn morton_code(index: &[u64], morton_bits: &[u32]) -> Option<u128> {
    let rank = index.len() as u64;
    if morton_bits.len() != index.len() {
        return None;
    }
    let mut code = 0u128;
    for (d, (&i, &bits)) in index.iter().zip(morton_bits).enumerate() {
        if bits < 64 && i >> bits != 0 {
            return None;
        }
        let mut rest = i;
        while rest != 0 {
            let b = u64::from(rest.trailing_zeros());
            let pos = b.checked_mul(rank)?.checked_add(d as u64)?;
            if pos >= 128 {
                return None;
            }
            code |= 1u128 << pos;
            rest &= rest - 1;
        }
    }
    Some(code)
}

/// The index whose Morton code is `code`, or `None` when `code` is not the code
/// of any index (a set bit that no coordinate bit maps to).
pub fn morton_decode(code: u128, morton_bits: &[u32]) -> Option<Vec<u64>> {
    let rank = morton_bits.len() as u32;
    if rank == 0 {
        return (code == 0).then(Vec::new);
    }
    let mut index = vec![0u64; morton_bits.len()];
    let mut rest = code;
    while rest != 0 {
        let pos = rest.trailing_zeros();
        let (b, d) = (pos / rank, (pos % rank) as usize);
        if b >= morton_bits[d] || b >= 64 {
            return None;
        }
        index[d] |= 1u64 << b;
        rest &= rest - 1;
    }
    Some(index)
}

/// The Hilbert index of `coords` on a curve of order `order` (hilbert.md,
/// `CoordsToHilbert`); `None` when `order` is 0 or above 63, a coordinate is
/// `2^order` or more, or the index needs more than 128 bits.
pub fn hilbert_index(coords: &[u64], order: u32) -> Option<u128> {
    let r = coords.len();
    if order == 0 || order > 63 || r == 0 || (order as usize) * r > 128 {
        return None;
    }
    if coords.iter().any(|&c| c >> order != 0) {
        return None;
    }
    if r > MAX_RANK {
        return None;
    }
    let mut scratch = [0u64; MAX_RANK];
    let x = &mut scratch[..r];
    x.copy_from_slice(coords);
    let m = 1u64 << (order - 1);
    let mut q = m;
    while q > 1 {
        let p = q - 1;
        for i in 0..r {
            if x[i] & q != 0 {
                x[0] ^= p;
            } else {
                let t = (x[0] ^ x[i]) & p;
                x[0] ^= t;
                x[i] ^= t;
            }
        }
        q >>= 1;
    }
    for i in 1..r {
        x[i] ^= x[i - 1];
    }
    let mut t = 0u64;
    let mut q = m;
    while q > 1 {
        if x[r - 1] & q != 0 {
            t ^= q - 1;
        }
        q >>= 1;
    }
    for xi in x.iter_mut() {
        *xi ^= t;
    }
    let mut h = 0u128;
    for b in 0..order as usize {
        for (d, &xd) in x.iter().enumerate() {
            h |= u128::from((xd >> b) & 1) << (b * r + (r - 1 - d));
        }
    }
    Some(h)
}

/// The coordinates at Hilbert index `h` on an `r`-dimensional curve of order
/// `order` (hilbert.md, `HilbertToCoords`); `None` for unsupported sizes or an
/// index beyond the curve.
pub fn hilbert_coords(h: u128, r: usize, order: u32) -> Option<Vec<u64>> {
    if order == 0 || order > 63 || r == 0 || (order as usize) * r > 128 {
        return None;
    }
    let bits = order as usize * r;
    if bits < 128 && h >> bits != 0 {
        return None;
    }
    let mut x = vec![0u64; r];
    for b in 0..order as usize {
        for (d, xd) in x.iter_mut().enumerate() {
            *xd |= (((h >> (b * r + (r - 1 - d))) & 1) as u64) << b;
        }
    }
    let t = x[r - 1] >> 1;
    for i in (1..r).rev() {
        x[i] ^= x[i - 1];
    }
    x[0] ^= t;
    let mut q = 2u64;
    let end = 1u128 << order;
    while u128::from(q) != end {
        let p = q - 1;
        for i in (0..r).rev() {
            if x[i] & q != 0 {
                x[0] ^= p;
            } else {
                let t = (x[0] ^ x[i]) & p;
                x[0] ^= t;
                x[i] ^= t;
            }
        }
        q <<= 1;
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_examples() {
        // row-major.md / column-major.md: [3, 4], element [1, 2].
        let rm = row_major_strides(&[3, 4]).unwrap();
        assert_eq!(affine_offset(&rm, &[1, 2]), Some(6));
        let cm = column_major_strides(&[3, 4]).unwrap();
        assert_eq!(affine_offset(&cm, &[1, 2]), Some(7));
        // strided.md: strides [-4, 1], element [2, 3] at -5, range -8..=0.
        assert_eq!(affine_offset(&[-4, 1], &[2, 3]), Some(-5));
        assert_eq!(affine_range(&[-4, 1], &[3, 4]), Some((-8, 3)));
        // morton.md: [2, 3] with bits [2, 2] is 14.
        assert_eq!(morton_code(&[2, 3], &[2, 2]), Some(14));
        assert_eq!(morton_decode(14, &[2, 2]), Some(vec![2, 3]));
        // tiled.md: [6, 8], tiles [2, 4], element [3, 5] at 29.
        let fields = TiledFields {
            tile_shape: vec![2, 4],
            outer_layout: 1,
            inner_layout: 1,
            reserved: [0; 2],
            outer_strides: None,
            inner_strides: None,
            inner_tiled: None,
        };
        let map = TiledMap::new(&fields, &[6, 8]).unwrap();
        assert_eq!(map.grid, vec![3, 2]);
        assert_eq!(map.offset(&[3, 5]), Some(29));
    }

    #[test]
    fn hilbert_matches_conformance_table() {
        let table: [(u128, u64, u64); 16] = [
            (0, 0, 0),
            (1, 1, 0),
            (2, 1, 1),
            (3, 0, 1),
            (4, 0, 2),
            (5, 0, 3),
            (6, 1, 3),
            (7, 1, 2),
            (8, 2, 2),
            (9, 2, 3),
            (10, 3, 3),
            (11, 3, 2),
            (12, 3, 1),
            (13, 2, 1),
            (14, 2, 0),
            (15, 3, 0),
        ];
        for (h, x0, x1) in table {
            assert_eq!(hilbert_coords(h, 2, 2), Some(vec![x0, x1]), "h = {h}");
            assert_eq!(hilbert_index(&[x0, x1], 2), Some(h), "[{x0}, {x1}]");
        }
    }

    #[test]
    fn hilbert_is_a_bijection_with_unit_steps() {
        for (r, p) in [(2usize, 1u32), (2, 3), (3, 2), (4, 2), (3, 3)] {
            let n = 1u128 << (r as u32 * p);
            let mut seen = std::collections::HashSet::new();
            let mut prev: Option<Vec<u64>> = None;
            for h in 0..n {
                let x = hilbert_coords(h, r, p).unwrap();
                assert_eq!(hilbert_index(&x, p), Some(h));
                assert!(seen.insert(x.clone()));
                if let Some(prev) = prev {
                    let steps: u64 = prev.iter().zip(&x).map(|(a, b)| a.abs_diff(*b)).sum();
                    assert_eq!(steps, 1, "r {r} p {p} h {h}");
                }
                prev = Some(x);
            }
        }
    }

    #[test]
    fn morton_unequal_bits_follow_formula() {
        // bits [1, 3], rank 2: bit b of i_1 goes to 2b + 1.
        assert_eq!(morton_code(&[1, 0b111], &[1, 3]), Some(0b10_1011));
        assert_eq!(morton_decode(0b10_1011, &[1, 3]), Some(vec![1, 0b111]));
        assert_eq!(morton_decode(0b100, &[1, 3]), None);
        assert_eq!(morton_code(&[2, 0], &[1, 3]), None);
    }

    #[test]
    fn nested_tiles_are_product_apart() {
        // [4, 4] in 2x2 tiles (row-major grid), each tile split into 1x2 sub-tiles.
        let nested = TiledFields {
            tile_shape: vec![1, 2],
            outer_layout: 1,
            inner_layout: 1,
            reserved: [0; 2],
            outer_strides: None,
            inner_strides: None,
            inner_tiled: None,
        };
        let fields = TiledFields {
            tile_shape: vec![2, 2],
            outer_layout: 2,
            inner_layout: LAYOUT_TILED,
            reserved: [0; 2],
            outer_strides: None,
            inner_strides: None,
            inner_tiled: Some(Box::new(nested)),
        };
        let map = TiledMap::new(&fields, &[4, 4]).unwrap();
        assert_eq!(map.depth(), 2);
        // Tile [1, 0] is second in column-major grid order: starts at 4.
        assert_eq!(map.offset(&[2, 0]), Some(4));
        assert_eq!(map.offset(&[3, 1]), Some(7));
        assert_eq!(map.offset(&[1, 3]), Some(8 + 3));
        assert_eq!(map.padded_range(), Some((0, 15)));
    }
}
