//! κ-labels (feature `kappa`).
#![cfg(feature = "kappa")]

use hrry::holo::kappa::{
    address_bytes, address_ring, compose_model, label_from_fingerprint, KappaError, Label,
};

fn is_blake3_label(l: &Label) -> bool {
    let s = l.as_str();
    s.len() == 71
        && s.starts_with("blake3:")
        && s[7..]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[test]
fn ring_elements_get_blake3_labels() {
    let a = address_ring(&[0, 42]).unwrap().address;
    let b = address_ring(&[0, 42]).unwrap().address;
    let c = address_ring(&[0, 43]).unwrap().address;
    let wide = address_ring(&[1, 0x34, 0x12]).unwrap().address;
    assert!(is_blake3_label(&a) && is_blake3_label(&wide));
    assert_eq!(a, b, "equal bytes give equal labels");
    assert_ne!(a, c);
}

#[test]
fn malformed_ring_input_is_a_clean_error() {
    for bad in [
        &[][..],
        &[0],
        &[0, 1, 2],
        &[200, 1],
        &[1, 2, 3, 4, 5, 6, 7, 8],
    ] {
        match address_ring(bad) {
            Err(KappaError::Address(_)) => {}
            other => panic!("{bad:?}: expected an address error, got {other:?}"),
        }
    }
}

#[test]
fn byte_labels_are_the_blake3_hash() {
    let l = address_bytes(b"weights");
    assert!(is_blake3_label(&l));
    assert_eq!(&l.as_str()[7..], blake3::hash(b"weights").to_hex().as_str());
    assert_eq!(l, address_bytes(b"weights"));
    assert_ne!(l, address_bytes(b"weights!"));
    assert_eq!(
        l,
        label_from_fingerprint(blake3::hash(b"weights").as_bytes())
    );
}

#[test]
fn model_label_does_not_depend_on_part_order() {
    let parts: Vec<Label> = (0u8..5).map(|i| address_bytes(&[i; 3])).collect();
    let forward = compose_model(&parts).unwrap();
    assert!(is_blake3_label(&forward));
    let mut reversed = parts.clone();
    reversed.reverse();
    assert_eq!(compose_model(&reversed).unwrap(), forward);
    let rotated: Vec<Label> = parts[2..].iter().chain(&parts[..2]).copied().collect();
    assert_eq!(compose_model(&rotated).unwrap(), forward);
    // Two parts: the product itself, either way round.
    assert_eq!(
        compose_model(&parts[..2]).unwrap(),
        compose_model(&[parts[1], parts[0]]).unwrap()
    );
    // A different set of parts gives a different model.
    assert_ne!(compose_model(&parts[..4]).unwrap(), forward);
    assert_eq!(compose_model(&parts[..1]).unwrap(), parts[0]);
    assert_eq!(compose_model(&[]), Err(KappaError::NoParts));
}

#[test]
fn composition_rejects_other_axes() {
    let sha = Label::from_bytes(format!("sha256:{}", "0".repeat(64)).as_bytes()).unwrap();
    let b3 = address_bytes(b"x");
    assert!(matches!(
        compose_model(&[b3, sha]),
        Err(KappaError::Composition(_))
    ));
}

#[test]
fn inspect_shows_labels() {
    let bytes = hrry_testkit::corpus::holo::sample_writer()
        .finish()
        .unwrap();
    let j = hrry::holo::inspect_json(&bytes).unwrap();
    let content = j["kappa"]["content"].as_str().unwrap();
    assert_eq!(&content[7..], hrry::holo::hex(&bytes[bytes.len() - 32..]));
    assert!(j["kappa"]["model"].as_str().unwrap().starts_with("blake3:"));
}

/// Why `compose_model` sorts first: the pairwise product is commutative but a
/// plain left fold over three parts depends on the order of the steps.
#[test]
fn unsorted_left_fold_would_depend_on_order() {
    use hrry::holo::kappa::KappaLabel;
    let g2 = |a: &KappaLabel<71>, b: &KappaLabel<71>| {
        uor_addr::composition::compose_g2_product_blake3(a, b)
            .unwrap()
            .address
    };
    let [a, b, c] = [b"a", b"b", b"c"].map(|x| address_bytes(x));
    assert_eq!(g2(&a, &b), g2(&b, &a));
    assert_ne!(g2(&g2(&a, &b), &c), g2(&g2(&a, &c), &b));
}
