//! Rules nvlink 13.0.88 applies only to Blackwell (sm_100 and later) links,
//! outside the Mercury section family (that is `mercury.rs`). Measured facts,
//! written down in `docs/blackwell.md`:
//!
//! - **Arch compatibility.** An input links into a target of the same SM
//!   whatever the `a`/`f` variants; into a *newer* SM of the same family
//!   (sm_100 → sm_103, sm_120 → sm_121, sm_80 → sm_86/89) unless the input
//!   was built for the arch-specific `a` variant. The variant is not in
//!   `e_flags`: ptxas records it in `.nv.compat` (`EICOMPAT_ATTR_CUDA_ACCELERATOR_TARGET`
//!   = 1 for `sm_XXa`); `sm_XXf` objects are identical to plain ones. A
//!   pre-Blackwell input in a Blackwell link first gets the warning "Output is
//!   limited to run on SM Arch 'NNN' only due to limitations in input file F",
//!   then the arch-mismatch error.
//! - **`.nv.compat`** of the output: the inputs' attributes, with
//!   `EICOMPAT_ATTR_CUDA_ACCELERATOR_TARGET` = 1 exactly when the *target* is an
//!   `a` variant, and `EICOMPAT_ATTR_CAN_FASTPATH_FINALIZE` kept (sm_90 and
//!   older drop it) with the value ptxas writes for the target SM.
//! - No `.nv.rel.action` section.

use crate::arch::{ArchVariant, SmArch};
use crate::cubin::compat::{self, EiCompat};
use crate::cubin::eiattr::{OwnedRecord, OwnedValue};
use crate::cubin::Cubin;
use crate::elf::SHT_CUDA_COMPAT;

/// The `a`/`f` variant an input was compiled for, as far as the object tells
/// (`f` objects are indistinguishable from plain ones: reported as `Base`).
pub(crate) fn input_variant(cubin: &Cubin<'_>) -> ArchVariant {
    let specific = cubin
        .sections
        .iter()
        .filter(|s| s.sh_type == SHT_CUDA_COMPAT)
        .filter_map(|s| compat::parse(s.data).ok())
        .flatten()
        .any(|r| {
            r.attr == EiCompat::EICOMPAT_ATTR_CUDA_ACCELERATOR_TARGET
                && r.int_value().is_some_and(|v| v != 0)
        });
    if specific {
        ArchVariant::Specific
    } else {
        ArchVariant::Base
    }
}

/// Whether an object built for `input` (with `variant`) may be linked into an
/// image for `target` (nvlink 13.0.88, measured over sm_75..sm_121 and the
/// `a`/`f` variants).
pub(crate) fn arch_compatible(input: SmArch, variant: ArchVariant, target: SmArch) -> bool {
    if input.sm == target.sm {
        return true;
    }
    input.sm / 10 == target.sm / 10 && input.sm < target.sm && variant != ArchVariant::Specific
}

/// The warning nvlink prints before rejecting a pre-Blackwell input in a
/// Blackwell link (`None` when it does not).
pub(crate) fn limited_output_warning(input: SmArch, target: SmArch, file: &str) -> Option<String> {
    (target.is_blackwell_or_later() && !input.is_blackwell_or_later()).then(|| {
        format!(
            "output is limited to run on SM Arch '{}' only due to limitations in input file '{file}'",
            target.sm
        )
    })
}

/// `EICOMPAT_ATTR_CAN_FASTPATH_FINALIZE` as ptxas 13.0.88 writes it for a
/// target SM (first byte of the 8-byte value; the rest is zero), which nvlink
/// keeps in Blackwell outputs: 0x09 for sm_100, 0x50 for sm_120, 0 otherwise
/// (sm_103, sm_110, sm_121). Measured: an sm_103 link of sm_100 objects writes 0.
pub(crate) fn fastpath_finalize_value(target: SmArch) -> [u8; 8] {
    let first = match target.sm {
        100 => 0x09,
        120 => 0x50,
        _ => 0,
    };
    [first, 0, 0, 0, 0, 0, 0, 0]
}

/// Applies the Blackwell rules to the merged `.nv.compat` records of the
/// output: the accelerator-target flag follows the target's variant, and the
/// fast-path finalization value is the target SM's. Nothing changes below sm_100.
pub(crate) fn adjust_compat(merged: &mut [OwnedRecord<EiCompat>], target: SmArch) {
    if !target.is_blackwell_or_later() {
        return;
    }
    for r in merged.iter_mut() {
        match r.attr {
            EiCompat::EICOMPAT_ATTR_CUDA_ACCELERATOR_TARGET => {
                r.value = OwnedValue::Byte(u8::from(target.variant == ArchVariant::Specific));
            }
            EiCompat::EICOMPAT_ATTR_CAN_FASTPATH_FINALIZE => {
                r.value = OwnedValue::Bytes(fastpath_finalize_value(target).to_vec());
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compat_matrix() {
        let s = SmArch::new;
        let (b, a) = (ArchVariant::Base, ArchVariant::Specific);
        assert!(arch_compatible(s(100), a, s(100)));
        assert!(arch_compatible(s(100), b, s(103)));
        assert!(!arch_compatible(s(100), a, s(103)));
        assert!(!arch_compatible(s(103), b, s(100)));
        assert!(arch_compatible(s(120), b, s(121)));
        assert!(!arch_compatible(s(100), b, s(110)));
        assert!(!arch_compatible(s(100), b, s(120)));
        assert!(!arch_compatible(s(90), b, s(100)));
        assert!(arch_compatible(s(80), b, s(86)));
        assert!(!arch_compatible(s(75), b, s(80)));
        assert!(limited_output_warning(s(90), s(100), "b.o").is_some());
        assert!(limited_output_warning(s(80), s(90), "b.o").is_none());
    }
}
