//! Damaged and hostile archives are rejected with a report, never a panic.

use arbitrary::Unstructured;
use hrry::holo::{HoloLoader, HoloWriter};
use hrry::validate::Rules;

/// A `.holo` archive held in memory, judged in `mode`.
fn validate(bytes: &[u8], mode: Rules) -> hrry::Report {
    let options = hrry::validate::Options {
        judging: mode.into(),
        ..Default::default()
    };
    hrry::Format::Holo.validate_bytes(bytes, &options)
}

fn small_archive() -> Vec<u8> {
    let mut w = hrry_testkit::corpus::holo::sample_writer();
    // Keep it small: drop the large constant by replacing the constants.
    w.set_constants(vec![hrry::holo::Constant {
        slot: 3,
        dtype: 1,
        bytes: vec![1, 2, 3, 4],
    }]);
    w.finish().unwrap()
}

fn reseal(mut bytes: Vec<u8>) -> Vec<u8> {
    let n = bytes.len() - 32;
    let h = blake3::hash(&bytes[..n]);
    bytes[n..].copy_from_slice(h.as_bytes());
    bytes
}

#[test]
fn every_truncation_is_rejected() {
    let bytes = small_archive();
    assert!(HoloLoader::from_bytes(&bytes).is_ok());
    for len in 0..bytes.len() {
        let cut = &bytes[..len];
        let report = validate(cut, Rules::Hardened);
        assert!(!report.is_valid(), "prefix of {len} bytes accepted");
        assert!(HoloLoader::from_bytes(cut).is_err());
    }
}

#[test]
fn every_bit_flip_is_rejected() {
    let bytes = small_archive();
    let mut flipped = bytes.clone();
    for i in 0..bytes.len() {
        for bit in 0..8 {
            flipped[i] ^= 1 << bit;
            assert!(
                HoloLoader::from_bytes(&flipped).is_err(),
                "flip of bit {bit} at {i} accepted"
            );
            flipped[i] ^= 1 << bit;
        }
    }
}

#[test]
fn payload_flips_are_caught_by_the_footer() {
    let bytes = small_archive();
    let archive = HoloLoader::from_bytes(&bytes).unwrap();
    let s = archive.sections()[0];
    let mut flipped = bytes.clone();
    flipped[s.offset as usize] ^= 0x10;
    let report = validate(&flipped, Rules::Hardened);
    assert_eq!(report.rule_ids(), vec!["HOLO-FTR-001"]);
}

#[test]
fn random_bytes_never_panic() {
    arbtest::arbtest(|u: &mut Unstructured| {
        let tail: Vec<u8> = u.arbitrary()?;
        let _ = validate(&tail, Rules::Hardened);
        // The same bytes behind a valid header and with a correct footer, so the
        // table and payload decoders see them.
        let count: u16 = u.int_in_range(0..=8)?;
        let mut bytes = b"HOLO\x02\x00\x00\x00".to_vec();
        bytes.extend_from_slice(&count.to_le_bytes());
        bytes.extend_from_slice(&tail);
        bytes.extend_from_slice(&[0; 32]);
        let bytes = reseal(bytes);
        let report = validate(&bytes, Rules::Hardened);
        if report.is_valid() {
            HoloLoader::from_bytes(&bytes).expect("valid report implies a loader");
        }
        Ok(())
    })
    .budget_ms(2000);
}

#[test]
fn random_table_edits_of_a_valid_archive_never_panic() {
    let base = small_archive();
    arbtest::arbtest(|u: &mut Unstructured| {
        let mut bytes = base.clone();
        let edits: u8 = u.int_in_range(1..=4)?;
        for _ in 0..edits {
            let at = u.choose_index(bytes.len() - 32)?;
            bytes[at] = u.arbitrary()?;
        }
        let bytes = reseal(bytes);
        let _ = validate(&bytes, Rules::Hardened);
        let _ = HoloLoader::from_bytes(&bytes);
        Ok(())
    })
    .budget_ms(2000);
}

#[test]
fn writer_refuses_duplicate_extension_keys_and_oversized_names() {
    let mut w = HoloWriter::new();
    w.add_extension("k", vec![1]).add_extension("k", vec![2]);
    assert!(w.finish().is_err());
    let mut w = HoloWriter::new();
    w.add_extension("x".repeat(70_000), vec![]);
    assert!(w.finish().is_err());
}
