//! Kernel arguments: parsing the `args` tokens of a launch and marshalling them
//! into the `void **kernelParams` array of `cuLaunchKernel`.
//!
//! Tokens:
//! * `NAME` / `NAME+OFF` — device address of buffer `NAME` (plus `OFF` bytes);
//! * `global:NAME` / `global:NAME+OFF` — device address of module global `NAME`
//!   (`cuModuleGetGlobal`), so the same launch works on both cubins;
//! * `u8:V` `i8:V` `u16:V` `i16:V` `u32:V` `i32:V` `u64:V` `i64:V` `f32:V` `f64:V`
//!   — a scalar (little-endian; integers decimal or `0x` hex);
//! * `null` — a 64-bit zero pointer.
//!
//! The driver copies each parameter from the pointer given for it, reading as
//! many bytes as the kernel's parameter has; every value therefore lives in its
//! own 8-byte aligned slot.

use std::collections::HashMap;
use std::ffi::c_void;

/// One kernel argument.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// Address of a declared buffer plus a byte offset.
    Buffer(String, u64),
    /// Address of a module global plus a byte offset.
    Global(String, u64),
    /// Raw little-endian bytes (1, 2, 4 or 8).
    Scalar(Vec<u8>),
}

fn parse_int(v: &str) -> Result<i128, String> {
    let (neg, body) = match v.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, v),
    };
    let n = if let Some(h) = body.strip_prefix("0x") {
        i128::from_str_radix(h, 16)
    } else {
        body.parse::<i128>()
    }
    .map_err(|_| format!("`{v}` is not an integer"))?;
    Ok(if neg { -n } else { n })
}

fn split_offset(s: &str) -> Result<(&str, u64), String> {
    match s.split_once('+') {
        Some((n, off)) => {
            let o = parse_int(off)?;
            let o = u64::try_from(o).map_err(|_| format!("bad offset `{off}`"))?;
            Ok((n, o))
        }
        None => Ok((s, 0)),
    }
}

impl Arg {
    /// The bytes of scalar `kind:value` (also used by buffer initializers).
    pub fn parse_scalar(kind: &str, v: &str) -> Result<Vec<u8>, String> {
        let range = |lo: i128, hi: i128| -> Result<i128, String> {
            let n = parse_int(v)?;
            if (lo..=hi).contains(&n) {
                Ok(n)
            } else {
                Err(format!("`{v}` does not fit {kind}"))
            }
        };
        Ok(match kind {
            "u8" => vec![range(0, 0xff)? as u8],
            "i8" => (range(-0x80, 0x7f)? as i8).to_le_bytes().to_vec(),
            "u16" => (range(0, 0xffff)? as u16).to_le_bytes().to_vec(),
            "i16" => (range(-0x8000, 0x7fff)? as i16).to_le_bytes().to_vec(),
            "u32" => (range(0, u32::MAX.into())? as u32).to_le_bytes().to_vec(),
            "i32" => (range(i32::MIN.into(), i32::MAX.into())? as i32)
                .to_le_bytes()
                .to_vec(),
            "u64" => (range(0, u64::MAX.into())? as u64).to_le_bytes().to_vec(),
            "i64" => (range(i64::MIN.into(), i64::MAX.into())? as i64)
                .to_le_bytes()
                .to_vec(),
            "f32" => v
                .parse::<f32>()
                .map_err(|_| format!("`{v}` is not an f32"))?
                .to_le_bytes()
                .to_vec(),
            "f64" => v
                .parse::<f64>()
                .map_err(|_| format!("`{v}` is not an f64"))?
                .to_le_bytes()
                .to_vec(),
            _ => return Err(format!("unknown scalar type `{kind}`")),
        })
    }

    /// Parses one `args` token.
    pub fn parse(tok: &str) -> Result<Arg, String> {
        let wrap = |e: String| format!("argument `{tok}`: {e}");
        if tok == "null" {
            return Ok(Arg::Scalar(vec![0; 8]));
        }
        if let Some(rest) = tok.strip_prefix("global:") {
            let (n, off) = split_offset(rest).map_err(wrap)?;
            if n.is_empty() {
                return Err(wrap("empty global name".into()));
            }
            return Ok(Arg::Global(n.to_string(), off));
        }
        if let Some((kind, v)) = tok.split_once(':') {
            return Arg::parse_scalar(kind, v).map(Arg::Scalar).map_err(wrap);
        }
        let (n, off) = split_offset(tok).map_err(wrap)?;
        if !crate::launch::is_ident(n) {
            return Err(wrap(
                "not a buffer name, `global:NAME`, `null` or `TYPE:VALUE`".into(),
            ));
        }
        Ok(Arg::Buffer(n.to_string(), off))
    }

    /// The buffer this argument refers to, if any.
    pub fn buffer_name(&self) -> Option<&str> {
        match self {
            Arg::Buffer(n, _) => Some(n),
            _ => None,
        }
    }
}

