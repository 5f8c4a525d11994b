//! A minimal NumPy `.npy` writer for float32 arrays (format version 1.0, or 2.0 when
//! the header would not fit), in C order, written in pieces so that arrays larger
//! than memory can be streamed.

use std::io::{self, Write};

/// The `.npy` header for a little-endian float32 C-order array of `shape`: magic,
/// version, header length, and the header dictionary padded to a multiple of 64.
pub fn f32_header(shape: &[u64]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    let tuple = match dims.len() {
        0 => "()".to_string(),
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut dict = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {tuple}, }}");
    // Prefix: 6-byte magic, 2-byte version, then a 2- or 4-byte length.
    let (version, len_bytes) = if dict.len() + 1 + 10 <= u16::MAX as usize {
        (1u8, 2)
    } else {
        (2u8, 4)
    };
    let prefix = 8 + len_bytes;
    while (prefix + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut out = b"\x93NUMPY".to_vec();
    out.extend([version, 0]);
    if version == 1 {
        out.extend((dict.len() as u16).to_le_bytes());
    } else {
        out.extend((dict.len() as u32).to_le_bytes());
    }
    out.extend(dict.as_bytes());
    out
}

/// Writes `values` as little-endian float32 (the data part of an `.npy` file).
pub fn write_f32_data<W: Write>(w: &mut W, values: &[f32]) -> io::Result<()> {
    let mut buf = Vec::with_capacity(values.len().min(1 << 16) * 4);
    for chunk in values.chunks(1 << 16) {
        buf.clear();
        buf.extend(chunk.iter().flat_map(|v| v.to_le_bytes()));
        w.write_all(&buf)?;
    }
    Ok(())
}

/// Writes a whole float32 `.npy` file of `shape` holding `values` (row-major).
pub fn write_f32<W: Write>(w: &mut W, shape: &[u64], values: &[f32]) -> io::Result<()> {
    w.write_all(&f32_header(shape))?;
    write_f32_data(w, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_padded_and_parsable() {
        let h = f32_header(&[2, 3]);
        assert_eq!(&h[..8], b"\x93NUMPY\x01\x00");
        assert_eq!(h.len() % 64, 0);
        let len = u16::from_le_bytes([h[8], h[9]]) as usize;
        assert_eq!(h.len(), 10 + len);
        let dict = std::str::from_utf8(&h[10..]).unwrap();
        assert!(dict.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
        assert!(dict.ends_with('\n'));
        let dict = |shape: &[u64]| String::from_utf8_lossy(&f32_header(shape)[10..]).into_owned();
        assert!(dict(&[5]).contains("'shape': (5,)"));
        assert!(dict(&[]).contains("'shape': ()"));
    }

    #[test]
    fn data_is_little_endian() {
        let mut out = Vec::new();
        write_f32(&mut out, &[2], &[1.0, -2.5]).unwrap();
        let data = &out[out.len() - 8..];
        assert_eq!(data, [0, 0, 0x80, 0x3F, 0, 0, 0x20, 0xC0]);
    }
}
