//! Checks of a tensor's quantization descriptor against the rules in
//! [`rules::quant`](crate::validate::rules::quant), plus the element addressing that the
//! checks and the dequantizer share (the rest of the quantization model is
//! [`crate::model::quant`]).
//!
//! Checks that depend on a field are skipped once that field is reported, so a
//! descriptor with one fault reports one rule.

use crate::layout::dense::{is_contiguous, is_dense};
use crate::layout::DenseMap;
use crate::model::element_type::ElementType;
use crate::schema::{
    descriptor_offsets, BlockPagedFields, BlockScaled, BufferHandle, LayoutFields, PerBlockAffine,
    PerChannelAffine, PerTensorAffine, QuantScheme, TensorDescriptor, FLAG_SYMMETRIC,
    LAYOUT_COMPOSITE, NO_ZERO_POINT_BUFFER, SCHEME_MXFP, SCHEME_VERSION_MAX,
};

use super::input::{Buffers, DataReads, Window};
use crate::model::quant::{
    block_scale_size, element_bits, int_range, widen_scale, BlockGeometry, AFFINE_STORAGE,
    MXFP_STORAGE, NF4_STORAGE, PER_BLOCK_STORAGE,
};
use crate::validate::rules::layout::{
    LY_BP_QUANT_BLOCK, LY_BP_QUANT_CHANNEL, LY_BP_QUANT_SCHEME, LY_BP_QUANT_UNDEFINED,
};
use crate::validate::rules::quant::*;
use crate::validate::{Report, Rule};

/// Where the elements of a dense tensor are: element `index` starts at bit
/// `origin_bits + bit_width * map.offset(index)` of the data buffer, for every dense
/// layout (the same addressing the layout module reads unquantized tensors with).
#[derive(Clone, Debug)]
pub struct Addressing {
    /// `byte_offset * 8`.
    pub origin_bits: i128,
    /// Element offsets of the layout, built for the storage shape.
    pub map: DenseMap,
    /// Bits per element.
    pub bit_width: u32,
}

impl Addressing {
    /// The addressing of `desc`'s data laid out for `storage_shape` (the shape with
    /// a per-block axis padded to whole blocks); `None` for a layout that is not
    /// dense or whose fields do not define an addressing for that shape.
    pub fn new(desc: &TensorDescriptor, storage_shape: &[u64], bit_width: u32) -> Option<Self> {
        if !is_dense(desc.layout_tag) {
            return None;
        }
        let map = DenseMap::new(desc.layout_tag, &desc.layout, storage_shape).ok()?;
        Some(Addressing {
            origin_bits: i128::from(desc.byte_offset) * 8,
            map,
            bit_width,
        })
    }

    /// The addressing of a packed row-major array of `storage_shape` starting at the
    /// buffer's first byte (a block-paged page pool).
    pub fn row_major(storage_shape: &[u64], bit_width: u32) -> Option<Self> {
        let map = DenseMap::new(
            crate::schema::LAYOUT_ROW_MAJOR,
            &LayoutFields::Implicit,
            storage_shape,
        )
        .ok()?;
        Some(Addressing {
            origin_bits: 0,
            map,
            bit_width,
        })
    }

    /// The first bit of the element at `index` (inside the storage shape); `None`
    /// on overflow.
    pub fn bit(&self, index: &[u64]) -> Option<i128> {
        let offset = self.map.offset(index)?;
        self.origin_bits
            .checked_add(offset.checked_mul(i128::from(self.bit_width))?)
    }

    /// The bits `[start, end)` the layout may address for `shape` (padding of tiles
    /// and curves included): `Some(None)` for a shape with no element, `None` when
    /// the arithmetic overflows.
    pub fn bit_span(&self, shape: &[u64]) -> Option<Option<(i128, i128)>> {
        if shape.contains(&0) {
            return Some(None);
        }
        let (lo, hi) = self.map.range(shape)?;
        let w = i128::from(self.bit_width);
        let start = self.origin_bits.checked_add(lo.checked_mul(w)?)?;
        let end = self
            .origin_bits
            .checked_add(hi.checked_add(1)?.checked_mul(w)?)?;
        Some(Some((start, end)))
    }

    /// Bytes a buffer needs so that every element of `shape` lies inside it (0 for
    /// a shape with no element); `None` when an element would lie before the start
    /// or the arithmetic overflows.
    pub fn required_bytes(&self, shape: &[u64]) -> Option<u128> {
        match self.bit_span(shape)? {
            None => Some(0),
            Some((lo, _)) if lo < 0 => None,
            Some((_, hi)) => u128::try_from(hi).ok().map(|b| b.div_ceil(8)),
        }
    }
}

/// Shared state of one descriptor's checks.
struct Ctx<'a, 'r> {
    desc: &'a TensorDescriptor,
    desc_offset: u64,
    /// Absolute offset of the quantization descriptor's first byte.
    base: u64,
    buffers: Option<Buffers<'a>>,
    /// Absolute offsets of the buffers, when known.
    offsets: Option<&'a [u64]>,
    /// Buffers the layout itself uses ([`crate::layout::own_buffer_count`]).
    own: Option<u64>,
    /// The block-paged fields, for a block-paged tensor.
    paged: Option<&'a BlockPagedFields>,
    report: &'r mut Report,
}

