//! The one judging policy every decode pass runs under: which rules count
//! ([`Rules`]) and how far the input is read ([`Depth`]).

/// Which rules a judgement applies. `limit` rules are judged under all of them:
/// past a limit, the judgement stops before it is complete.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Rules {
    /// The spec's rules read strictly, and hrry's `hardening` rules: what
    /// untrusted input should be judged with (`hrry validate`'s default).
    #[default]
    Hardened,
    /// The spec's rules read strictly, nothing more: the exact spec verdict
    /// (`--policy spec`).
    Spec,
    /// The spec's rules with the spec's permissive allowances (unknown extension
    /// layouts, composition rules and quantization schemes in the private ranges
    /// accepted), no `hardening` rule (`--permissive`).
    Permissive,
    /// The spec's rules with its permissive allowances, and hrry's `hardening`
    /// rules: what a reader opens with by default ([`crate::file::OpenOptions`]).
    /// A file holding a tensor of an extension this library does not know still
    /// opens (reading that tensor is what fails, and `hrry serve` answers
    /// `LAYOUT_UNAVAILABLE` for it); everything else is judged as under
    /// [`Rules::Hardened`].
    HardenedPermissive,
}

impl Rules {
    /// The lowercase name: `hardened`, `spec`, `permissive` or
    /// `hardened-permissive`.
    pub fn name(self) -> &'static str {
        match self {
            Rules::Hardened => "hardened",
            Rules::Spec => "spec",
            Rules::Permissive => "permissive",
            Rules::HardenedPermissive => "hardened-permissive",
        }
    }

    /// The rules named `name` (`hardened`, `spec`, `permissive` or
    /// `hardened-permissive`).
    pub fn from_name(name: &str) -> Option<Self> {
        [
            Rules::Hardened,
            Rules::Spec,
            Rules::Permissive,
            Rules::HardenedPermissive,
        ]
        .into_iter()
        .find(|r| r.name() == name)
    }

    /// Whether the spec's rules are read strictly (without its permissive
    /// allowances).
    pub fn is_strict(self) -> bool {
        matches!(self, Rules::Hardened | Rules::Spec)
    }

    /// The rules of the two switches the CLI, Python and C offer: the spec's
    /// permissive mode (`permissive`) and hrry's policy (`policy`, [`Rules::Spec`]
    /// or [`Rules::Hardened`]). The permissive mode judges no `hardening` rule,
    /// whatever the policy says.
    pub fn from_switches(permissive: bool, policy: Rules) -> Self {
        if permissive {
            Rules::Permissive
        } else {
            policy
        }
    }

    /// The spec's reader mode these rules read in, as reports name it: `strict`
    /// or `permissive`.
    pub fn mode_name(self) -> &'static str {
        if self.is_strict() {
            "strict"
        } else {
            "permissive"
        }
    }

    /// The policy these rules apply, as reports name it: `hardened` when
    /// `hardening` rules are judged, else `spec`.
    pub fn policy_name(self) -> &'static str {
        if self.hardening() {
            "hardened"
        } else {
            "spec"
        }
    }

    /// Whether hrry's `hardening` rules are judged.
    pub fn hardening(self) -> bool {
        matches!(self, Rules::Hardened | Rules::HardenedPermissive)
    }
}

/// How far a judgement reads, each depth reading everything the one before it
/// reads. A rule decided from bytes a depth does not read is not judged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Depth {
    /// The header, trailer, index and KV, without the two frame checks neither
    /// memory safety nor right lookups rest on (the index CRC-32C, not computed,
    /// and the uniqueness of names): for files validated earlier. A reader decodes
    /// each descriptor when it is first asked for and does not judge it.
    Index,
    /// The header, trailer, index and KV, every frame rule judged; a reader
    /// decodes each descriptor when it is first asked for (its fixed header
    /// checked, so that nothing is read past it) and does not judge it. What
    /// `hrry inspect` opens with.
    Frame,
    /// The frame, then every descriptor of the tensor region, their buffers'
    /// placement, the quantization parameters and sparse index structures
    /// (rules that read [`Reads::Metadata`](super::Reads::Metadata)): a pass over
    /// the descriptors, not the data. What opening an untrusted file needs.
    Metadata,
    /// Everything, including the rules decided from the contents of padding and
    /// of data buffers ([`Reads::Data`](super::Reads::Data): zero padding, packing
    /// tails, reserved element codes, Morton and block padding). What `hrry
    /// validate` reads.
    #[default]
    Data,
}

impl Depth {
    /// The lowercase name: `index`, `frame`, `metadata` or `data`.
    pub fn name(self) -> &'static str {
        match self {
            Depth::Index => "index",
            Depth::Frame => "frame",
            Depth::Metadata => "metadata",
            Depth::Data => "data",
        }
    }
}

/// Which rules a decode pass judges and how far it reads: the one policy of the
/// validator and of every reader.
///
/// ```
/// use hrry::validate::{Depth, Judging, Rules};
///
/// // What `hrry validate --policy spec` judges: the exact spec verdict, every byte.
/// let spec = Judging { rules: Rules::Spec, depth: Depth::Data };
/// assert_eq!(spec, Judging::new(Rules::Spec, Depth::Data));
/// assert_eq!(Judging::default(), Judging::new(Rules::Hardened, Depth::Data));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Judging {
    /// Which rules count.
    pub rules: Rules,
    /// How far the input is read.
    pub depth: Depth,
}

impl Judging {
    /// Judging `rules` to `depth`.
    pub fn new(rules: Rules, depth: Depth) -> Self {
        Judging { rules, depth }
    }
}

impl From<Rules> for Judging {
    /// Judging `rules` to the default depth, [`Depth::Data`].
    fn from(rules: Rules) -> Self {
        Judging {
            rules,
            depth: Depth::default(),
        }
    }
}
