//! One corpus file and the verdict it must get.

use hrry::Format;

/// What validating a corpus file must give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Valid in strict mode.
    Valid,
    /// Strict validation reports exactly this rule ID and no other.
    Invalid(&'static str),
}

/// One corpus file.
#[derive(Clone, Debug)]
pub struct Case {
    /// Path relative to `corpus/`, e.g. `invalid/HF-HDR-003.hrry`.
    pub path: String,
    /// Container format.
    pub format: Format,
    /// The required verdict.
    pub expect: Expect,
    /// One line saying what the file is.
    pub description: String,
    /// The file's bytes.
    pub bytes: Vec<u8>,
    /// The spec's worked example the file is built from (`file.md § Section`),
    /// when it is one: valid under the spec policy whatever `expect` says of the
    /// hardened one.
    pub spec_example: Option<&'static str>,
}

impl Case {
    /// A valid case at `valid/<name>` (under `stream/` or `messages/` for those
    /// formats).
    pub fn valid(format: Format, name: &str, description: &str, bytes: Vec<u8>) -> Self {
        Case {
            path: format!("{}valid/{name}", folder(format)),
            format,
            expect: Expect::Valid,
            description: description.to_string(),
            bytes,
            spec_example: None,
        }
    }

    /// An invalid case breaking `rule`, at `invalid/<rule>[-suffix].<ext>`.
    pub fn invalid(
        format: Format,
        rule: &'static str,
        suffix: &str,
        description: &str,
        bytes: Vec<u8>,
    ) -> Self {
        let ext = match format {
            Format::HrryFile => "hrry",
            Format::Holo => "holo",
            Format::Stream => "hrrys",
            Format::Messages => "hrrymsg",
        };
        let stem = if suffix.is_empty() {
            rule.to_string()
        } else {
            format!("{rule}-{suffix}")
        };
        Case {
            path: format!("{}invalid/{stem}.{ext}", folder(format)),
            format,
            expect: Expect::Invalid(rule),
            description: description.to_string(),
            bytes,
            spec_example: None,
        }
    }
}

impl Case {
    /// This case marked as built from the spec's worked example at `source`.
    pub fn spec_example(mut self, source: &'static str) -> Self {
        self.spec_example = Some(source);
        self
    }
}

/// The folder a format's cases live in: files and archives at the top, bare
/// streams under `stream/`, captured conversations under `messages/`.
fn folder(format: Format) -> &'static str {
    match format {
        Format::HrryFile | Format::Holo => "",
        Format::Stream => "stream/",
        Format::Messages => "messages/",
    }
}