/// A parameter array the scheme references.
#[derive(Clone, Copy)]
struct Param {
    /// Buffer table index.
    index: u32,
    /// Offset of the index field inside the quantization descriptor.
    field: u64,
    /// Exact byte size of the array, when known.
    bytes: Option<u64>,
}

/// Checks the quantization section of `desc`, if any. `desc_offset` is the absolute
/// offset of the descriptor; `buffers` the tensor's data buffers (index = buffer
/// table index), when available, for the checks of scale, zero-point and padding
/// values (violations there are reported at the buffer handle).
pub fn check(
    desc: &TensorDescriptor,
    desc_offset: u64,
    buffers: Option<&[&[u8]]>,
    report: &mut Report,
) {
    check_buffers(
        desc,
        desc_offset,
        buffers.map(Buffers::Slices),
        None,
        report,
    );
}

/// [`check`] over buffers in memory or in the input being validated; with
/// `offsets` (the absolute offset of each buffer in the file), violations in buffer
/// values are reported at the offending bytes.
pub(crate) fn check_buffers(
    desc: &TensorDescriptor,
    desc_offset: u64,
    buffers: Option<Buffers<'_>>,
    offsets: Option<&[u64]>,
    report: &mut Report,
) {
    let Some(section) = &desc.quantization else {
        return;
    };
    // A composite head has no data to dequantize: its quantization section is
    // TD-CMP-006's fault alone.
    if desc.layout_tag == LAYOUT_COMPOSITE {
        return;
    }
    // Fewer than 4 bytes is TD-QNT-001, the container's rule.
    let Some(header) = section.header() else {
        return;
    };
    let length_pos = desc_offset + desc.quantization_pos();
    let paged = match &desc.layout {
        LayoutFields::BlockPaged(b) => Some(b),
        _ => None,
    };
    let mut cx = Ctx {
        desc,
        desc_offset,
        base: length_pos + 4,
        buffers,
        offsets,
        own: crate::layout::own_buffer_count(desc),
        paged,
        report,
    };
    let tag = header.scheme_tag;
    match tag {
        0x00 | 0xFF => {
            cx.report.violation(
                &QZ_TAG_INVALID,
                cx.base,
                format!("scheme_tag: expected an assigned scheme, found reserved 0x{tag:02X}"),
            );
            return;
        }
        0x60..=0xEF => {
            cx.report.violation(
                &QZ_TAG_RESERVED,
                cx.base,
                format!("scheme_tag: 0x{tag:02X} lies in a reserved range (0x60-0xEF)"),
            );
            return;
        }
        0x01..=0x05 => {}
        _ => {
            let message = format!("scheme_tag: 0x{tag:02X} is not an assigned scheme (0x01-0x05)");
            if !cx.report.rules().is_strict() {
                cx.report.note(format!(
                    "{message}; descriptor skipped, tensor data not interpreted"
                ));
            } else {
                cx.report.violation(&QZ_TAG_UNKNOWN, cx.base, message);
            }
            return;
        }
    }
    if header.scheme_version == 0 {
        cx.report.violation(
            &QZ_VERSION_ZERO,
            cx.base + 1,
            "scheme_version: expected 1, found 0",
        );
        return;
    }
    if header.scheme_version > SCHEME_VERSION_MAX {
        cx.report.violation(
            &QZ_VERSION_NEWER,
            cx.base + 1,
            format!(
                "scheme_version: highest defined is {SCHEME_VERSION_MAX}, found {}",
                header.scheme_version
            ),
        );
        return;
    }
    let Some(scheme) = section.scheme() else {
        let need = crate::schema::scheme_fixed_len(tag).unwrap_or(4);
        cx.report.violation(
            &QZ_LENGTH,
            length_pos,
            format!(
                "quantization_length: {} needs at least {need} bytes, found {}",
                crate::schema::scheme_name(tag),
                section.bytes().len()
            ),
        );
        return;
    };
    let allowed_flags = match scheme {
        QuantScheme::PerChannelAffine(_) | QuantScheme::PerBlockAffine(_) => FLAG_SYMMETRIC,
        _ => 0,
    };
    cx.report.check(
        header.flags & !allowed_flags == 0,
        &QZ_FLAGS_RESERVED,
        cx.base + 2,
        || {
            format!(
                "flags: reserved bits must be 0 (defined mask 0x{allowed_flags:04X}), found 0x{:04X}",
                header.flags
            )
        },
    );
    if let (Some(_), QuantScheme::Nf4(b) | QuantScheme::Mxfp(b)) = (cx.paged, scheme) {
        // block-paged.md: the paged axis MUST use per-block affine; along axes 1
        // and 2 it defines no composition for NF4 and MXFP (its parameters are per
        // page slot), which hrry's policy refuses.
        let rule = if b.axis == 0 {
            &LY_BP_QUANT_SCHEME
        } else {
            &LY_BP_QUANT_UNDEFINED
        };
        cx.report.violation(
            rule,
            cx.base,
            format!(
                "scheme_tag: {} along axis {} of a block-paged tensor (the paged axis takes \
                 per-block affine; the spec composes no other block scheme with the pages)",
                crate::schema::scheme_name(tag),
                b.axis
            ),
        );
        return;
    }
    match scheme {
        QuantScheme::PerTensorAffine(d) => cx.per_tensor(d),
        QuantScheme::PerChannelAffine(d) => cx.per_channel(d),
        QuantScheme::PerBlockAffine(d) => cx.per_block(d),
        QuantScheme::Nf4(d) => cx.nf4(d),
        QuantScheme::Mxfp(d) => cx.mxfp(d),
    }
}

