//! Option values several commands share: sizes and `--policy`.

/// A size given on the command line: bytes, or a number with a `K`, `M` or `G`
/// suffix (KiB, MiB, GiB).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let (digits, shift) = match s.as_bytes().last().map(u8::to_ascii_uppercase) {
        Some(b'K') => (&s[..s.len() - 1], 10),
        Some(b'M') => (&s[..s.len() - 1], 20),
        Some(b'G') => (&s[..s.len() - 1], 30),
        _ => (s, 0),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{s:?} is not a size (bytes, or a number with K, M or G)"))?;
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("{s} is too large"))
}

/// `--policy`: whether hrry's `hardening` rules refuse a file, for `validate` and
/// the commands that read files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PolicyArg {
    /// The exact spec verdict: only the spec's rules (and resource limits) refuse.
    Spec,
    /// The spec plus hrry's hardening rules (the default).
    Hardened,
}

impl From<PolicyArg> for hrry::validate::Rules {
    fn from(p: PolicyArg) -> Self {
        match p {
            PolicyArg::Spec => hrry::validate::Rules::Spec,
            PolicyArg::Hardened => hrry::validate::Rules::Hardened,
        }
    }
}

/// The rules `--permissive` and `--policy` ask a judgement for: with
/// `--permissive`, the spec's permissive allowances (and no hardening rule,
/// whatever `--policy` says); else the policy's.
pub fn judged_rules(permissive: bool, policy: Option<PolicyArg>) -> hrry::validate::Rules {
    hrry::validate::Rules::from_switches(permissive, policy.unwrap_or(PolicyArg::Hardened).into())
}
