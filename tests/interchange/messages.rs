//! Transport messages: every payload round-trips, framing limits hold, and the
//! conversation validator gives the same verdict fed one message at a time as over
//! a whole capture.

use hrry::schema::transport::*;
use hrry::schema::LenBytes;
use hrry::stream::message::{
    error_code_for, read_frame, write_data_frame, write_message, Frame, MessageType, Payload,
};
use hrry::stream::Conversation;
use hrry_testkit::corpus::all_cases;

fn captures() -> Vec<(String, Vec<u8>)> {
    all_cases()
        .into_iter()
        .filter(|c| c.format == hrry::Format::Messages)
        .map(|c| (c.path, c.bytes))
        .collect()
}

fn key(text: &str) -> LenBytes {
    LenBytes {
        bytes: text.as_bytes().to_vec(),
    }
}

fn samples() -> Vec<Payload> {
    let d = hrry::model::build::dense(hrry::model::ElementType::Int8, &[3]).unwrap();
    let hello = Hello {
        protocol_version: 1,
        max_message_size: 4096,
        capability_flags: CapabilityFlags::new()
            .with_rdma_data_plane(true)
            .with_rdma_gpudirect(true),
        supported_layouts: LayoutList {
            entries: vec![
                LayoutEntry {
                    layout_tag: 0xF7,
                    ext_metadata: Some(ShortBytes { bytes: vec![1, 2] }),
                },
                LayoutEntry {
                    layout_tag: 0x04,
                    ext_metadata: None,
                },
            ],
        },
        supported_devices: ShortBytes {
            bytes: vec![0, 1, 0xF3],
        },
        supported_memory_classes: Some(ShortBytes { bytes: vec![0, 1] }),
    };
    vec![
        Payload::ClientHello(hello.clone()),
        Payload::ServerHello(Hello {
            supported_memory_classes: None,
            ..hello
        }),
        Payload::TensorRequest(TensorRequest {
            tensor_key: key("layers.0.weight"),
            preferred_layouts: LayoutList::default(),
            preferred_device: 1,
            min_alignment: 256,
            request_flags: RequestFlags::new().with_parallel_ok(true),
        }),
        Payload::TensorDescriptor(TensorDescriptorPayload {
            descriptor: hrry::schema::to_bytes(&d),
            total_data_bytes: 3,
            shard_index: 0,
            total_shards: 1,
        }),
        Payload::TensorData(TensorData {
            byte_offset_in_buffer: 1 << 40,
            data: vec![1, 2, 3],
        }),
        Payload::TensorDataEnd,
        Payload::TensorPut(TensorPut {
            tensor_key: key("kv"),
            descriptor: LenBytes {
                bytes: hrry::schema::to_bytes(&d),
            },
            total_data_bytes: 3,
        }),
        Payload::TensorPutAck,
        Payload::Error(ErrorPayload {
            error_code: error_code::SHARD_MISMATCH,
            message: key("shards disagree"),
        }),
        Payload::Ping(vec![0xAB; 5]),
        Payload::Pong(vec![]),
        Payload::RdmaRegister(RdmaRegister {
            remote_addr: u64::MAX,
            length: 3,
            rkey: LenBytes { bytes: vec![9; 40] },
        }),
        Payload::RdmaReady,
        Payload::Private {
            message_type: 0xF4,
            bytes: b"vendor".to_vec(),
        },
    ]
}

#[test]
fn every_payload_round_trips_through_a_frame() {
    for (i, p) in samples().into_iter().enumerate() {
        let frame = Frame::new(7, &p).unwrap();
        let bytes = frame.to_bytes();
        assert_eq!(bytes.len() as u64, frame.encoded_len());
        let mut src = &bytes[..];
        let back = read_frame(&mut src, 0, 1 << 20).unwrap().unwrap();
        assert_eq!(back, frame, "sample {i}");
        let (decoded, used) = back.decode(0).unwrap();
        assert_eq!(decoded, p, "sample {i}");
        assert_eq!(
            used,
            frame.payload.len() as u64,
            "sample {i}: every byte is a field"
        );
        assert!(
            read_frame(&mut src, 0, 1 << 20).unwrap().is_none(),
            "a clean end"
        );
        let tag = p.message_type();
        if let Some(t) = MessageType::from_tag(tag) {
            assert_eq!(t.tag(), tag);
        }
    }
}

#[test]
fn framing_limits_hold_on_both_sides() {
    // A receiver refuses a payload over its maximum from the header alone.
    let mut header = Frame::new(3, &Payload::Ping(vec![0; 100]))
        .unwrap()
        .to_bytes();
    header.truncate(12);
    let e = read_frame(&mut &header[..], 0, 99).unwrap_err();
    assert_eq!(e.violation().map(|v| v.rule.id), Some("TR-LIM-001"));
    assert_eq!(
        error_code_for(e.violation().unwrap().rule),
        error_code::MESSAGE_TOO_LARGE
    );
    // At or under it, a missing payload is a truncation.
    let e = read_frame(&mut &header[..], 0, 100).unwrap_err();
    assert_eq!(e.violation().map(|v| v.rule.id), Some("TR-FRM-001"));
    let e = read_frame(&mut &header[..5], 0, 100).unwrap_err();
    assert_eq!(e.violation().map(|v| v.rule.id), Some("TR-FRM-001"));

    // A sender refuses to exceed the peer's maximum, writing nothing.
    let mut out = Vec::new();
    assert!(write_message(&mut out, 1, &Payload::Ping(vec![0; 10]), 9).is_err());
    assert!(write_data_frame(&mut out, 1, 0, &[0; 10], 17).is_err());
    assert!(out.is_empty());
    // A data frame written from a slice is the frame of that payload.
    let n = write_data_frame(&mut out, 9, 64, &[5; 10], 18).unwrap();
    let payload = Payload::TensorData(TensorData {
        byte_offset_in_buffer: 64,
        data: vec![5; 10],
    });
    assert_eq!(out, Frame::new(9, &payload).unwrap().to_bytes());
    assert_eq!(n, out.len() as u64);
}

