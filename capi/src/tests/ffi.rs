//! The exported functions against the corpus and against bad arguments.

use std::ffi::{c_char, c_int, CStr, CString};
use std::path::PathBuf;
use std::ptr::{null, null_mut};

use hrry::export::{row_major_bytes, ExportOptions};
use hrry::file::HrryFile;

use crate::error::{call, Failure};
use crate::*;

fn corpus(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus")
        .join(rel)
}

fn c_path(rel: &str) -> CString {
    CString::new(corpus(rel).into_os_string().into_encoded_bytes()).unwrap()
}

fn last_error() -> String {
    // SAFETY: hrry_last_error never returns NULL and its text is NUL-terminated.
    unsafe { CStr::from_ptr(hrry_last_error()) }
        .to_str()
        .unwrap()
        .to_string()
}

/// A sentinel for an output pointer that a failing call must reset to NULL.
fn garbage<T>() -> *mut T {
    std::ptr::dangling_mut()
}

fn open(rel: &str) -> *mut hrry_file {
    let mut f = null_mut();
    // SAFETY: a valid C string and output pointer.
    let status = unsafe { hrry_open(c_path(rel).as_ptr(), &mut f) };
    assert_eq!(status, HRRY_OK, "{rel}: {}", last_error());
    f
}

#[test]
fn tensors_read_as_the_core_reads_them() {
    for rel in [
        "valid/basic.hrry",
        "valid/all_element_types.hrry",
        "valid/quant-per-block-int4-f16.hrry",
        "valid/layout-csr.hrry",
        "valid/composite_partition.hrry",
        "valid/composite_overlay.hrry",
        "valid/layout-block-paged.hrry",
        "valid/extension_type.hrry",
        "valid/scalar_empty_column_major.hrry",
    ] {
        let bytes = std::fs::read(corpus(rel)).unwrap();
        let core = HrryFile::from_bytes(&bytes).unwrap();
        let f = open(rel);
        // SAFETY: every pointer below is either valid or deliberately NULL.
        unsafe {
            assert_eq!(hrry_tensor_count(f), core.len());
            for (i, entry) in core.entries().enumerate() {
                let (mut name, mut len) = (null(), 0usize);
                assert_eq!(hrry_tensor_name(f, i, &mut name, &mut len), HRRY_OK);
                assert_eq!(CStr::from_ptr(name).to_bytes(), entry.name().as_bytes());
                assert_eq!(len, entry.name().len());
                let mut index = 0;
                assert_eq!(hrry_find(f, name, len, &mut index), HRRY_OK);
                assert_eq!(index, i);

                let tensor = core.tensor_at(entry).unwrap();
                let desc = &tensor.descriptor;
                let mut info: hrry_tensor_info = std::mem::zeroed();
                assert_eq!(hrry_tensor_info_get(f, i, &mut info), HRRY_OK);
                assert_eq!(
                    (info.type_tag, info.layout_tag),
                    (desc.type_tag, desc.layout_tag)
                );
                assert_eq!(info.rank as usize, desc.shape.len());
                if info.rank > 0 {
                    let shape = std::slice::from_raw_parts(info.shape, info.rank as usize);
                    assert_eq!(shape, &desc.shape[..]);
                } else {
                    assert!(info.shape.is_null());
                }
                assert_eq!(info.element_count, desc.shape.iter().product::<u64>());
                assert_eq!(info.is_quantized == 1, desc.quantization.is_some());
                assert_eq!(info.buffer_count as usize, tensor.buffers.len());
                for (b, want) in tensor.buffers.iter().enumerate() {
                    let (mut data, mut n) = (null(), 0u64);
                    assert_eq!(
                        hrry_tensor_buffer(f, i, b as u32, &mut data, &mut n),
                        HRRY_OK
                    );
                    assert_eq!(std::slice::from_raw_parts(data, n as usize), *want);
                }

                let expected = row_major_bytes(&core, entry.name(), &ExportOptions::default());
                let mut size = 0u64;
                let status = hrry_row_major_size(f, i, &mut size);
                match expected {
                    Ok(want) => {
                        assert_eq!(status, HRRY_OK);
                        assert_eq!(size as usize, want.len());
                        let mut got = vec![0xA5u8; want.len()];
                        let status = hrry_read_row_major(f, i, got.as_mut_ptr().cast(), size);
                        assert_eq!(status, HRRY_OK, "{rel} {}: {}", entry.name(), last_error());
                        assert_eq!(got, want);
                    }
                    Err(_) => {
                        // Either the size already says so, or the read does.
                        let mut got = vec![0u8; size as usize];
                        let read = hrry_read_row_major(f, i, got.as_mut_ptr().cast(), size);
                        let refused = if status == HRRY_OK { read } else { status };
                        assert_eq!(refused, HRRY_UNSUPPORTED, "{rel} {}", entry.name());
                    }
                }

                let count = info.element_count;
                let mut values = vec![0f32; count as usize];
                let status = hrry_dequantize(f, i, values.as_mut_ptr(), count);
                if desc.quantization.is_some() {
                    assert_eq!(status, HRRY_OK, "{}", last_error());
                    let want = hrry::quant::dequantize(desc, &tensor.buffers).unwrap();
                    assert_eq!(
                        values.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                        want.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
                    );
                } else {
                    assert_eq!(status, HRRY_UNSUPPORTED);
                }
            }
            hrry_close(f);
        }
    }
}

