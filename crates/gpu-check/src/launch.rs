//! `launch.txt`: what to run for one case.
//!
//! One directive per line; `#` starts a comment (to the end of the line).
//!
//! ```text
//! limit stack 16384              # cuCtxSetLimit: stack | printf-fifo | malloc-heap | pending-launches
//! buffer out 4096                # device buffer: name, bytes, optional init
//! buffer in 64 iota32            # init: zero | fill:0xAB | iota32 | u32:1,2,3 | i32:.. | u64:.. | f32:.. | f64:..
//! launch k grid 4 block 128 shared 0 args out in u32:7 f32:1.5
//! launch k2 grid 2,2 block 32,4 args out+16 global:table null
//! code-pointers vtab fn_table    # globals holding code addresses: compared by consistent pairing
//! skip-global scratch            # do not compare this global (say why in a comment)
//! printf sorted                  # compare device printf output as sorted lines (default: exact)
//! timeout 20                     # seconds per linker run (default 20)
//! ```
//!
//! `launch` takes the kernel name, then keyword/value pairs in any order
//! (`grid` and `block`: `X[,Y[,Z]]`; `shared`: dynamic shared bytes, default 0),
//! and `args` last, followed by the kernel's parameters in order (see
//! [`crate::args::Arg`]). Launches run in file order, each followed by
//! `cuCtxSynchronize`.

use crate::args::Arg;
use crate::driver::Limit;

/// A device buffer declared with `buffer`.
#[derive(Debug, Clone, PartialEq)]
pub struct Buffer {
    /// Its name, used by `args`.
    pub name: String,
    /// Its initial contents (its length is the buffer's size).
    pub init: Vec<u8>,
}

/// One kernel launch.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    /// The kernel's (mangled) name.
    pub kernel: String,
    /// Grid dimensions.
    pub grid: [u32; 3],
    /// Block dimensions.
    pub block: [u32; 3],
    /// Dynamic shared memory bytes.
    pub shared: u32,
    /// The kernel's parameters.
    pub args: Vec<Arg>,
    /// 1-based line in `launch.txt`.
    pub line: usize,
}

/// How device `printf` output is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PrintfMode {
    /// Byte for byte.
    #[default]
    Exact,
    /// As sorted lines (many threads print in an unspecified order).
    Sorted,
}

/// A parsed `launch.txt`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LaunchFile {
    /// `limit` directives, applied before the module is loaded.
    pub limits: Vec<(Limit, usize)>,
    /// Buffers, in declaration order.
    pub buffers: Vec<Buffer>,
    /// Launches, in order.
    pub launches: Vec<Launch>,
    /// Globals not compared.
    pub skip_globals: Vec<String>,
    /// Globals holding code addresses (see [`crate::dump`]).
    pub code_pointers: Vec<String>,
    /// How printf output is compared.
    pub printf: PrintfMode,
    /// Seconds allowed per linker run (default 20: the runs take well under a
    /// second; a hung kernel must not eat the GPU session's time).
    pub timeout_s: u64,
}

/// Largest buffer `buffer` accepts (256 MiB).
pub const MAX_BUFFER: usize = 256 << 20;

fn parse_uint(s: &str) -> Result<u64, String> {
    let r = if let Some(h) = s.strip_prefix("0x") {
        u64::from_str_radix(h, 16)
    } else {
        s.parse::<u64>()
    };
    r.map_err(|_| format!("`{s}` is not an unsigned integer"))
}

fn parse_dims(s: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("bad dimensions `{s}` (X[,Y[,Z]])"));
    }
    let mut d = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        let v = parse_uint(p)?;
        if v == 0 || v > u64::from(u32::MAX) {
            return Err(format!("bad dimension `{p}` in `{s}`"));
        }
        d[i] = v as u32;
    }
    Ok(d)
}

/// Parses a buffer's initial contents of `size` bytes.
pub fn parse_init(size: usize, spec: Option<&str>) -> Result<Vec<u8>, String> {
    let mut v = vec![0u8; size];
    let Some(spec) = spec else { return Ok(v) };
    if spec == "zero" {
        return Ok(v);
    }
    if spec == "iota32" {
        for (i, c) in v.chunks_mut(4).enumerate() {
            let b = (i as u32).to_le_bytes();
            c.copy_from_slice(&b[..c.len()]);
        }
        return Ok(v);
    }
    let (kind, list) = spec
        .split_once(':')
        .ok_or_else(|| format!("bad buffer init `{spec}`"))?;
    if kind == "fill" {
        let b = parse_uint(list)?;
        let b = u8::try_from(b).map_err(|_| format!("fill byte `{list}` is over 0xff"))?;
        v.fill(b);
        return Ok(v);
    }
    let mut bytes = Vec::new();
    for item in list.split(',') {
        let a = Arg::parse_scalar(kind, item)?;
        bytes.extend_from_slice(&a);
    }
    if bytes.len() > size {
        return Err(format!(
            "buffer init `{spec}` has {} bytes, more than the buffer's {size}",
            bytes.len()
        ));
    }
    v[..bytes.len()].copy_from_slice(&bytes);
    Ok(v)
}

