//! Random archives round-trip: what the writer is given is what the loader
//! returns, and re-encoding a loaded archive gives the same bytes.

use arbitrary::{Arbitrary, Unstructured};
use hrry::holo::{
    Constant, HoloLoader, HoloWriter, PortDescriptor, SectionKind, ShapeDescriptor, WeightStore,
    INLINE_CONSTANT_LIMIT,
};
use hrry::validate::Rules;

#[derive(Arbitrary, Debug)]
struct Port {
    name: String,
    slot: u32,
    dtype: u8,
    dims: Vec<u8>,
    unknown_count: u64,
}

impl Port {
    fn descriptor(&self) -> PortDescriptor {
        let shape: Vec<u64> = self.dims.iter().take(6).map(|&d| u64::from(d)).collect();
        let element_count = if shape.is_empty() {
            self.unknown_count
        } else {
            shape.iter().product()
        };
        PortDescriptor {
            name: self.name.clone(),
            slot: self.slot,
            element_count,
            dtype: self.dtype,
            shape,
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Body {
    Small(Vec<u8>),
    /// A body just over (or well over) the inline limit, from a pattern seed.
    Large {
        seed: u8,
        extra: u16,
    },
}

impl Body {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Body::Small(b) => b.clone(),
            Body::Large { seed, extra } => {
                let len = INLINE_CONSTANT_LIMIT + 1 + usize::from(*extra % 3000);
                (0..len)
                    .map(|i| (i as u8).wrapping_mul(*seed | 1))
                    .collect()
            }
        }
    }
}

/// A shape-registry entry: rank, inline dimensions, overflow dimensions.
type Shape = (u8, [u64; 8], Vec<u64>);

#[derive(Arbitrary, Debug)]
struct Spec {
    kernel_calls: Vec<u8>,
    schedule: Option<Vec<Vec<u32>>>,
    weights: Vec<Body>,
    shapes: Option<Vec<Shape>>,
    dtype_registry: Option<Vec<u8>>,
    certificates: Option<Vec<u8>>,
    trace: Option<Vec<u8>>,
    metadata: Option<Vec<u8>>,
    inputs: Option<Vec<Port>>,
    outputs: Option<Vec<Port>>,
    constants: Option<Vec<(u32, u8, Body)>>,
    exec_plan: Option<Vec<Vec<u32>>>,
    warm_start: Option<Vec<u8>>,
    extensions: Vec<(String, Vec<u8>)>,
}

impl Spec {
    fn writer(&self) -> HoloWriter {
        let mut w = HoloWriter::new();
        w.set_kernel_calls(self.kernel_calls.clone());
        let mut store = WeightStore::new();
        for b in &self.weights {
            store.insert(b.bytes());
        }
        w.set_weights(store);
        if let Some(s) = &self.schedule {
            w.set_schedule(s.clone());
        }
        if let Some(shapes) = &self.shapes {
            w.set_shape_registry(
                shapes
                    .iter()
                    .map(|(rank, dims, overflow)| ShapeDescriptor {
                        rank: *rank,
                        dims: *dims,
                        overflow: overflow.clone(),
                    })
                    .collect(),
            );
        }
        if let Some(b) = &self.dtype_registry {
            w.set_dtype_registry(b.clone());
        }
        if let Some(b) = &self.certificates {
            w.set_certificates(b.clone());
        }
        if let Some(b) = &self.trace {
            w.set_trace(b.clone());
        }
        if let Some(b) = &self.metadata {
            w.set_metadata(b.clone());
        }
        if let Some(p) = &self.inputs {
            w.set_inputs(p.iter().map(Port::descriptor).collect());
        }
        if let Some(p) = &self.outputs {
            w.set_outputs(p.iter().map(Port::descriptor).collect());
        }
        if let Some(c) = &self.constants {
            w.set_constants(self.constant_values(c));
        }
        if let Some(levels) = &self.exec_plan {
            w.set_exec_plan(levels.clone());
        }
        if let Some(b) = &self.warm_start {
            w.set_warm_start(b.clone());
        }
        for (key, value) in self.unique_extensions() {
            w.add_extension(key, value.clone());
        }
        w
    }

    fn constant_values(&self, c: &[(u32, u8, Body)]) -> Vec<Constant> {
        c.iter()
            .map(|(slot, dtype, body)| Constant {
                slot: *slot,
                dtype: *dtype,
                bytes: body.bytes(),
            })
            .collect()
    }