#[test]
fn open_bytes_borrows_and_truncation_is_invalid() {
    let bytes = std::fs::read(corpus("valid/basic.hrry")).unwrap();
    let range = bytes.as_ptr_range();
    // SAFETY: `bytes` outlives every handle opened on it; outputs are valid.
    unsafe {
        let mut f = garbage();
        assert_eq!(
            hrry_open_bytes(bytes.as_ptr(), bytes.len(), &mut f),
            HRRY_OK
        );
        let (mut data, mut n) = (null(), 0u64);
        assert_eq!(hrry_tensor_buffer(f, 0, 0, &mut data, &mut n), HRRY_OK);
        assert!(
            range.contains(&data),
            "the buffer is not borrowed from the input"
        );
        hrry_close(f);
        for cut in [1, 8, 63, 64, bytes.len() / 2, bytes.len() - 1] {
            let mut f = garbage();
            assert_eq!(
                hrry_open_bytes(bytes.as_ptr(), cut, &mut f),
                HRRY_INVALID,
                "{cut}"
            );
            assert!(f.is_null());
            assert!(!last_error().is_empty());
        }
        let mut f = garbage();
        assert_eq!(hrry_open_bytes(bytes.as_ptr(), 0, &mut f), HRRY_ARGUMENT);
        assert!(f.is_null());
        assert_eq!(hrry_open_bytes(null(), 10, &mut f), HRRY_ARGUMENT);
        assert_eq!(
            hrry_open_bytes(bytes.as_ptr(), bytes.len(), null_mut()),
            HRRY_ARGUMENT
        );
    }
}

#[test]
fn invalid_files_are_refused_with_their_rule() {
    for (rel, rule) in [
        ("invalid/HF-HDR-001.hrry", "HF-HDR-001"),
        ("invalid/HF-CRC-001.hrry", "HF-CRC-001"),
        ("invalid/HF-FIL-001.hrry", "HF-FIL-001"),
        ("invalid/HF-CMP-002.hrry", "HF-CMP-002"),
    ] {
        // SAFETY: valid C strings and output pointers.
        unsafe {
            let mut f = garbage();
            assert_eq!(
                hrry_open(c_path(rel).as_ptr(), &mut f),
                HRRY_INVALID,
                "{rel}"
            );
            assert!(f.is_null());
            assert!(
                last_error().contains(&format!(": {rule} at offset ")),
                "{}",
                last_error()
            );

            let mut r = garbage();
            assert_eq!(hrry_validate_path(c_path(rel).as_ptr(), 0, &mut r), HRRY_OK);
            assert_eq!(hrry_report_valid(r), 0);
            assert!(hrry_report_count(r) >= 1);
            let (mut id, mut offset, mut message) = (null(), u64::MAX, null());
            assert_eq!(
                hrry_report_violation(r, 0, &mut id, &mut offset, &mut message),
                HRRY_OK
            );
            assert_eq!(CStr::from_ptr(id).to_str().unwrap(), rule);
            assert!(!CStr::from_ptr(message).is_empty());
            let k = hrry_report_count(r);
            assert_eq!(
                hrry_report_violation(r, k, &mut id, null_mut(), null_mut()),
                HRRY_NOT_FOUND
            );
            assert!(id.is_null());
            hrry_report_free(r);
        }
    }
}

