//! `-ghls` / `--gen-host-linker-script`: the host linker scripts nvlink
//! writes instead of linking, so that the host link keeps the fatbinary
//! sections nvcc's objects carry.
//!
//! `lcs-aug` is a fixed script that augments the host linker's default one;
//! `lcs-abs` is that default script itself (what `ld --verbose` prints for
//! the options the host compiler passes to the linker: `-pie`, `-z ...`,
//! `-m ...`) followed by the same sections. Both byte for byte as nvlink
//! 13.0.88 writes them; nvlink runs the same shell pipeline for `lcs-abs`.

use crate::output::AtomicOutput;
use std::io;
use std::path::Path;
use std::process::Command;

/// The `lcs-aug` script (and the tail of `lcs-abs`), as nvlink writes it
/// (including the blank after the second rule).
pub const AUGMENT: &str = "SECTIONS\n{\n\t.nvFatBinSegment : { *(.nvFatBinSegment) }\n\t__nv_relfatbin : { *(__nv_relfatbin) } \n\t.nv_fatbin : { *(.nv_fatbin) }\n}\n";

/// The shell pipeline nvlink 13.0.88 runs for `lcs-abs` (traced), with the
/// host compiler in place of `HOSTCC`: the linker options the compiler passes
/// select `ld`'s default script, printed without `ld --verbose`'s banner.
fn default_script_command(host_compiler: &str) -> String {
    format!(
        "ld --verbose $({host_compiler} -### /dev/null  -m64  2>&1 | grep collect2  | grep -wo -e -pie -e \"-z [^[:space:]]*\" -e \"-m [^[:space:]]*\" -e -r -e -shared  | tr \"\\n\" \" \" ) | grep -Fvx -e \"$(ld -V)\" | sed '1,2d;$d'"
    )
}

/// Writes the script to `output` (atomically: an existing file stays as it
/// was on failure).
pub fn write(absolute: bool, output: &Path, host_compiler: &str) -> Result<(), String> {
    let mut text = String::new();
    if absolute {
        let out = Command::new("sh")
            .arg("-c")
            .arg(default_script_command(host_compiler))
            .output()
            .map_err(|e| format!("-ghls=lcs-abs: cannot run sh: {e}"))?;
        let script = String::from_utf8_lossy(&out.stdout);
        // A failed pipeline prints nothing (or no script).
        if !out.status.success() || !script.contains("SECTIONS") {
            return Err(format!(
                "-ghls=lcs-abs: could not get the host linker's default script from 'ld --verbose' (host compiler '{host_compiler}')"
            ));
        }
        text.push_str(&script);
    }
    text.push_str(AUGMENT);
    let mut file = AtomicOutput::new(output);
    file.write_all(text.as_bytes())
        .and_then(|()| file.commit())
        .map_err(|e: io::Error| format!("{}: {e}", output.display()))
}
