//! CUDA architectures (`sm_XX`, with the `a`/`f` variants) and the two layouts
//! of the cubin `e_flags` word.
//!
//! ELF ABI version 8 (CUDA 13): the real SM number lives in bits 8..15, the low
//! byte holds a format nibble (0x04 up to sm_90, 0x02 from sm_100), e.g. sm_90 is
//! `0x06005a04`. ELF ABI version 7 (CUDA 12 and older): the SM number is the low
//! byte, bits 16..23 carry the virtual SM, and bits 8..15 carry flags such as
//! 64-bit addressing (0x04 << 8), e.g. `0x5a055a`.

use crate::error::{Error, Result};
use std::fmt;

/// Which feature set of an architecture an image targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum ArchVariant {
    /// Plain `sm_XX`: forward compatible.
    #[default]
    Base,
    /// `sm_XXa`: architecture-specific features, runs only on that SM.
    Specific,
    /// `sm_XXf`: family-specific features.
    Family,
}

/// A streaming-multiprocessor architecture such as `sm_90` or `sm_100a`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SmArch {
    /// The SM number, e.g. 90 for `sm_90`.
    pub sm: u32,
    /// The `a`/`f` suffix.
    pub variant: ArchVariant,
}

/// The SM numbers nvlink 13.0.88 links for (its `-arch` values; measured:
/// `sm_50`–`sm_72`, `sm_101`, `sm_102` and `sm_122` are "not defined for
/// option 'arch'", `sm_88` is accepted and ptxas 13.0.88 assembles for it).
pub const KNOWN_SMS: &[u32] = &[75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121];

/// The SM numbers with an `a` target (nvlink 13.0.88: `sm_90a` and the
/// Blackwell ones; `sm_75a`–`sm_89a` are not defined).
const SPECIFIC_SMS: &[u32] = &[90, 100, 103, 110, 120, 121];

/// The SM numbers with an `f` target (nvlink 13.0.88: Blackwell only;
/// `sm_90f` is not defined).
const FAMILY_SMS: &[u32] = &[100, 103, 110, 120, 121];

impl SmArch {
    /// A plain (base variant) architecture.
    pub const fn new(sm: u32) -> Self {
        SmArch {
            sm,
            variant: ArchVariant::Base,
        }
    }

    /// Parses `sm_90`, `sm_90a`, `sm_100f`, `compute_90`, or a bare `90`.
    pub fn parse(text: &str) -> Result<Self> {
        let t = text.trim();
        let rest = t
            .strip_prefix("sm_")
            .or_else(|| t.strip_prefix("compute_"))
            .or_else(|| t.strip_prefix("lto_"))
            .unwrap_or(t);
        let (digits, variant) = if let Some(d) = rest.strip_suffix('a') {
            (d, ArchVariant::Specific)
        } else if let Some(d) = rest.strip_suffix('f') {
            (d, ArchVariant::Family)
        } else {
            (rest, ArchVariant::Base)
        };
        match digits.parse::<u32>() {
            Ok(sm) if (10..1000).contains(&sm) => Ok(SmArch { sm, variant }),
            _ => Err(Error::usage(format!("unknown arch name '{text}'"))),
        }
    }

    /// Whether nvlink 13.0.88 links for this target: its SM in [`KNOWN_SMS`]
    /// and, for an `a` or `f` variant, an SM that has one.
    pub fn is_known_target(self) -> bool {
        KNOWN_SMS.contains(&self.sm)
            && match self.variant {
                ArchVariant::Base => true,
                ArchVariant::Specific => SPECIFIC_SMS.contains(&self.sm),
                ArchVariant::Family => FAMILY_SMS.contains(&self.sm),
            }
    }

    /// The name of the virtual architecture of this target, `compute_90a`
    /// for `sm_90a`, as nvlink names a virtual (`-arch=compute_XX`) target.
    pub fn virtual_name(self) -> String {
        self.to_string().replacen("sm_", "compute_", 1)
    }

    /// The architecture recorded in a cubin's `e_flags`, given its `EI_ABIVERSION`.
    pub fn from_e_flags(abi_version: u8, e_flags: u32) -> Self {
        let sm = if abi_version >= 8 {
            (e_flags >> 8) & 0xff
        } else {
            e_flags & 0xff
        };
        SmArch::new(sm)
    }

    /// Whether this is Blackwell or later (sm_100+), which carries the Mercury section family.
    pub fn is_blackwell_or_later(self) -> bool {
        self.sm >= 100
    }

    /// Whether this architecture uses the sm_90+ instruction encodings and relocation types.
    pub fn is_sm90_or_later(self) -> bool {
        self.sm >= 90
    }
}

impl fmt::Display for SmArch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let suffix = match self.variant {
            ArchVariant::Base => "",
            ArchVariant::Specific => "a",
            ArchVariant::Family => "f",
        };
        write!(f, "sm_{}{}", self.sm, suffix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_display() {
        for s in ["sm_75", "sm_90a", "sm_100f", "sm_121"] {
            assert_eq!(SmArch::parse(s).unwrap().to_string(), s);
        }
        assert_eq!(SmArch::parse("compute_80").unwrap(), SmArch::new(80));
        assert_eq!(
            SmArch::parse("sm_90a").unwrap().virtual_name(),
            "compute_90a"
        );
        assert!(SmArch::parse("sm_").is_err());
        assert!(SmArch::parse("(null)").is_err());
    }

    #[test]
    fn the_targets_nvlink_links_for() {
        // nvlink 13.0.88 `-arch=` values, accepted or "not defined for option
        // 'arch'".
        for ok in [
            "sm_75", "sm_87", "sm_88", "sm_89", "sm_90a", "sm_100f", "sm_103a", "sm_110f",
            "sm_121a",
        ] {
            assert!(SmArch::parse(ok).unwrap().is_known_target(), "{ok}");
        }
        for bad in [
            "sm_50", "sm_72", "sm_75a", "sm_89f", "sm_90f", "sm_101", "sm_101a", "sm_102", "sm_122",
        ] {
            assert!(!SmArch::parse(bad).unwrap().is_known_target(), "{bad}");
        }
    }

    #[test]
    fn e_flags_layouts() {
        // Values from the seed's e_flags table and nvlink-facts §10.
        assert_eq!(SmArch::from_e_flags(8, 0x0600_5a04).sm, 90);
        assert_eq!(SmArch::from_e_flags(8, 0x0600_4b04).sm, 75);
        assert_eq!(SmArch::from_e_flags(8, 0x0600_6402).sm, 100);
        assert_eq!(SmArch::from_e_flags(8, 0x0600_7902).sm, 121);
        assert_eq!(SmArch::from_e_flags(7, 0x005a_055a).sm, 90);
    }
}