#[test]
fn the_policy_tells_invalid_from_refused() {
    let worked = c_path("invalid/TD-BUF-014-metadata-worked-example.hrry");
    let crc = c_path("invalid/HF-CRC-001.hrry");
    // SAFETY: valid C strings and output pointers.
    unsafe {
        for (path, policy, verdict) in [
            (&worked, HRRY_POLICY_SPEC, HRRY_VERDICT_VALID),
            (&worked, HRRY_POLICY_HARDENED, HRRY_VERDICT_REFUSED),
            (&crc, HRRY_POLICY_SPEC, HRRY_VERDICT_INVALID),
            (&crc, HRRY_POLICY_HARDENED, HRRY_VERDICT_INVALID),
        ] {
            let mut r = garbage();
            assert_eq!(
                hrry_validate_path_policy(path.as_ptr(), 0, policy, &mut r),
                HRRY_OK
            );
            assert_eq!(hrry_report_verdict(r), verdict, "{path:?} {policy}");
            assert_eq!(
                hrry_report_valid(r),
                c_int::from(verdict == HRRY_VERDICT_VALID)
            );
            hrry_report_free(r);
        }
        // The functions without a policy judge strictly by the hardened one.
        let mut r = garbage();
        assert_eq!(hrry_validate_path(worked.as_ptr(), 0, &mut r), HRRY_OK);
        assert_eq!(hrry_report_verdict(r), HRRY_VERDICT_REFUSED);
        hrry_report_free(r);
        let mut r = garbage();
        assert_eq!(
            hrry_validate_path_policy(worked.as_ptr(), 0, 7, &mut r),
            HRRY_ARGUMENT
        );
        assert!(r.is_null());
    }
}

#[test]
fn holo_archives_validate_but_do_not_open() {
    // SAFETY: valid C strings and output pointers.
    unsafe {
        let mut f = garbage();
        let path = c_path("valid/full.holo");
        assert_eq!(hrry_open(path.as_ptr(), &mut f), HRRY_UNSUPPORTED);
        assert!(f.is_null());
        let mut r = null_mut();
        assert_eq!(hrry_validate_path(path.as_ptr(), 0, &mut r), HRRY_OK);
        assert_eq!(hrry_report_valid(r), 1);
        assert_eq!(hrry_report_count(r), 0);
        hrry_report_free(r);
    }
}