fn parse_limit(name: &str) -> Result<Limit, String> {
    Ok(match name {
        "stack" => Limit::Stack,
        "printf-fifo" => Limit::PrintfFifo,
        "malloc-heap" => Limit::MallocHeap,
        "pending-launches" => Limit::PendingLaunches,
        _ => return Err(format!("unknown limit `{name}`")),
    })
}

impl LaunchFile {
    /// Parses the text of a `launch.txt`; errors carry `what:line:`.
    pub fn parse(text: &str, what: &str) -> Result<LaunchFile, String> {
        let mut f = LaunchFile {
            timeout_s: 20,
            ..LaunchFile::default()
        };
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let body = raw.split('#').next().unwrap_or("").trim();
            if body.is_empty() {
                continue;
            }
            let toks: Vec<&str> = body.split_whitespace().collect();
            f.directive(&toks, line)
                .map_err(|e| format!("{what}:{line}: {e}"))?;
        }
        if f.launches.is_empty() {
            return Err(format!("{what}: no `launch` line"));
        }
        Ok(f)
    }

    fn directive(&mut self, t: &[&str], line: usize) -> Result<(), String> {
        match t[0] {
            "limit" => {
                let [_, name, value] = t else {
                    return Err("usage: limit NAME BYTES".into());
                };
                self.limits
                    .push((parse_limit(name)?, parse_uint(value)? as usize));
            }
            "buffer" => {
                if !(3..=4).contains(&t.len()) {
                    return Err("usage: buffer NAME BYTES [INIT]".into());
                }
                let name = t[1];
                if !is_ident(name) {
                    return Err(format!("bad buffer name `{name}`"));
                }
                if self.buffers.iter().any(|b| b.name == name) {
                    return Err(format!("buffer `{name}` declared twice"));
                }
                let size = parse_uint(t[2])? as usize;
                if size == 0 || size > MAX_BUFFER {
                    return Err(format!("buffer size {size} not in 1..={MAX_BUFFER}"));
                }
                let init = parse_init(size, t.get(3).copied())?;
                self.buffers.push(Buffer {
                    name: name.to_string(),
                    init,
                });
            }
            "launch" => {
                let kernel = t
                    .get(1)
                    .ok_or("usage: launch KERNEL grid G block B args ...")?;
                let mut l = Launch {
                    kernel: kernel.to_string(),
                    grid: [1; 3],
                    block: [1; 3],
                    shared: 0,
                    args: Vec::new(),
                    line,
                };
                let mut k = 2;
                while k < t.len() {
                    let key = t[k];
                    if key == "args" {
                        for a in &t[k + 1..] {
                            let arg = Arg::parse(a)?;
                            if let Some(b) = arg.buffer_name() {
                                if !self.buffers.iter().any(|x| x.name == b) {
                                    return Err(format!(
                                        "argument `{a}`: no buffer `{b}` declared above"
                                    ));
                                }
                            }
                            l.args.push(arg);
                        }
                        break;
                    }
                    let v = t.get(k + 1).ok_or(format!("`{key}` needs a value"))?;
                    match key {
                        "grid" => l.grid = parse_dims(v)?,
                        "block" => l.block = parse_dims(v)?,
                        "shared" => {
                            l.shared = u32::try_from(parse_uint(v)?)
                                .map_err(|_| format!("shared `{v}` too large"))?;
                        }
                        _ => return Err(format!("unknown launch keyword `{key}`")),
                    }
                    k += 2;
                }
                self.launches.push(l);
            }
            "skip-global" => {
                if t.len() < 2 {
                    return Err("usage: skip-global NAME...".into());
                }
                self.skip_globals
                    .extend(t[1..].iter().map(|s| s.to_string()));
            }
            "code-pointers" => {
                if t.len() < 2 {
                    return Err("usage: code-pointers NAME...".into());
                }
                self.code_pointers
                    .extend(t[1..].iter().map(|s| s.to_string()));
            }
            "printf" => {
                self.printf = match t {
                    [_, "exact"] => PrintfMode::Exact,
                    [_, "sorted"] => PrintfMode::Sorted,
                    _ => return Err("usage: printf exact|sorted".into()),
                };
            }
            "timeout" => {
                let [_, s] = t else {
                    return Err("usage: timeout SECONDS".into());
                };
                self.timeout_s = parse_uint(s)?.max(1);
            }
            other => return Err(format!("unknown directive `{other}`")),
        }
        Ok(())
    }
}