impl<'a> Ctx<'a, '_> {
    fn storage_type(
        &mut self,
        rule: &'static Rule,
        allowed: &[ElementType],
    ) -> Option<ElementType> {
        let tag = self.desc.type_tag;
        let ty = ElementType::from_tag(tag).filter(|t| allowed.contains(t));
        if ty.is_none() {
            let names: Vec<&str> = allowed.iter().map(|t| t.name()).collect();
            let found = ElementType::from_tag(tag).map_or("unassigned", |t| t.name());
            self.report.violation(
                rule,
                self.desc_offset + descriptor_offsets::TYPE_TAG,
                format!(
                    "type_tag: expected one of {}, found 0x{tag:02X} ({found})",
                    names.join(", ")
                ),
            );
        }
        ty
    }

    /// Checks `axis < rank` (`rule`) and that `shape[axis]` is not the dynamic
    /// sentinel (`dynamic`); `None` when either fails.
    fn axis(
        &mut self,
        rule: &'static Rule,
        dynamic: &'static Rule,
        axis: u32,
        field: u64,
    ) -> Option<usize> {
        let rank = self.desc.shape.len();
        let ok = (axis as usize) < rank;
        if !self.report.check(ok, rule, self.base + field, || {
            format!("axis: expected < rank {rank}, found {axis}")
        }) {
            return None;
        }
        // The scheme's own rule, not TD-SHP-002 (a hardening rule for every other
        // dimension): the scheme needs the size, so the descriptor is invalid in
        // every mode. No geometry is built from it.
        let a = axis as usize;
        let offset = self.desc_offset + descriptor_offsets::SHAPE + 8 * u64::from(axis);
        self.report
            .check(self.desc.shape[a] != u64::MAX, dynamic, offset, || {
                format!("shape[{a}] (the quantization axis) is the dynamic dimension sentinel")
            })
            .then_some(a)
    }

    fn reserved(&mut self, rule: &'static Rule, bytes: &[u8], field: u64) {
        self.report.check(
            super::input::first_nonzero_byte(bytes).is_none(),
            rule,
            self.base + field,
            || format!("_reserved: expected zero bytes, found {bytes:02X?}"),
        );
    }

    fn symmetric_index(&mut self, rule: &'static Rule, flags: u16, zp_index: u32, field: u64) {
        if flags & FLAG_SYMMETRIC != 0 {
            self.report.check(
                zp_index == NO_ZERO_POINT_BUFFER,
                rule,
                self.base + field,
                || {
                    format!(
                        "zero_point_buffer_index: SYMMETRIC requires 0xFFFFFFFF, found {zp_index}"
                    )
                },
            );
        }
    }

    /// Block size: a power of two in `[min, max]`.
    fn block_size(&mut self, rule: &'static Rule, block_size: u32, min: u32, max: u32) -> bool {
        let ok = block_size.is_power_of_two() && (min..=max).contains(&block_size);
        self.report
            .check(ok, rule, self.base + BlockScaled::BLOCK_SIZE, || {
                if max == u32::MAX {
                    format!("block_size: expected a power of two >= {min}, found {block_size}")
                } else {
                    format!(
                        "block_size: expected a power of two in [{min}, {max}], found {block_size}"
                    )
                }
            })
    }

    /// `block_size <= shape[axis]` when `shape[axis] > 0`.
    fn block_fits(&mut self, rule: &'static Rule, geometry: &BlockGeometry) {
        let (s, k) = (geometry.axis_len, geometry.block_size);
        self.report.check(
            s == 0 || k <= s,
            rule,
            self.base + BlockScaled::BLOCK_SIZE,
            || {
                format!(
                    "block_size: must not exceed shape[{}] = {s}, found {k}",
                    geometry.axis
                )
            },
        );
    }

    /// Index range, data-buffer and layout-buffer exclusion, device, sizes and
    /// buffer count of the parameter buffers, for every layout whose own buffers are
    /// known. Returns true when every index is usable.
    fn params(
        &mut self,
        index_rule: &'static Rule,
        size_rule: &'static Rule,
        scale: Param,
        zero_point: Option<Param>,
    ) -> bool {
        let count = self.desc.buffers.len();
        let mut usable = true;
        let list: Vec<Param> = std::iter::once(scale).chain(zero_point).collect();
        for p in &list {
            let idx = p.index as usize;
            if !self
                .report
                .check(idx < count, index_rule, self.base + p.field, || {
                    format!(
                        "buffer index: expected < buffer_count {count}, found {}",
                        p.index
                    )
                })
            {
                usable = false;
                continue;
            }
            if !self
                .report
                .check(idx != 0, &QZ_BUF_DATA, self.base + p.field, || {
                    "buffer index: 0 is the tensor data buffer".to_string()
                })
            {
                usable = false;
                continue;
            }
            if let Some(own) = self.own {
                if !self.report.check(
                    p.index as u64 >= own,
                    &QZ_BUF_LAYOUT,
                    self.base + p.field,
                    || format!("buffer index: {idx} is one of the layout's own {own} buffers"),
                ) {
                    usable = false;
                    continue;
                }
            }
            // A block-paged tensor's buffers share one device under LY-BP-013.
            if self.paged.is_none() {
                let (data_dev, dev) = (
                    self.desc.buffers[0].device_tag,
                    self.desc.buffers[idx].device_tag,
                );
                self.report.check(
                    dev == data_dev,
                    &QZ_DEVICE,
                    self.desc_offset + self.desc.buffer_pos(idx) + BufferHandle::DEVICE_TAG,
                    || format!("device_tag of buffer {idx}: expected {data_dev} (the data buffer's), found {dev}"),
                );
            }
        }
        let Some(own) = self.own.filter(|_| usable) else {
            return usable;
        };
        let shared = zero_point.filter(|z| z.index == scale.index);
        if let Some(z) = shared {
            if let (Some(a), Some(b)) = (scale.bytes, z.bytes) {
                let idx = scale.index as usize;
                let have = self.desc.buffers[idx].byte_size;
                let need = a.checked_add(b);
                self.report.check(
                    need.is_some_and(|n| have >= n),
                    &QZ_BUF_SHARED,
                    self.desc_offset + self.desc.buffer_pos(idx),
                    || {
                        format!(
                            "byte_size of shared buffer {idx}: expected at least {a} + {b} bytes ([scales | zero_points]), found {have}"
                        )
                    },
                );
            }
        } else {
            for p in &list {
                let Some(want) = p.bytes else { continue };
                let idx = p.index as usize;
                let have = self.desc.buffers[idx].byte_size;
                self.report.check(
                    have == want,
                    size_rule,
                    self.desc_offset + self.desc.buffer_pos(idx),
                    || {
                        format!(
                            "byte_size of parameter buffer {idx}: expected {want}, found {have}"
                        )
                    },
                );
            }
        }
        let distinct = if shared.is_some() {
            1
        } else {
            list.len() as u64
        };
        self.buffer_count(&QZ_BUF_COUNT, own, distinct);
        true
    }

    /// `buffer_count` is the layout's `own` buffers plus `distinct` parameter
    /// buffers. Fewer than the layout's own is the layout's buffer rule, not this.
    fn buffer_count(&mut self, rule: &'static Rule, own: u64, distinct: u64) {
        let count = self.desc.buffers.len() as u64;
        if count < own {
            return;
        }
        self.report.check(
            count == own + distinct,
            rule,
            self.desc_offset + self.desc.buffer_table_pos(),
            || {
                format!(
                    "buffer_count: expected the layout's {own} buffer(s) + {distinct} parameter buffer(s) = {}, found {count}",
                    own + distinct
                )
            },
        );
    }

    /// The page slots of a block-paged tensor (`num_pages * page_size`), the entry
    /// count of its per-slot parameter arrays; `None` when not block-paged or on
    /// overflow.
    fn page_slots(&self) -> Option<u64> {
        let b = self.paged?;
        b.num_pages.checked_mul(u64::from(b.page_size))
    }

    /// `TD-BUF-006` for the storage elements of a row- or column-major tensor: the
    /// bits after the last packed sub-byte code are zero.
    fn packing_tail(&mut self, storage_shape: &[u64], width: u32) {
        let rule = &crate::validate::rules::container::TD_BUF_TAIL;
        if !is_contiguous(self.desc.layout_tag) {
            return;
        }
        let Some(consent) = DataReads::for_rule(self.report, rule) else {
            return;
        };
        let (Some(count), Some(mut data)) = (
            crate::model::element_count(storage_shape),
            self.data_buffer(consent),
        ) else {
            return;
        };
        if let Some(tail) = data.packing_tail(count, width, self.desc.byte_offset) {
            let pos = self.value_pos(0, tail.byte_index);
            self.report.violation(rule, pos, tail.to_string());
        }
    }

    /// The bytes of parameter buffer `index`, when the caller passed buffers. A
    /// parameter naming buffer 0 (the data buffer, which it must not) is read only
    /// with the judging's consent.
    fn buffer(&self, index: u32) -> Option<Window<'a>> {
        match index {
            0 => self.data_buffer(DataReads::given(self.report)?),
            _ => self.buffers?.window(index as usize, u64::MAX),
        }
    }

    /// The bytes of the data buffer (buffer 0), when the caller passed buffers:
    /// only with the judging's consent.
    fn data_buffer(&self, consent: DataReads) -> Option<Window<'a>> {
        self.buffers?.data(consent, u64::MAX)
    }

    /// Where a violation in byte `byte` of buffer `index` is reported: that byte in
    /// the file when the buffer offsets are known, else the buffer's handle.
    fn value_pos(&self, index: u32, byte: u64) -> u64 {
        match self.offsets.and_then(|o| o.get(index as usize)) {
            Some(&at) => at + byte,
            None => self.desc_offset + self.desc.buffer_pos(index as usize),
        }
    }

    fn per_tensor(&mut self, d: &PerTensorAffine) {
        let ty = self.storage_type(&QT_STORAGE, AFFINE_STORAGE);
        self.report.check(
            d.scale.is_finite() && d.scale != 0.0,
            &QT_SCALE,
            self.base + PerTensorAffine::SCALE,
            || format!("scale: expected finite and non-zero, found {:e}", d.scale),
        );
        if let Some((lo, hi)) = ty.and_then(int_range) {
            let z = i64::from(d.zero_point);
            self.report.check(
                (lo..=hi).contains(&z),
                &QT_ZERO_POINT,
                self.base + PerTensorAffine::ZERO_POINT,
                || format!("zero_point: expected in [{lo}, {hi}] for the storage type, found {z}"),
            );
        }
        self.reserved(&QT_RESERVED, &d.reserved, PerTensorAffine::RESERVED);
        if let Some(own) = self.own {
            self.buffer_count(&QT_BUFFERS, own, 0);
        }
        if let Some(ty) = ty {
            self.data(None, None, ty);
        }
    }

    fn per_channel(&mut self, d: &PerChannelAffine) {
        let ty = self.storage_type(&QC_STORAGE, AFFINE_STORAGE);
        let axis = self.axis(&QC_AXIS, &QC_AXIS_DYNAMIC, d.axis, PerChannelAffine::AXIS);
        let type_ok = self.report.check(
            d.scale_type_tag == 0x03,
            &QC_SCALE_TYPE,
            self.base + PerChannelAffine::SCALE_TYPE_TAG,
            || {
                format!(
                    "scale_type_tag: expected 0x03 (float32), found 0x{:02X}",
                    d.scale_type_tag
                )
            },
        );
        self.reserved(&QC_RESERVED, &d.reserved, PerChannelAffine::RESERVED);
        let flags = d.header.flags;
        self.symmetric_index(
            &QC_SYMMETRIC,
            flags,
            d.zero_point_buffer_index,
            PerChannelAffine::ZERO_POINT_BUFFER_INDEX,
        );
        if let (Some(a), Some(_)) = (axis, self.paged) {
            self.report.check(
                a != 0,
                &LY_BP_QUANT_CHANNEL,
                self.base + PerChannelAffine::AXIS,
                || "axis: per-channel affine must not quantize the paged axis 0 of a block-paged tensor".into(),
            );
        }
        let channels = axis.map(|a| self.desc.shape[a]);
        let bytes = channels.and_then(|c| c.checked_mul(4));
        let scale = Param {
            index: d.scale_buffer_index,
            field: PerChannelAffine::SCALE_BUFFER_INDEX,
            bytes: bytes.filter(|_| type_ok),
        };
        let zero_point = (flags & FLAG_SYMMETRIC == 0).then_some(Param {
            index: d.zero_point_buffer_index,
            field: PerChannelAffine::ZERO_POINT_BUFFER_INDEX,
            bytes,
        });
        let params_ok = self.params(&QC_INDEX, &QC_SIZE, scale, zero_point);
        if let (Some(ty), Some(_)) = (ty, axis) {
            self.data(None, None, ty);
        }
        let (Some(n), true) = (channels, params_ok) else {
            return;
        };
        if type_ok {
            self.scales_f32(&QC_SCALE, scale.index, 0, n, false);
        }
        if let (Some(z), Some((lo, hi))) = (zero_point, ty.and_then(int_range)) {
            let skip = if z.index == scale.index {
                n.saturating_mul(4)
            } else {
                0
            };
            self.zero_points_in_range(z.index, skip, n, lo, hi);
        }
    }

    fn per_block(&mut self, d: &PerBlockAffine) {
        let ty = self.storage_type(&QB_STORAGE, PER_BLOCK_STORAGE);
        let axis = self.axis(&QB_AXIS, &QB_AXIS_DYNAMIC, d.axis, PerBlockAffine::AXIS);
        let bs_ok = self.block_size(&QB_BLOCK_SIZE, d.block_size, 2, u32::MAX);
        let scale_size = block_scale_size(d.scale_type_tag);
        self.report.check(
            scale_size.is_some(),
            &QB_SCALE_TYPE,
            self.base + PerBlockAffine::SCALE_TYPE_TAG,
            || {
                format!(
                    "scale_type_tag: expected 0x01, 0x02 or 0x03, found 0x{:02X}",
                    d.scale_type_tag
                )
            },
        );
        self.reserved(&QB_RESERVED, &d.reserved, PerBlockAffine::RESERVED);
        let flags = d.header.flags;
        self.symmetric_index(
            &QB_SYMMETRIC,
            flags,
            d.zero_point_buffer_index,
            PerBlockAffine::ZERO_POINT_BUFFER_INDEX,
        );
        if let Some(paged) = self.paged {
            self.per_block_paged(d, paged, axis.is_some() && bs_ok, scale_size);
            return;
        }
        let geometry = axis
            .filter(|_| bs_ok)
            .and_then(|a| BlockGeometry::new(&self.desc.shape, a, d.block_size.into()));
        if let Some(g) = &geometry {
            self.block_fits(&QB_BLOCK_FITS, g);
        }
        let blocks = geometry.map(|g| g.num_blocks);
        let scale = Param {
            index: d.scale_buffer_index,
            field: PerBlockAffine::SCALE_BUFFER_INDEX,
            bytes: blocks.zip(scale_size).and_then(|(n, s)| n.checked_mul(s)),
        };
        let zero_point = (flags & FLAG_SYMMETRIC == 0).then_some(Param {
            index: d.zero_point_buffer_index,
            field: PerBlockAffine::ZERO_POINT_BUFFER_INDEX,
            bytes: blocks.and_then(|n| n.checked_mul(4)),
        });
        let params_ok = self.params(&QB_INDEX, &QB_SIZE, scale, zero_point);
        let (Some(g), Some(ty)) = (geometry, ty) else {
            return;
        };
        self.data(Some(&g), Some(&QB_PADDING), ty);
        if params_ok {
            if let Some(size) = scale_size {
                self.scales_block(&QB_SCALE, scale.index, d.scale_type_tag, size, g.num_blocks);
            }
        }
    }

    /// Per-block affine on a block-paged tensor (block-paged.md § Quantization
    /// Compatibility): axis 0 with `block_size == page_size`, one scale (and zero
    /// point) per page slot. The logical-axis block rules do not apply: blocks are
    /// the pool's page slots. `fields_ok`: axis and block_size passed their rules.
    fn per_block_paged(
        &mut self,
        d: &PerBlockAffine,
        paged: &BlockPagedFields,
        fields_ok: bool,
        scale_size: Option<u64>,
    ) {
        if fields_ok {
            let field = if d.axis != 0 {
                PerBlockAffine::AXIS
            } else {
                PerBlockAffine::BLOCK_SIZE
            };
            self.report.check(
                d.axis == 0 && d.block_size == paged.page_size,
                &LY_BP_QUANT_BLOCK,
                self.base + field,
                || {
                    format!(
                        "axis {} / block_size {}: per-block affine on a block-paged tensor needs axis 0 and block_size = page_size {}",
                        d.axis, d.block_size, paged.page_size
                    )
                },
            );
        }
        let slots = self.page_slots();
        let scale = Param {
            index: d.scale_buffer_index,
            field: PerBlockAffine::SCALE_BUFFER_INDEX,
            bytes: slots.zip(scale_size).and_then(|(n, s)| n.checked_mul(s)),
        };
        let zero_point = (d.header.flags & FLAG_SYMMETRIC == 0).then_some(Param {
            index: d.zero_point_buffer_index,
            field: PerBlockAffine::ZERO_POINT_BUFFER_INDEX,
            bytes: slots.and_then(|n| n.checked_mul(4)),
        });
        let params_ok = self.params(&QB_INDEX, &QB_SIZE, scale, zero_point);
        if let (true, Some(size), Some(n)) = (params_ok, scale_size, slots) {
            self.scales_block(&QB_SCALE, scale.index, d.scale_type_tag, size, n);
        }
    }

    fn nf4(&mut self, d: &BlockScaled) {
        let ty = self.storage_type(&QN_STORAGE, NF4_STORAGE);
        let axis = self.axis(&QN_AXIS, &QN_AXIS_DYNAMIC, d.axis, BlockScaled::AXIS);
        let bs_ok = self.block_size(&QN_BLOCK_SIZE, d.block_size, 8, u32::MAX);
        let geometry = axis
            .filter(|_| bs_ok)
            .and_then(|a| BlockGeometry::new(&self.desc.shape, a, d.block_size.into()));
        if let Some(g) = &geometry {
            self.block_fits(&QN_BLOCK_FITS, g);
        }
        let scale = Param {
            index: d.scale_buffer_index,
            field: BlockScaled::SCALE_BUFFER_INDEX,
            bytes: geometry.and_then(|g| g.num_blocks.checked_mul(4)),
        };
        let params_ok = self.params(&QN_INDEX, &QN_SIZE, scale, None);
        let (Some(g), Some(ty)) = (geometry, ty) else {
            return;
        };
        self.data(Some(&g), Some(&QN_PADDING), ty);
        if params_ok {
            self.scales_f32(&QN_SCALE, scale.index, 0, g.num_blocks, true);
        }
    }

    fn mxfp(&mut self, d: &BlockScaled) {
        debug_assert_eq!(d.header.scheme_tag, SCHEME_MXFP);
        let ty = self.storage_type(&QM_STORAGE, MXFP_STORAGE);
        let axis = self.axis(&QM_AXIS, &QM_AXIS_DYNAMIC, d.axis, BlockScaled::AXIS);
        let bs_ok = self.block_size(&QM_BLOCK_SIZE, d.block_size, 16, 2048);
        let mut geometry = axis
            .filter(|_| bs_ok)
            .and_then(|a| BlockGeometry::new(&self.desc.shape, a, d.block_size.into()));
        if let Some(g) = geometry {
            let ok = g.axis_len > 0 && g.axis_len % g.block_size == 0;
            let pos = self.desc_offset + descriptor_offsets::SHAPE + 8 * g.axis as u64;
            if !self.report.check(ok, &QM_MULTIPLE, pos, || {
                format!(
                    "shape[{}]: expected a positive multiple of block_size {}, found {}",
                    g.axis, g.block_size, g.axis_len
                )
            }) {
                geometry = None;
            }
        }
        let scale = Param {
            index: d.scale_buffer_index,
            field: BlockScaled::SCALE_BUFFER_INDEX,
            bytes: geometry.map(|g| g.num_blocks),
        };
        let params_ok = self.params(&QM_INDEX, &QM_SIZE, scale, None);
        if let (Some(ty), Some(g)) = (ty, geometry) {
            self.data(Some(&g), None, ty);
        }
        let (Some(g), Some(mut bytes), true) = (geometry, self.buffer(scale.index), params_ok)
        else {
            return;
        };
        let bad = bytes.position(0, g.num_blocks, |e| e == 0x00 || e == 0xFF);
        if let Some(i) = bad {
            let pos = self.value_pos(scale.index, i);
            self.report.violation(
                &QM_SCALE,
                pos,
                format!(
                    "scale[{i}] in buffer {}: float8_e8m0 0x{:02X} is reserved",
                    scale.index,
                    bytes.byte(i).unwrap_or_default()
                ),
            );
        }
    }

    /// The data buffer holds every storage element (`shape[axis]` padded to whole
    /// blocks when `g` is given), and, with `pad_rule`, the padding elements are zero.
    fn data(
        &mut self,
        g: Option<&BlockGeometry>,
        pad_rule: Option<&'static Rule>,
        ty: ElementType,
    ) {
        let Some(width) = ty.bit_width() else { return };
        let storage_shape = g.map_or_else(
            || self.desc.shape.clone(),
            |g| g.storage_shape(&self.desc.shape),
        );
        let Some(addressing) = Addressing::new(self.desc, &storage_shape, width) else {
            return;
        };
        let Some(handle) = self.desc.buffers.first() else {
            return;
        };
        let need = addressing.required_bytes(&storage_shape);
        let have = handle.byte_size;
        let padded = g.map_or_else(String::new, |g| {
            format!(" (shape[{}] padded to {})", g.axis, g.padded_axis_len)
        });
        if !self.report.check(
            need.is_some_and(|n| u128::from(have) >= n),
            &QZ_DATA_SIZE,
            self.desc_offset + self.desc.buffer_pos(0),
            || match need {
                Some(n) => format!("byte_size of buffer 0: the storage elements{padded} need {n} bytes, found {have}"),
                None => format!("byte_offset and strides place storage elements{padded} outside any buffer"),
            },
        ) {
            return;
        }
        self.packing_tail(&storage_shape, width);
        let Some(rule) = pad_rule else {
            return;
        };
        let Some(consent) = DataReads::for_rule(self.report, rule) else {
            return;
        };
        let (Some(g), Some(mut data)) = (g, self.data_buffer(consent)) else {
            return;
        };
        if g.padded_axis_len == g.axis_len || g.outer == 0 {
            return;
        }
        // Broadcasting strides can name far more padding elements than the buffer
        // holds; the walk is bounded by the buffer's size.
        let pads = u128::from(g.outer) * u128::from(g.padded_axis_len - g.axis_len);
        if pads > u128::from(data.len()) * 8 + 4096 {
            self.report.note(format!(
                "padding of the tensor at {} not checked: {pads} padding elements over a {}-byte buffer",
                self.desc_offset,
                data.len()
            ));
            return;
        }
        if let Some((index, bit, bits)) =
            first_nonzero_padding(&addressing, &storage_shape, g, &mut data)
        {
            let pos = self.value_pos(0, bit / 8);
            self.report.violation(
                rule,
                pos,
                format!("padding element {index:?} of buffer 0: expected 0, found 0x{bits:X}"),
            );
        }
    }

    /// Every float32 scale in `[first, first + n)` of buffer `index` is finite and
    /// non-zero (or, with `zero_ok`, non-negative).
    fn scales_f32(&mut self, rule: &'static Rule, index: u32, first: u64, n: u64, zero_ok: bool) {
        let Some(mut bytes) = self.buffer(index) else {
            return;
        };
        let start = first.saturating_mul(4);
        let value = |c: &[u8]| f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        let ok = |v: f32| {
            v.is_finite()
                && if zero_ok {
                    // -0.0 is a zero, which NF4 accepts.
                    v >= 0.0
                } else {
                    v != 0.0
                }
        };
        let Some(i) = bytes.find_item(start, 4, n, |c| !ok(value(c))) else {
            return;
        };
        let v = value(bytes.get(start + 4 * i, 4));
        let want = if zero_ok {
            "finite and non-negative"
        } else {
            "finite and non-zero"
        };
        let pos = self.value_pos(index, start + 4 * i);
        self.report.violation(
            rule,
            pos,
            format!("scale[{i}] in buffer {index}: expected {want}, found {v:e}"),
        );
    }

    /// Every per-block scale of `scale_type_tag` is finite and non-zero.
    fn scales_block(&mut self, rule: &'static Rule, index: u32, tag: u8, size: u64, n: u64) {
        let Some(mut bytes) = self.buffer(index) else {
            return;
        };
        let Some(i) = bytes.find_item(0, size as usize, n, |c| !scale_finite_nonzero(tag, c))
        else {
            return;
        };
        let v = widen_scale(tag, bytes.get(i * size, size as usize));
        let pos = self.value_pos(index, i * size);
        self.report.violation(
            rule,
            pos,
            format!("scale[{i}] in buffer {index}: expected finite and non-zero, found {v:e}"),
        );
    }

    /// Every int32 zero point in buffer `index`, from byte `skip`, lies in `[lo, hi]`.
    fn zero_points_in_range(&mut self, index: u32, skip: u64, n: u64, lo: i64, hi: i64) {
        let Some(mut bytes) = self.buffer(index) else {
            return;
        };
        let value = |c: &[u8]| i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]]));
        let Some(i) = bytes.find_item(skip, 4, n, |c| !(lo..=hi).contains(&value(c))) else {
            return;
        };
        let z = value(bytes.get(skip + 4 * i, 4));
        let pos = self.value_pos(index, skip + 4 * i);
        self.report.violation(
            &QC_ZERO_POINT,
            pos,
            format!("zero_point[{i}] in buffer {index}: expected in [{lo}, {hi}], found {z}"),
        );
    }
}