/// Arguments resolved to bytes, and the pointer array `cuLaunchKernel` takes.
pub struct Marshalled {
    slots: Vec<u64>,
    ptrs: Vec<*mut c_void>,
}

impl Marshalled {
    /// Resolves `args`: buffers through `buffers` (name -> device address),
    /// globals through `global` (name -> device address).
    pub fn new(
        args: &[Arg],
        buffers: &HashMap<String, u64>,
        mut global: impl FnMut(&str) -> Result<u64, String>,
    ) -> Result<Marshalled, String> {
        let mut slots = Vec::with_capacity(args.len());
        for a in args {
            let v = match a {
                Arg::Buffer(n, off) => buffers
                    .get(n)
                    .map(|b| b + off)
                    .ok_or_else(|| format!("no buffer `{n}`"))?,
                Arg::Global(n, off) => global(n)? + off,
                Arg::Scalar(bytes) => {
                    let mut b = [0u8; 8];
                    b[..bytes.len()].copy_from_slice(bytes);
                    u64::from_le_bytes(b)
                }
            };
            slots.push(v);
        }
        let mut m = Marshalled {
            slots,
            ptrs: Vec::new(),
        };
        // The slots never move after this (the Vec is not touched again).
        m.ptrs = m
            .slots
            .iter_mut()
            .map(|s| (s as *mut u64).cast::<c_void>())
            .collect();
        Ok(m)
    }

    /// The value slots, one 8-byte little-endian word per argument.
    pub fn slots(&self) -> &[u64] {
        &self.slots
    }

    /// The `kernelParams` array.
    pub fn params(&mut self) -> &mut [*mut c_void] {
        &mut self.ptrs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars() {
        assert_eq!(Arg::parse("u8:255").unwrap(), Arg::Scalar(vec![255]));
        assert_eq!(Arg::parse("i8:-1").unwrap(), Arg::Scalar(vec![0xff]));
        assert_eq!(Arg::parse("i16:-2").unwrap(), Arg::Scalar(vec![0xfe, 0xff]));
        assert_eq!(
            Arg::parse("u32:0x10").unwrap(),
            Arg::Scalar(vec![16, 0, 0, 0])
        );
        assert_eq!(Arg::parse("i64:-1").unwrap(), Arg::Scalar(vec![0xff; 8]));
        assert_eq!(
            Arg::parse("f64:2.5").unwrap(),
            Arg::Scalar(2.5f64.to_le_bytes().to_vec())
        );
        assert!(Arg::parse("u8:256")
            .unwrap_err()
            .contains("does not fit u8"));
        assert!(Arg::parse("u32:-1").is_err());
        assert!(Arg::parse("f32:x").is_err());
        assert!(Arg::parse("q32:1")
            .unwrap_err()
            .contains("unknown scalar type"));
    }

    #[test]
    fn pointers() {
        assert_eq!(Arg::parse("out").unwrap(), Arg::Buffer("out".into(), 0));
        assert_eq!(
            Arg::parse("out+0x20").unwrap(),
            Arg::Buffer("out".into(), 32)
        );
        assert_eq!(
            Arg::parse("global:g+4").unwrap(),
            Arg::Global("g".into(), 4)
        );
        assert_eq!(Arg::parse("null").unwrap(), Arg::Scalar(vec![0; 8]));
        assert!(Arg::parse("global:").is_err());
        assert!(Arg::parse("a-b").is_err());
        assert!(Arg::parse("out+x").is_err());
    }

    #[test]
    fn marshalling_resolves_and_points_at_slots() {
        let args = [
            Arg::parse("out+8").unwrap(),
            Arg::parse("u32:7").unwrap(),
            Arg::parse("global:g+2").unwrap(),
            Arg::parse("i16:-1").unwrap(),
        ];
        let bufs = HashMap::from([("out".to_string(), 0x7000_0000u64)]);
        let mut m = Marshalled::new(&args, &bufs, |n| {
            assert_eq!(n, "g");
            Ok(0x100)
        })
        .unwrap();
        assert_eq!(m.slots(), &[0x7000_0008, 7, 0x102, 0xffff]);
        let slots: Vec<u64> = m.slots().to_vec();
        let p = m.params();
        assert_eq!(p.len(), 4);
        for (ptr, want) in p.iter().zip(slots) {
            assert_eq!(ptr.align_offset(8), 0);
            // SAFETY: each pointer points at its live u64 slot.
            assert_eq!(unsafe { *(*ptr as *const u64) }, want);
        }
        let e = Marshalled::new(&[Arg::Global("h".into(), 0)], &bufs, |n| {
            Err(format!("no global {n}"))
        });
        assert_eq!(e.err().unwrap(), "no global h");
        let e = Marshalled::new(&[Arg::Buffer("zz".into(), 0)], &bufs, |_| Ok(0));
        assert_eq!(e.err().unwrap(), "no buffer `zz`");
    }
}
