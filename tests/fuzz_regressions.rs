//! Every fuzz finding, minimised (`cargo fuzz tmin`) and kept under
//! `tests/fuzz_findings/TARGET/NAME`, replayed through the very code of the target
//! that found it (`hrry::testing::targets`). Each has its own named test below; a
//! finding without one fails `every_finding_has_a_test`.

use std::path::Path;

use hrry::testing::targets::TARGETS;

/// Declares one named test per finding (`test_name: target / "file";`) and the list
/// `LISTED` of `target/file` that `every_finding_has_a_test` checks against the folder.
macro_rules! findings {
    ($($name:ident : $target:ident / $file:literal;)*) => {
        $(
            #[test]
            fn $name() {
                hrry::testing::targets::$target(include_bytes!(concat!(
                    "fuzz_findings/",
                    stringify!($target),
                    "/",
                    $file
                )));
            }
        )*
        const LISTED: &[&str] = &[$(concat!(stringify!($target), "/", $file)),*];
    };
}

findings! {}

#[test]
fn every_finding_has_a_test() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_findings");
    let mut found = Vec::new();
    for dir in std::fs::read_dir(&root).expect("tests/fuzz_findings exists") {
        let dir = dir.expect("readable").path();
        if !dir.is_dir() {
            continue;
        }
        let target = dir.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            TARGETS.iter().any(|(name, _)| *name == target),
            "tests/fuzz_findings/{target} is not a fuzz target"
        );
        for f in std::fs::read_dir(&dir).expect("readable") {
            let name = f
                .expect("readable")
                .file_name()
                .to_string_lossy()
                .into_owned();
            found.push(format!("{target}/{name}"));
        }
    }
    for f in &found {
        assert!(
            LISTED.contains(&f.as_str()),
            "finding {f} has no finding! test"
        );
    }
}

#[test]
fn every_target_runs_on_empty_and_tiny_inputs() {
    for (_, body) in TARGETS {
        for input in [
            &b""[..],
            b"\0",
            b"HRRYFILE",
            b"HRRY\x01\x00\x14\x00\x00\x00",
        ] {
            body(input);
        }
    }
}

#[test]
fn every_target_survives_random_inputs() {
    for (name, body) in TARGETS {
        arbtest::arbtest(|u| {
            let data: Vec<u8> = u.arbitrary()?;
            body(&data);
            Ok(())
        })
        .budget_ms(500);
        eprintln!("{name}: ok");
    }
}
