//! `hrry serve`, `hrry fetch` and `hrry put` as commands: the address printed on
//! start, fetches equal to `hrry export`, a push served back, a name in two files
//! refused, and a graceful stop on SIGTERM.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn hrry() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hrry"))
}

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus/valid")
        .join(name)
}

fn run(cmd: &mut Command) -> std::process::Output {
    let out = cmd.output().expect("hrry runs");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn serve_fetch_put_and_stop_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = hrry()
        .args(["serve", "--listen", "127.0.0.1:0"])
        .arg(corpus("layout-csr.hrry"))
        .arg(corpus("composite_partition.hrry"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("first line {line:?}"))
        .to_string();
    assert!(
        addr.starts_with("127.0.0.1:") && !addr.ends_with(":0"),
        "{addr}"
    );

    for (file, key) in [
        ("layout-csr.hrry", "t"),
        ("composite_partition.hrry", "head"),
    ] {
        let fetched = dir.path().join(format!("{key}.npy"));
        let exported = dir.path().join(format!("{key}-export.npy"));
        run(hrry().args(["fetch", &addr, key, "-o"]).arg(&fetched));
        run(hrry()
            .arg("export")
            .arg(corpus(file))
            .arg(key)
            .arg("-o")
            .arg(&exported));
        assert_eq!(
            std::fs::read(&fetched).unwrap(),
            std::fs::read(&exported).unwrap()
        );
    }
    // As stored: the CSR tensor in a HRRYFILE, which validates.
    let stored = dir.path().join("t.hrry");
    run(hrry().args(["fetch", &addr, "t", "-o"]).arg(&stored));
    run(hrry().arg("validate").arg(&stored));
    // A push, served back under its new key; the message names the tensor once
    // and the key it is stored under.
    let pushed = run(hrry()
        .args(["put", &addr])
        .arg(corpus("layout-csr.hrry"))
        .args(["t", "--as", "copy"]));
    let said = String::from_utf8_lossy(&pushed.stderr);
    assert!(
        said.contains("t stored on") && said.contains("as \"copy\""),
        "{said}"
    );
    // Fetching to a name whose format cannot be told is refused, as convert
    // refuses one, and writes nothing.
    let text = dir.path().join("t.txt");
    let out = hrry()
        .args(["fetch", &addr, "t", "-o"])
        .arg(&text)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(".npy or .hrry"));
    assert!(!text.exists());
    // The fetch summary counts in words, without "(s)".
    let out = hrry()
        .args(["fetch", &addr, "t", "-o"])
        .arg(dir.path().join("t2.hrry"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("(1 tensor, ") && !said.contains("(s)"),
        "{said}"
    );
    let copy = dir.path().join("copy.npy");
    run(hrry().args(["fetch", &addr, "copy", "-o"]).arg(&copy));
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        std::fs::read(dir.path().join("t.npy")).unwrap()
    );
    // An unknown key fails with the server's ERROR.
    let out = hrry()
        .args(["fetch", &addr, "nope", "-o"])
        .arg(dir.path().join("x.npy"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("UNKNOWN_TENSOR"));

    let status = Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let status = server.wait().unwrap();
    assert!(status.success(), "graceful stop: {status:?}");
}

#[test]
fn a_name_in_two_files_refuses_to_start() {
    let out = hrry()
        .arg("serve")
        .arg(corpus("layout-csr.hrry"))
        .arg(corpus("layout-coo.hrry"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("layout-csr.hrry") && err.contains("layout-coo.hrry"),
        "{err}"
    );
}