#[test]
fn bad_arguments_are_refused() {
    let f = open("valid/quant-per-tensor-int8.hrry");
    // SAFETY: each call passes NULL, out-of-range or wrong-length arguments on
    // purpose; every non-NULL pointer is valid.
    unsafe {
        let n = hrry_tensor_count(f);
        let mut name: *const c_char = null();
        let mut len = 0usize;
        assert_eq!(
            hrry_tensor_name(null(), 0, &mut name, &mut len),
            HRRY_ARGUMENT
        );
        assert_eq!(hrry_tensor_name(f, 0, null_mut(), &mut len), HRRY_ARGUMENT);
        assert_eq!(hrry_tensor_name(f, 0, &mut name, null_mut()), HRRY_OK);
        assert_eq!(hrry_tensor_name(f, n, &mut name, &mut len), HRRY_NOT_FOUND);
        assert!(name.is_null());

        let mut index = 0;
        assert_eq!(
            hrry_find(f, c"nope".as_ptr(), 4, &mut index),
            HRRY_NOT_FOUND
        );
        assert_eq!(index, usize::MAX);
        assert_eq!(hrry_find(f, c"nope".as_ptr(), 0, &mut index), HRRY_ARGUMENT);
        assert_eq!(hrry_find(f, null(), 4, &mut index), HRRY_ARGUMENT);
        assert_eq!(hrry_find(f, c"\xff".as_ptr(), 1, &mut index), HRRY_ARGUMENT);
        assert_eq!(hrry_find(f, c"nope".as_ptr(), 4, null_mut()), HRRY_ARGUMENT);

        let mut info: hrry_tensor_info = std::mem::zeroed();
        assert_eq!(hrry_tensor_info_get(f, n, &mut info), HRRY_NOT_FOUND);
        assert_eq!(hrry_tensor_info_get(f, 0, null_mut()), HRRY_ARGUMENT);
        assert_eq!(hrry_tensor_info_get(f, 0, &mut info), HRRY_OK);

        let (mut data, mut blen) = (null(), 7u64);
        assert_eq!(
            hrry_tensor_buffer(f, 0, info.buffer_count, &mut data, &mut blen),
            HRRY_NOT_FOUND
        );
        assert!(data.is_null() && blen == 0);
        assert_eq!(
            hrry_tensor_buffer(f, 0, 0, null_mut(), &mut blen),
            HRRY_ARGUMENT
        );

        let count = info.element_count;
        let mut values = vec![0f32; count as usize + 1];
        assert_eq!(
            hrry_dequantize(f, 0, values.as_mut_ptr(), count + 1),
            HRRY_ARGUMENT
        );
        assert_eq!(
            hrry_dequantize(f, 0, values.as_mut_ptr(), count - 1),
            HRRY_ARGUMENT
        );
        assert_eq!(hrry_dequantize(f, 0, null_mut(), count), HRRY_ARGUMENT);
        let misaligned = values
            .as_mut_ptr()
            .cast::<u8>()
            .wrapping_add(1)
            .cast::<f32>();
        assert_eq!(hrry_dequantize(f, 0, misaligned, count), HRRY_ARGUMENT);
        assert_eq!(
            hrry_dequantize(f, n, values.as_mut_ptr(), count),
            HRRY_NOT_FOUND
        );
        assert_eq!(hrry_dequantize(f, 0, values.as_mut_ptr(), count), HRRY_OK);

        let mut size = 0;
        assert_eq!(hrry_row_major_size(f, 0, &mut size), HRRY_OK);
        let mut out = vec![0u8; size as usize + 1];
        assert_eq!(
            hrry_read_row_major(f, 0, out.as_mut_ptr().cast(), size + 1),
            HRRY_ARGUMENT
        );
        assert_eq!(hrry_read_row_major(f, 0, null_mut(), size), HRRY_ARGUMENT);
        assert_eq!(
            hrry_read_row_major(f, n, out.as_mut_ptr().cast(), size),
            HRRY_NOT_FOUND
        );
        assert_eq!(
            hrry_read_row_major(null(), 0, out.as_mut_ptr().cast(), size),
            HRRY_ARGUMENT
        );

        let mut g = garbage();
        assert_eq!(hrry_open(null(), &mut g), HRRY_ARGUMENT);
        assert!(g.is_null());
        assert_eq!(hrry_open(c"".as_ptr(), &mut g), HRRY_ARGUMENT);
        assert_eq!(hrry_open(c"/nonexistent/x.hrry".as_ptr(), &mut g), HRRY_IO);
        assert!(g.is_null());
        let mut r = garbage();
        assert_eq!(
            hrry_validate_path(c"/nonexistent/x.hrry".as_ptr(), 0, &mut r),
            HRRY_IO
        );
        assert!(r.is_null());
        assert_eq!(hrry_validate_bytes(null(), 3, 0, &mut r), HRRY_ARGUMENT);

        assert_eq!(hrry_tensor_count(null()), 0);
        assert_eq!(hrry_report_count(null()), 0);
        assert_eq!(hrry_report_valid(null()), 0);
        hrry_close(null_mut());
        hrry_report_free(null_mut());
        hrry_close(f);
    }
}

#[test]
fn panics_become_a_status_and_errors_stay_per_thread() {
    let status = call(|| panic!("boom"));
    assert_eq!(status, HRRY_INTERNAL);
    assert!(last_error().contains("boom"));
    assert_eq!(call(|| Err(Failure::not_found("mine"))), HRRY_NOT_FOUND);
    std::thread::spawn(|| {
        assert_eq!(last_error(), "");
        call(|| Err(Failure::argument("theirs")));
        assert_eq!(last_error(), "theirs");
    })
    .join()
    .unwrap();
    assert_eq!(last_error(), "mine");
}