/// Whether [`widen_scale`] of these bytes is finite and non-zero, judged on the
/// bits (an exponent of all ones is an infinity or NaN, all-zero magnitude bits a
/// zero; widening preserves both), without converting: a large tensor has millions
/// of scales.
#[inline]
fn scale_finite_nonzero(scale_type_tag: u8, bytes: &[u8]) -> bool {
    let (bits, exponent, magnitude) = match (scale_type_tag, bytes) {
        (0x01, [a, b, ..]) => (u32::from(u16::from_le_bytes([*a, *b])), 0x7C00, 0x7FFF),
        (0x02, [a, b, ..]) => (u32::from(u16::from_le_bytes([*a, *b])), 0x7F80, 0x7FFF),
        (0x03, [a, b, c, d, ..]) => (
            u32::from_le_bytes([*a, *b, *c, *d]),
            0x7F80_0000,
            0x7FFF_FFFF,
        ),
        _ => return false,
    };
    bits & exponent != exponent && bits & magnitude != 0
}

/// The first padding element (index along the padded axis >= `shape[axis]`) whose
/// bits are not zero, with its storage index and bits.
fn first_nonzero_padding(
    addressing: &Addressing,
    storage_shape: &[u64],
    g: &BlockGeometry,
    data: &mut Window<'_>,
) -> Option<(Vec<u64>, u64, u32)> {
    let rank = storage_shape.len();
    let mut index = vec![0u64; rank];
    let width = addressing.bit_width;
    loop {
        for i in g.axis_len..g.padded_axis_len {
            index[g.axis] = i;
            let Some(bit) = addressing.bit(&index).and_then(|b| u64::try_from(b).ok()) else {
                continue;
            };
            // Bits past the end of a short slice are not ours to judge here.
            let value = data
                .span(bit, width)
                .and_then(|(bytes, shift)| element_bits(bytes, shift, width));
            if let Some(v) = value.filter(|&v| v != 0) {
                return Some((index, bit, v));
            }
        }
        index[g.axis] = 0;
        // Next position over the dimensions other than the axis, last fastest.
        let mut d = rank;
        loop {
            if d == 0 {
                return None;
            }
            d -= 1;
            if d == g.axis {
                continue;
            }
            index[d] += 1;
            if index[d] < storage_shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{scale_finite_nonzero, widen_scale};

    fn widened_ok(tag: u8, bytes: &[u8]) -> bool {
        let v = widen_scale(tag, bytes);
        v.is_finite() && v != 0.0
    }

    #[test]
    fn scale_checks_on_bits_agree_with_widening() {
        for bits in 0..=u16::MAX {
            let b = bits.to_le_bytes();
            for tag in [0x01, 0x02] {
                assert_eq!(
                    scale_finite_nonzero(tag, &b),
                    widened_ok(tag, &b),
                    "tag {tag} bits {bits:#06x}"
                );
            }
            // float32: every sign and exponent, with assorted mantissas.
            let f = (u32::from(bits) << 16) | u32::from(bits.rotate_left(7));
            let b = f.to_le_bytes();
            assert_eq!(
                scale_finite_nonzero(0x03, &b),
                widened_ok(0x03, &b),
                "{f:#010x}"
            );
        }
        for f in [0u32, 0x8000_0000, 1, 0x7F80_0000, 0xFF80_0000, 0x7FC0_0000] {
            let b = f.to_le_bytes();
            assert_eq!(
                scale_finite_nonzero(0x03, &b),
                widened_ok(0x03, &b),
                "{f:#010x}"
            );
        }
        assert!(!scale_finite_nonzero(0x04, &[1, 2, 3, 4]));
        assert!(!scale_finite_nonzero(0x01, &[1]));
    }
}