#[test]
fn decoding_names_the_rule_a_receiver_answers_with() {
    let rule = |ty: u32, payload: &[u8]| {
        Payload::decode(ty, payload, 12)
            .unwrap_err()
            .violation()
            .map(|v| v.rule.id)
    };
    assert_eq!(rule(0x00, &[]), Some("TR-MSG-001"));
    assert_eq!(rule(0xFF, &[]), Some("TR-MSG-001"));
    assert_eq!(
        rule(message_type::TENSOR_DATA_END, &[0]),
        Some("TR-MSG-006")
    );
    assert_eq!(
        rule(message_type::TENSOR_DATA, &[1, 2, 3]),
        Some("TR-MSG-004")
    );
    // A layout count claiming more entries than the payload holds.
    assert_eq!(
        rule(
            message_type::CLIENT_HELLO,
            &[1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]
        ),
        Some("TR-MSG-004")
    );
    // Fields that leave bytes over: decoded, with the count of bytes used.
    let mut e = hrry::schema::to_bytes(&ErrorPayload {
        error_code: 2,
        message: key("x"),
    });
    e.push(0);
    let (_, used) = Payload::decode(message_type::ERROR, &e, 12).unwrap();
    assert_eq!(used, e.len() as u64 - 1);
}

#[test]
fn one_message_at_a_time_gives_the_whole_capture_verdict() {
    let options = hrry::validate::Options::default();
    for (path, bytes) in captures() {
        let whole = hrry::Format::Messages.validate_bytes(&bytes, &options);
        let mut conversation = Conversation::new(options);
        let mut found = Vec::new();
        let mut src = &bytes[..];
        let mut fatal = false;
        loop {
            match read_frame(
                &mut src,
                conversation.position(),
                options.limits.max_message_size,
            ) {
                Ok(Some(frame)) => found.extend(conversation.accept(&frame)),
                Ok(None) => break,
                Err(e) => {
                    found.push(e.violation().unwrap().clone());
                    fatal = true;
                    break;
                }
            }
        }
        if !fatal {
            found.extend(conversation.finish());
        }
        assert_eq!(found, whole.violations, "{path}");
        // Short reads do not change anything either.
        let trickle = hrry_testkit::targets::Trickle {
            data: &bytes,
            chunk: 5,
        };
        let trickled = hrry::Format::Messages
            .validate_reader(trickle, &options)
            .unwrap();
        assert_eq!(trickled.violations, whole.violations, "{path}");
    }
}

#[test]
fn a_conversation_is_quiet_only_between_exchanges() {
    let capture = captures()
        .into_iter()
        .find(|(p, _)| p.ends_with("valid/request.hrrymsg"))
        .unwrap()
        .1;
    let mut conversation = Conversation::new(hrry::validate::Options::default());
    let mut src = &capture[..];
    let mut quiet = Vec::new();
    let mut open = Vec::new();
    while let Some(frame) = read_frame(&mut src, conversation.position(), 1 << 20).unwrap() {
        assert!(conversation.accept(&frame).is_empty());
        quiet.push(conversation.is_quiet());
        open.push(conversation.stream_ids().len());
    }
    // Hellos, request, descriptor, two frames, end: quiet after the hellos and the end,
    // when stream 1 is forgotten again.
    assert_eq!(quiet, [true, true, false, false, false, false, true]);
    assert_eq!(open, [0, 0, 1, 1, 1, 1, 0]);
    assert!(conversation.finish().is_empty());
    assert_eq!(
        conversation.server_hello().map(|h| h.protocol_version),
        Some(1)
    );
}

#[test]
fn truncated_captures_fail_cleanly() {
    // Rules the end of a conversation can break: what a cut between messages gives.
    let unfinished = ["TR-ORD-007", "TR-CMP-001", "TR-HEL-002", "TR-SHD-004"];
    for (path, bytes) in captures()
        .into_iter()
        .filter(|(p, _)| p.contains("/valid/"))
    {
        let mut boundaries = vec![0usize];
        let mut src = &bytes[..];
        while let Some(f) = read_frame(&mut src, 0, u32::MAX).unwrap() {
            boundaries.push(boundaries.last().unwrap() + f.encoded_len() as usize);
        }
        for n in 0..bytes.len() {
            let ids = hrry::Format::Messages
                .validate_bytes(&bytes[..n], &hrry::validate::Options::default())
                .rule_ids();
            if boundaries.contains(&n) {
                assert!(
                    ids.iter().all(|id| unfinished.contains(id)),
                    "{path} cut at message boundary {n}: {ids:?}"
                );
            } else {
                assert_eq!(ids, ["TR-FRM-001"], "{path} cut inside a message at {n}");
            }
        }
    }
}
