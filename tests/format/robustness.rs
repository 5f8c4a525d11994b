//! No input makes the reader or validator panic: truncations, bit flips and random
//! bytes all give clean errors, and the readers agree on every file that validates.

use hrry::file::HrryFile;
use hrry_testkit::corpus::{all_cases, Expect};

/// Every reader over `bytes`, cross-checked on files strict validation accepts
/// (shared with the `open_file` fuzz target); true when strictly valid.
fn exercise(bytes: &[u8]) -> bool {
    hrry_testkit::exercise_file(bytes)
}

fn valid_files() -> Vec<(String, Vec<u8>)> {
    all_cases()
        .into_iter()
        .filter(|c| c.expect == Expect::Valid && c.format == hrry_testkit::corpus::Format::HrryFile)
        .map(|c| (c.path, c.bytes))
        .collect()
}

#[test]
fn every_truncation_is_rejected() {
    for (name, bytes) in valid_files() {
        for len in 0..bytes.len() {
            assert!(
                !exercise(&bytes[..len]),
                "{name} truncated to {len} validates"
            );
        }
    }
}

/// Bytes whose change may leave a file valid: the advisory count hint, the minor
/// container version, and the KV / sorted flag bits (which may truthfully be set).
fn may_stay_valid(offset: usize, bit: u32) -> bool {
    (28..36).contains(&offset) || offset == 9 || (offset == 12 && bit < 2)
}

#[test]
fn every_bit_flip_of_header_trailer_and_index_is_handled() {
    for (name, bytes) in valid_files() {
        let file = HrryFile::from_bytes(&bytes).expect("valid file opens");
        if file.header().container_version_minor > 0 {
            // A newer minor version's reserved bytes are fields this reader does
            // not judge (versioning.md): flipping them keeps the file valid.
            continue;
        }
        let t = file.trailer().clone();
        let mut ranges = vec![0..64, bytes.len() - 40..bytes.len()];
        if file.header().file_flags.has_index_crc32c() {
            // Without the CRC a flipped name byte may simply be another valid name.
            ranges.push(t.index_offset as usize..(t.index_offset + t.index_length) as usize);
        }
        for range in ranges {
            for offset in range {
                for bit in 0..8 {
                    let mut flipped = bytes.clone();
                    flipped[offset] ^= 1 << bit;
                    let valid = exercise(&flipped);
                    assert!(
                        !valid || may_stay_valid(offset, bit),
                        "{name}: flipping bit {bit} of byte {offset} still validates"
                    );
                }
            }
        }
    }
}

#[test]
fn random_bytes_never_panic() {
    arbtest::arbtest(|u| {
        let mut bytes: Vec<u8> = u.arbitrary()?;
        if u.arbitrary()? {
            // Give the fuzzer a head start past the magic checks.
            let mut framed = b"HRRYFILE".to_vec();
            framed.append(&mut bytes);
            framed.extend_from_slice(b"HRRY");
            bytes = framed;
        }
        exercise(&bytes);
        Ok(())
    })
    .budget_ms(3000);
}

#[test]
fn random_mutations_of_valid_files_never_panic() {
    let files = valid_files();
    arbtest::arbtest(|u| {
        let (_, base) = u.choose(&files)?;
        let mut bytes = base.clone();
        for _ in 0..u.int_in_range(1..=8)? {
            let i = u.choose_index(bytes.len())?;
            bytes[i] = u.arbitrary()?;
        }
        exercise(&bytes);
        Ok(())
    })
    .budget_ms(3000);
}