#[test]
fn versions_and_status_names() {
    // SAFETY: static NUL-terminated strings.
    unsafe {
        assert_eq!(
            CStr::from_ptr(hrry_version()).to_str().unwrap(),
            env!("CARGO_PKG_VERSION")
        );
        assert_eq!(
            CStr::from_ptr(hrry_status_name(HRRY_INVALID)),
            c"HRRY_INVALID"
        );
        assert_eq!(CStr::from_ptr(hrry_status_name(99)), c"HRRY_UNKNOWN");
    }
    assert_eq!(hrry_abi_version(), HRRY_ABI_VERSION);
}

#[test]
fn an_empty_file_is_invalid_and_a_directory_unreadable() {
    let empty = std::env::temp_dir().join(format!("hrry-capi-empty-{}.hrry", std::process::id()));
    std::fs::write(&empty, b"").unwrap();
    let path = CString::new(empty.clone().into_os_string().into_encoded_bytes()).unwrap();
    // SAFETY: valid C strings and output pointers.
    unsafe {
        let mut f = garbage();
        assert_eq!(hrry_open(path.as_ptr(), &mut f), HRRY_INVALID);
        assert!(f.is_null());
        assert!(last_error().contains(" at offset 0: "), "{}", last_error());
        let dir = c_path("valid");
        assert_eq!(hrry_open(dir.as_ptr(), &mut f), HRRY_IO);
        let mut r = garbage();
        assert_eq!(hrry_validate_path(dir.as_ptr(), 0, &mut r), HRRY_IO);
        assert!(r.is_null());
    }
    std::fs::remove_file(empty).unwrap();
}

#[test]
fn a_directory_is_refused_as_a_directory() {
    let dir = CString::new(corpus("valid").into_os_string().into_encoded_bytes()).unwrap();
    let mut f = garbage();
    // SAFETY: a valid C string and output pointer.
    let status = unsafe { hrry_open(dir.as_ptr(), &mut f) };
    assert_eq!(status, HRRY_IO);
    assert!(f.is_null());
    let message = last_error();
    assert!(message.contains("is a directory"), "{message}");
    assert!(!message.contains("No such device"), "{message}");
}