    fn unique_extensions(&self) -> Vec<(&String, &Vec<u8>)> {
        let mut out: Vec<(&String, &Vec<u8>)> = Vec::new();
        for (k, v) in &self.extensions {
            if !out.iter().any(|(seen, _)| *seen == k) {
                out.push((k, v));
            }
        }
        out
    }
}

fn check(spec: &Spec) {
    let bytes = spec.writer().finish().expect("random spec fits");
    let report = hrry::Format::Holo.validate_bytes(
        &bytes,
        &hrry::validate::Options {
            judging: Rules::Hardened.into(),
            ..Default::default()
        },
    );
    assert!(report.is_valid(), "{:?}", report.violations);
    let archive = HoloLoader::from_bytes(&bytes).expect("writer output loads");

    assert_eq!(archive.format_version(), 2);
    assert_eq!(archive.flags(), 0);
    assert_eq!(archive.kernel_calls(), Some(&spec.kernel_calls[..]));
    assert_eq!(archive.schedule(), spec.schedule.as_deref());
    assert_eq!(archive.exec_plan(), spec.exec_plan.as_deref());
    let ports = |p: &Option<Vec<Port>>| {
        p.as_ref()
            .map(|p| p.iter().map(Port::descriptor).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    assert_eq!(archive.inputs(), &ports(&spec.inputs)[..]);
    assert_eq!(archive.outputs(), &ports(&spec.outputs)[..]);
    for p in archive.inputs() {
        assert_eq!(archive.input_port_by_name(&p.name).unwrap().name, p.name);
    }
    assert_eq!(
        archive.section_bytes(SectionKind::Trace),
        spec.trace.as_deref()
    );
    assert_eq!(
        archive.section_bytes(SectionKind::WarmStart),
        spec.warm_start.as_deref()
    );
    let ext = spec.unique_extensions();
    assert_eq!(
        archive.extension_keys().collect::<Vec<_>>(),
        ext.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>()
    );
    for (k, v) in &ext {
        assert_eq!(archive.extension(k), Some(&v[..]));
    }
    for b in &spec.weights {
        let body = b.bytes();
        assert_eq!(
            archive.weight(blake3::hash(&body).as_bytes()),
            Some(&body[..])
        );
    }
    if let Some(c) = &spec.constants {
        let expected = spec.constant_values(c);
        let got: Vec<_> = archive.constants().collect();
        assert_eq!(got.len(), expected.len());
        for (g, e) in got.iter().zip(&expected) {
            assert_eq!((g.slot, g.dtype, g.bytes), (e.slot, e.dtype, &e.bytes[..]));
            assert_eq!(
                g.fingerprint.is_some(),
                e.bytes.len() > INLINE_CONSTANT_LIMIT
            );
        }
    }
    // Every weight body appears once.
    let mut fps: Vec<_> = archive.weights().map(|(f, _)| *f).collect();
    let n = fps.len();
    fps.sort();
    fps.dedup();
    assert_eq!(fps.len(), n);

    let again = HoloWriter::from_loader(&archive).finish().unwrap();
    assert_eq!(again, bytes, "re-encoding changed the bytes");
}

#[test]
fn random_archives_round_trip() {
    arbtest::arbtest(|u: &mut Unstructured| {
        check(&Spec::arbitrary(u)?);
        Ok(())
    })
    .budget_ms(3000);
}

#[test]
fn sample_with_every_kind_round_trips() {
    let bytes = hrry_testkit::corpus::holo::sample_writer()
        .finish()
        .unwrap();
    let archive = HoloLoader::from_bytes(&bytes).unwrap();
    let kinds: Vec<SectionKind> = archive.sections().iter().map(|s| s.kind).collect();
    for kind in SectionKind::ALL.iter().take(14) {
        assert!(kinds.contains(kind), "{kind:?} missing");
    }
    assert_eq!(HoloWriter::from_loader(&archive).finish().unwrap(), bytes);
}

#[test]
fn equal_inputs_give_identical_bytes() {
    let a = hrry_testkit::corpus::holo::sample_writer()
        .finish()
        .unwrap();
    let b = hrry_testkit::corpus::holo::sample_writer()
        .finish()
        .unwrap();
    assert_eq!(a, b);
}

#[test]
fn repeated_bodies_are_stored_once() {
    let big = vec![0x5Au8; 10_000];
    let mut store = WeightStore::new();
    store.insert(big.clone());
    store.insert(big.clone());
    let mut w = HoloWriter::new();
    w.set_weights(store).set_constants(vec![
        Constant {
            slot: 0,
            dtype: 0,
            bytes: big.clone(),
        },
        Constant {
            slot: 1,
            dtype: 0,
            bytes: big.clone(),
        },
    ]);
    let bytes = w.finish().unwrap();
    let archive = HoloLoader::from_bytes(&bytes).unwrap();
    assert_eq!(archive.weight_count(), 1);
    // One body of 10 000 bytes, not three.
    assert!(bytes.len() < 10_000 + 400, "{} bytes", bytes.len());
    let fp = *blake3::hash(&big).as_bytes();
    for c in archive.constants() {
        assert_eq!(c.fingerprint, Some(fp));
        assert_eq!(c.bytes, &big[..]);
    }
}