/// `[A-Za-z_][A-Za-z0-9_]*`.
pub fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
# a comment
limit stack 0x4000
limit malloc-heap 8388608
buffer out 16            # zeroed
buffer in 8 u32:7,9
buffer pat 6 fill:0xab
buffer ids 10 iota32
launch k grid 4 block 128 shared 256 args out in u32:7 f32:1.5
launch _Z2k2Pi grid 2,3 block 32,4,2 args out+8 global:tab null u64:0x10
skip-global tab other
code-pointers vt
printf sorted
timeout 5
";

    #[test]
    fn parses_every_directive() {
        let f = LaunchFile::parse(SAMPLE, "t").unwrap();
        assert_eq!(
            f.limits,
            vec![(Limit::Stack, 0x4000), (Limit::MallocHeap, 8 << 20)]
        );
        assert_eq!(f.buffers.len(), 4);
        assert_eq!(f.buffers[0].init, vec![0; 16]);
        assert_eq!(f.buffers[1].init, vec![7, 0, 0, 0, 9, 0, 0, 0]);
        assert_eq!(f.buffers[2].init, vec![0xab; 6]);
        assert_eq!(f.buffers[3].init, vec![0, 0, 0, 0, 1, 0, 0, 0, 2, 0]);
        assert_eq!(f.launches.len(), 2);
        let l = &f.launches[0];
        assert_eq!(
            (l.grid, l.block, l.shared, l.line),
            ([4, 1, 1], [128, 1, 1], 256, 8)
        );
        assert_eq!(
            l.args,
            vec![
                Arg::Buffer("out".into(), 0),
                Arg::Buffer("in".into(), 0),
                Arg::Scalar(7u32.to_le_bytes().to_vec()),
                Arg::Scalar(1.5f32.to_le_bytes().to_vec()),
            ]
        );
        let l = &f.launches[1];
        assert_eq!(
            (l.kernel.as_str(), l.grid, l.block),
            ("_Z2k2Pi", [2, 3, 1], [32, 4, 2])
        );
        assert_eq!(
            l.args,
            vec![
                Arg::Buffer("out".into(), 8),
                Arg::Global("tab".into(), 0),
                Arg::Scalar(vec![0; 8]),
                Arg::Scalar(16u64.to_le_bytes().to_vec()),
            ]
        );
        assert_eq!(f.skip_globals, vec!["tab", "other"]);
        assert_eq!(f.code_pointers, vec!["vt"]);
        assert_eq!(f.printf, PrintfMode::Sorted);
        assert_eq!(f.timeout_s, 5);
    }

    #[test]
    fn defaults() {
        let f = LaunchFile::parse("launch k", "t").unwrap();
        assert_eq!(f.launches[0].grid, [1, 1, 1]);
        assert_eq!(f.printf, PrintfMode::Exact);
        assert_eq!(f.timeout_s, 20);
    }

    #[test]
    fn errors_name_the_line() {
        for (text, want) in [
            ("", "t: no `launch` line"),
            ("bogus 1", "t:1: unknown directive `bogus`"),
            (
                "launch k args nope",
                "t:1: argument `nope`: no buffer `nope` declared above",
            ),
            ("\nbuffer b 0", "t:2: buffer size 0"),
            ("buffer b 4\nbuffer b 4", "t:2: buffer `b` declared twice"),
            (
                "buffer b 4 u32:1,2",
                "t:1: buffer init `u32:1,2` has 8 bytes",
            ),
            ("launch k grid 0", "t:1: bad dimension `0`"),
            ("launch k grid 1,2,3,4", "t:1: bad dimensions"),
            ("launch k block", "t:1: `block` needs a value"),
            ("launch k color 3", "t:1: unknown launch keyword `color`"),
            ("limit heap 1", "t:1: unknown limit `heap`"),
            ("printf maybe", "t:1: usage: printf"),
            ("buffer 9x 4", "t:1: bad buffer name `9x`"),
            ("buffer b 4 fill:0x100", "t:1: fill byte"),
            ("launch k args u32:-1", "t:1: "),
        ] {
            let e = LaunchFile::parse(text, "t").unwrap_err();
            assert!(e.starts_with(want), "{text:?}: got {e:?}, want {want:?}");
        }
    }
}