#[cfg(unix)]
#[test]
fn what_is_not_a_regular_file_is_one_status_and_message() {
    let dir = std::env::temp_dir().join(format!("hrry-capi-special-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut paths = vec![
        "/dev/zero".to_string(),
        "/dev/null".to_string(),
        dir.to_str().unwrap().to_string(),
    ];
    if std::path::Path::new("/proc/self/status").exists() {
        paths.push("/proc/self/status".into());
    }
    let fifo = dir.join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).output();
    if made.is_ok_and(|o| o.status.success()) {
        paths.push(fifo.to_str().unwrap().to_string());
    }
    for path in paths {
        let c = CString::new(path.clone()).unwrap();
        let mut f = garbage();
        // SAFETY: a valid C string and output pointer.
        let status = unsafe { hrry_open(c.as_ptr(), &mut f) };
        assert_eq!(status, HRRY_IO, "hrry_open {path}");
        assert!(f.is_null());
        let opened = last_error();
        let mut r = garbage();
        // SAFETY: as above.
        let status = unsafe { hrry_validate_path(c.as_ptr(), 0, &mut r) };
        assert_eq!(status, HRRY_IO, "hrry_validate_path {path}");
        assert!(r.is_null());
        let validated = last_error();
        for message in [&opened, &validated] {
            assert!(message.contains("not a regular file"), "{message}");
            assert!(message.contains(&path), "{message}");
            assert!(!message.contains("os error"), "{message}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A static C string as `&str` (NULL as `None`).
fn name(p: *const c_char) -> Option<&'static str> {
    // SAFETY: the name functions return NULL or a static NUL-terminated string.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_str().unwrap())
}

#[test]
fn type_and_layout_tags_have_their_spec_names() {
    assert_eq!(name(hrry_element_type_name(0x03)), Some("float32"));
    assert_eq!(name(hrry_element_type_name(0x02)), Some("bfloat16"));
    assert_eq!(name(hrry_element_type_name(0xF0)), Some("extension"));
    assert_eq!(name(hrry_element_type_name(0xEE)), None);
    assert_eq!(name(hrry_layout_name(0x01)), Some("row-major"));
    assert_eq!(name(hrry_layout_name(0x0B)), Some("composite"));
    assert_eq!(name(hrry_layout_name(0x30)), None);
    // The same string each time: static, never freed.
    assert_eq!(hrry_element_type_name(0x03), hrry_element_type_name(0x03));
    assert_eq!(name(hrry_kv_type_name(HRRY_KV_BYTES)), Some("bytes"));
    assert_eq!(name(hrry_kv_type_name(0x08)), None);
}

#[test]
fn kv_metadata_reads_as_the_core_reads_it() {
    let f = open("valid/kv_all_types.hrry");
    // SAFETY: `f` is open; every output pointer is valid or deliberately NULL.
    unsafe {
        assert_eq!(hrry_kv_count(f), 8);
        let texts: Vec<(String, u8, String)> = (0..8)
            .map(|k| {
                let (mut key, mut text, mut len, mut ty) = (null(), null(), 0usize, 0u8);
                assert_eq!(hrry_kv_key(f, k, &mut key, &mut len), HRRY_OK);
                assert_eq!(CStr::from_ptr(key).to_bytes().len(), len);
                assert_eq!(hrry_kv_type(f, k, &mut ty), HRRY_OK);
                assert_eq!(hrry_kv_text(f, k, &mut text, null_mut()), HRRY_OK);
                let s = |p| CStr::from_ptr(p).to_str().unwrap().to_string();
                (s(key), ty, s(text))
            })
            .collect();
        let want = [
            ("string", HRRY_KV_STRING, "text"),
            ("int64", HRRY_KV_INT64, "-7"),
            ("uint64", HRRY_KV_UINT64, "18446744073709551615"),
            ("float64", HRRY_KV_FLOAT64, "0.25"),
            ("bool", HRRY_KV_BOOL, "true"),
            ("bytes", HRRY_KV_BYTES, "0001ff"),
            ("array", HRRY_KV_ARRAY, "[1, -2]"),
            ("strings", HRRY_KV_ARRAY, "[\"a\"]"),
        ];
        for ((key, ty, text), (k, t, x)) in texts.iter().zip(want) {
            assert_eq!((key.as_str(), *ty, text.as_str()), (k, t, x));
        }
        let mut i = 0i64;
        assert_eq!(hrry_kv_int64(f, 1, &mut i), HRRY_OK);
        assert_eq!(i, -7);
        let mut u = 0u64;
        assert_eq!(hrry_kv_uint64(f, 2, &mut u), HRRY_OK);
        assert_eq!(u, u64::MAX);
        let mut x = 0f64;
        assert_eq!(hrry_kv_float64(f, 3, &mut x), HRRY_OK);
        assert_eq!(x, 0.25);
        let mut b = 0;
        assert_eq!(hrry_kv_bool(f, 4, &mut b), HRRY_OK);
        assert_eq!(b, 1);
        let (mut data, mut len) = (null(), 0usize);
        assert_eq!(hrry_kv_bytes(f, 5, &mut data, &mut len), HRRY_OK);
        assert_eq!(std::slice::from_raw_parts(data, len), [0x00, 0x01, 0xff]);
        // The wrong getter, out of range, NULL.
        assert_eq!(hrry_kv_uint64(f, 1, &mut u), HRRY_UNSUPPORTED);
        assert_eq!(u, 0);
        assert!(last_error().contains("int64"), "{}", last_error());
        let mut key = garbage::<c_char>().cast_const();
        assert_eq!(hrry_kv_key(f, 8, &mut key, null_mut()), HRRY_NOT_FOUND);
        assert!(key.is_null());
        assert_eq!(hrry_kv_text(null(), 0, &mut key, null_mut()), HRRY_ARGUMENT);
        assert_eq!(hrry_kv_count(null()), 0);
        hrry_close(f);
    }
    // A file without KV has none.
    let f = open("valid/all_element_types.hrry");
    // SAFETY: `f` is open.
    unsafe {
        assert_eq!(hrry_kv_count(f), 0);
        hrry_close(f);
    }
}
