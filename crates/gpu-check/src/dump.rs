//! What one run of one cubin left in device memory, and comparing two such runs.
//!
//! A [`Dump`] holds named regions — `before global NAME` (right after the module
//! load), then after every launch `launch N `KERNEL`: buffer NAME` and
//! `launch N `KERNEL`: global NAME` — with their device address and bytes (or why
//! they could not be read), and the launch errors. [`compare`] reports the
//! differences of the first launch after which the runs disagree (naming the
//! kernel) and counts the later ones. Runs happen in separate processes and the two modules sit at
//! different addresses, so before comparing, every 8-byte aligned word whose value
//! points into a region of the same dump (`addr <= v <= addr + len`) is compared
//! as `(region, offset)` instead of as bytes: an initialized pointer to
//! `global b + 8` matches in both cubins wherever `b` was placed.
//!
//! Code addresses (function-pointer tables, vtables) cannot be named that way: the
//! driver API does not tell where a module's functions are, and culink may lay
//! out `.text` differently from nvlink. Globals declared `code-pointers` in the
//! launch file are compared word by word under a *consistent pairing*: the first
//! time culink's word `x` meets nvlink's word `y` they are paired, and every other
//! occurrence of `x` (in any code-pointer global) must meet `y` and vice versa —
//! so a swapped, duplicated or missing table entry is still caught, while the
//! placement of the functions is not compared.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

/// One named region of device memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// `before global NAME`, `launch N `KERNEL`: buffer NAME` or
    /// `launch N `KERNEL`: global NAME` (also plain `buffer NAME` / `global NAME`).
    pub name: String,
    /// Device address.
    pub addr: u64,
    /// Contents, or why they could not be read.
    pub data: Result<Vec<u8>, String>,
}

/// Everything one run produced, except printf output (the child's stdout).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Dump {
    /// Regions, in the order read.
    pub regions: Vec<Region>,
    /// Launches that completed.
    pub launches_ok: usize,
    /// The first failure (a launch or a read), if any.
    pub error: Option<String>,
}

const MAGIC: &[u8; 8] = b"GCDUMP1\n";

fn put_str(v: &mut Vec<u8>, s: &str) {
    v.extend_from_slice(&(s.len() as u64).to_le_bytes());
    v.extend_from_slice(s.as_bytes());
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.0.len() < n {
            return Err("dump truncated".into());
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u64(&mut self) -> Result<u64, String> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(
            b.try_into().map_err(|_| "dump truncated")?,
        ))
    }
    fn bytes(&mut self) -> Result<Vec<u8>, String> {
        let n = usize::try_from(self.u64()?).map_err(|_| "dump corrupt")?;
        Ok(self.take(n)?.to_vec())
    }
    fn string(&mut self) -> Result<String, String> {
        String::from_utf8(self.bytes()?).map_err(|_| "dump has a non-UTF-8 string".into())
    }
}

impl Dump {
    /// Serializes (little-endian, length-prefixed; read back by [`Dump::decode`]).
    pub fn encode(&self) -> Vec<u8> {
        let mut v = MAGIC.to_vec();
        v.extend_from_slice(&(self.launches_ok as u64).to_le_bytes());
        match &self.error {
            Some(e) => {
                v.push(1);
                put_str(&mut v, e);
            }
            None => v.push(0),
        }
        v.extend_from_slice(&(self.regions.len() as u64).to_le_bytes());
        for r in &self.regions {
            put_str(&mut v, &r.name);
            v.extend_from_slice(&r.addr.to_le_bytes());
            match &r.data {
                Ok(d) => {
                    v.push(1);
                    v.extend_from_slice(&(d.len() as u64).to_le_bytes());
                    v.extend_from_slice(d);
                }
                Err(e) => {
                    v.push(0);
                    put_str(&mut v, e);
                }
            }
        }
        v
    }

    /// Parses what [`Dump::encode`] wrote.
    pub fn decode(b: &[u8]) -> Result<Dump, String> {
        let mut r = Reader(b);
        if r.take(8)? != MAGIC {
            return Err("not a gpu-check dump".into());
        }
        let launches_ok = r.u64()? as usize;
        let error = match r.take(1)?[0] {
            0 => None,
            _ => Some(r.string()?),
        };
        let n = r.u64()?;
        let mut regions = Vec::new();
        for _ in 0..n {
            let name = r.string()?;
            let addr = r.u64()?;
            let data = match r.take(1)?[0] {
                0 => Err(r.string()?),
                _ => Ok(r.bytes()?),
            };
            regions.push(Region { name, addr, data });
        }
        if !r.0.is_empty() {
            return Err("trailing bytes after dump".into());
        }
        Ok(Dump {
            regions,
            launches_ok,
            error,
        })
    }

    /// Total bytes of readable regions.
    pub fn bytes(&self) -> usize {
        self.regions
            .iter()
            .filter_map(|r| r.data.as_ref().ok())
            .map(Vec::len)
            .sum()
    }

    /// The address map used to name pointers: (addr, len, label), sorted by
    /// address, one entry per memory object (`before global X` and the snapshots
    /// `launch N ...: global X` are all `global X`).
    fn targets(&self) -> Vec<(u64, u64, &str)> {
        let mut t: Vec<(u64, u64, &str)> = self
            .regions
            .iter()
            .filter_map(|r| {
                r.data
                    .as_ref()
                    .ok()
                    .map(|d| (r.addr, d.len() as u64, base_name(&r.name)))
            })
            .filter(|&(a, l, _)| a != 0 && l != 0)
            .collect();
        t.sort();
        t.dedup();
        t
    }
}

/// The memory object a region name shows: `global X` or `buffer X`.
fn base_name(name: &str) -> &str {
    let n = name.rsplit(": ").next().unwrap_or(name);
    n.strip_prefix("before ").unwrap_or(n)
}

/// The launch a snapshot region belongs to (`launch N ...`), if any.
fn launch_of(name: &str) -> Option<usize> {
    let rest = name.strip_prefix("launch ")?;
    rest.split(' ').next()?.parse().ok()
}

/// `v` as `(label, offset)` when it points into (or one past the end of) a region.
fn name_pointer<'a>(targets: &[(u64, u64, &'a str)], v: u64) -> Option<(&'a str, u64)> {
    // Prefer a region that strictly contains v (an end pointer of one region can
    // be the start of the next).
    let inside = targets
        .iter()
        .find(|&&(a, l, _)| v >= a && v - a < l)
        .or_else(|| targets.iter().find(|&&(a, l, _)| v >= a && v - a == l));
    inside.map(|&(a, _, n)| (n, v - a))
}

fn word(d: &[u8], off: usize) -> Option<u64> {
    d.get(off..off + 8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
}

/// The pairing of code addresses between the two runs (see the module docs).
#[derive(Default)]
struct CodePairs {
    fwd: HashMap<u64, (u64, String)>,
    back: HashMap<u64, (u64, String)>,
}

impl CodePairs {
    /// Pairs `a` with `b` at `place`; the conflict, if any.
    fn pair(&mut self, a: u64, b: u64, place: &str, labels: (&str, &str)) -> Option<String> {
        if let Some((b0, p0)) = self.fwd.get(&a) {
            if *b0 != b {
                return Some(format!(
                    "{place}: code pointer 0x{a:x} ({}) is 0x{b:x} ({}) here but 0x{b0:x} at {p0}",
                    labels.0, labels.1
                ));
            }
        }
        if let Some((a0, p0)) = self.back.get(&b) {
            if *a0 != a {
                return Some(format!(
                    "{place}: code pointer 0x{b:x} ({}) is 0x{a:x} ({}) here but 0x{a0:x} at {p0}",
                    labels.1, labels.0
                ));
            }
        }
        self.fwd.insert(a, (b, place.to_string()));
        self.back.insert(b, (a, place.to_string()));
        None
    }
}

/// An address map entry: (address, length, region name).
type Target<'a> = (u64, u64, &'a str);
/// One side of a region comparison: its bytes, its address, its dump's targets.
type Side<'a> = (&'a [u8], u64, &'a [Target<'a>]);

/// Compares one region's bytes; `Some(description)` of the first difference.
/// `code`: the region holds code pointers, paired through `pairs`.
fn compare_region(
    name: &str,
    (da, addr_a, ta): Side<'_>,
    (db, addr_b, tb): Side<'_>,
    labels: (&str, &str),
    code: Option<&mut CodePairs>,
) -> Option<String> {
    let mut code = code;
    if da.len() != db.len() {
        return Some(format!(
            "{name}: size {} in {}'s cubin, {} in {}'s",
            da.len(),
            labels.0,
            db.len(),
            labels.1
        ));
    }
    let mut off = 0;
    while off < da.len() {
        // An 8-byte word aligned on the device in both runs: compare as pointers
        // when both values point into their dump's regions.
        let aligned = (addr_a + off as u64) & 7 == 0 && (addr_b + off as u64) & 7 == 0;
        if aligned {
            if let (Some(wa), Some(wb)) = (word(da, off), word(db, off)) {
                let pa = name_pointer(ta, wa);
                let pb = name_pointer(tb, wb);
                if let (Some(pa), Some(pb)) = (pa, pb) {
                    if pa != pb {
                        return Some(format!(
                            "{name}: first difference at byte {off} (0x{off:x}): pointer to `{}`+{} ({}) vs `{}`+{} ({})",
                            pa.0, pa.1, labels.0, pb.0, pb.1, labels.1
                        ));
                    }
                    off += 8;
                    continue;
                }
                if let Some(pairs) = code.as_deref_mut() {
                    if pa.is_none() && pb.is_none() {
                        let place = format!("{name} byte {off}");
                        if let Some(c) = pairs.pair(wa, wb, &place, labels) {
                            return Some(c);
                        }
                        off += 8;
                        continue;
                    }
                }
                if wa == wb {
                    off += 8;
                    continue;
                }
            }
        }
        if da[off] != db[off] {
            return Some(format!(
                "{name}: first difference at byte {off} (0x{off:x}): 0x{:02x} ({}) vs 0x{:02x} ({})",
                da[off], labels.0, db[off], labels.1
            ));
        }
        off += 1;
    }
    None
}

/// Compares two runs. `labels` name the two sides in messages, e.g.
/// `("culink", "nvlink")`; `code_globals` are the globals holding code pointers
/// (compared by consistent pairing). Returns the differences of the run as a
/// whole, of the initial globals and of the first launch after which the runs
/// disagree, in region order, then a count of the later ones.
pub fn compare(a: &Dump, b: &Dump, labels: (&str, &str), code_globals: &[String]) -> Vec<String> {
    let all = compare_all(a, b, labels, code_globals);
    let first = all.iter().filter_map(|(l, _)| *l).min();
    let mut out = Vec::new();
    let mut later = 0;
    for (l, m) in all {
        match l {
            Some(l) if Some(l) != first => later += 1,
            _ => out.push(m),
        }
    }
    if later > 0 {
        out.push(format!(
            "... and {later} more difference(s) after later launches"
        ));
    }
    out
}

/// Every difference, with the launch of its snapshot (`None`: not a snapshot).
fn compare_all(
    a: &Dump,
    b: &Dump,
    labels: (&str, &str),
    code_globals: &[String],
) -> Vec<(Option<usize>, String)> {
    let mut out: Vec<(Option<usize>, String)> = Vec::new();
    let mut pairs = CodePairs::default();
    let is_code = |name: &str| {
        base_name(name)
            .strip_prefix("global ")
            .is_some_and(|g| code_globals.iter().any(|c| c == g))
    };
    if a.launches_ok != b.launches_ok || a.error != b.error {
        let show = |d: &Dump| match &d.error {
            Some(e) => format!("{} launch(es) ok, then: {e}", d.launches_ok),
            None => format!("{} launch(es) ok", d.launches_ok),
        };
        out.push((
            None,
            format!(
                "runs differ: {}: {}; {}: {}",
                labels.0,
                show(a),
                labels.1,
                show(b)
            ),
        ));
    }
    let (ta, tb) = (a.targets(), b.targets());
    let mut names: BTreeMap<&str, (Option<&Region>, Option<&Region>)> = BTreeMap::new();
    for r in &a.regions {
        names.entry(&r.name).or_default().0 = Some(r);
    }
    for r in &b.regions {
        names.entry(&r.name).or_default().1 = Some(r);
    }
    // Report in a's order, then b-only names.
    let mut order: Vec<&str> = a.regions.iter().map(|r| r.name.as_str()).collect();
    order.extend(
        b.regions
            .iter()
            .map(|r| r.name.as_str())
            .filter(|n| names.get(n).is_some_and(|p| p.0.is_none())),
    );
    for name in order {
        let Some(&(ra, rb)) = names.get(name) else {
            continue;
        };
        match (ra, rb) {
            (Some(ra), Some(rb)) => match (&ra.data, &rb.data) {
                (Ok(da), Ok(db)) => {
                    let code = if is_code(name) {
                        Some(&mut pairs)
                    } else {
                        None
                    };
                    if let Some(d) =
                        compare_region(name, (da, ra.addr, &ta), (db, rb.addr, &tb), labels, code)
                    {
                        out.push((launch_of(name), d));
                    }
                }
                (Err(ea), Err(eb)) if ea == eb => {}
                (x, y) => {
                    let s = |r: &Result<Vec<u8>, String>| match r {
                        Ok(d) => format!("{} bytes", d.len()),
                        Err(e) => format!("unreadable ({e})"),
                    };
                    out.push((
                        launch_of(name),
                        format!(
                            "{name}: {} in {}'s cubin, {} in {}'s",
                            s(x),
                            labels.0,
                            s(y),
                            labels.1
                        ),
                    ));
                }
            },
            (Some(_), None) => out.push((
                launch_of(name),
                format!("{name}: only in {}'s cubin", labels.0),
            )),
            (None, Some(_)) => out.push((
                launch_of(name),
                format!("{name}: only in {}'s cubin", labels.1),
            )),
            (None, None) => {}
        }
        names.remove(name);
    }
    out
}

/// Compares printf output; `sorted` compares sorted lines.
pub fn compare_printf(a: &str, b: &str, sorted: bool, labels: (&str, &str)) -> Option<String> {
    let norm = |s: &str| -> Vec<String> {
        let mut v: Vec<String> = s.lines().map(String::from).collect();
        if sorted {
            v.sort();
        }
        v
    };
    let (la, lb) = (norm(a), norm(b));
    if la == lb && (sorted || a == b) {
        return None;
    }
    let i = la.iter().zip(&lb).take_while(|(x, y)| x == y).count();
    let mut s = format!(
        "printf output differs ({} lines from {}, {} from {}){}: first at line {}",
        la.len(),
        labels.0,
        lb.len(),
        labels.1,
        if sorted { " (sorted)" } else { "" },
        i + 1
    );
    let _ = write!(
        s,
        ": {:?} vs {:?}",
        la.get(i).map_or("<end>", |x| x.as_str()),
        lb.get(i).map_or("<end>", |x| x.as_str())
    );
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(name: &str, addr: u64, data: Vec<u8>) -> Region {
        Region {
            name: name.into(),
            addr,
            data: Ok(data),
        }
    }

    fn ptr_dump(base: u64, target_off: u64) -> Dump {
        // `global p` holds a pointer to `global b` + target_off.
        let mut p = (base + 0x100 + target_off).to_le_bytes().to_vec();
        p.extend_from_slice(&[1, 2, 3, 4]);
        Dump {
            regions: vec![
                region("global p", base, p),
                region("global b", base + 0x100, vec![9; 16]),
                region("buffer out", 0x7000_0000 + base, vec![5; 4]),
            ],
            launches_ok: 1,
            error: None,
        }
    }

    #[test]
    fn round_trip() {
        let mut d = ptr_dump(0x1000, 8);
        d.regions.push(Region {
            name: "global q".into(),
            addr: 0,
            data: Err("CUDA_ERROR_NOT_FOUND".into()),
        });
        d.error = Some("launch 2 failed".into());
        assert_eq!(Dump::decode(&d.encode()).unwrap(), d);
        let e = d.encode();
        assert!(Dump::decode(&e[..e.len() - 1]).is_err());
        assert!(Dump::decode(b"nope").is_err());
        assert_eq!(d.bytes(), 12 + 16 + 4);
    }

    #[test]
    fn pointers_compare_by_target() {
        let a = ptr_dump(0x1000, 8);
        let b = ptr_dump(0x9000, 8);
        assert_eq!(
            compare(&a, &b, ("culink", "nvlink"), &[]),
            Vec::<String>::new()
        );
        // End pointer (one past the end) also names its region.
        let a = ptr_dump(0x1000, 16);
        let b = ptr_dump(0x9000, 16);
        assert!(compare(&a, &b, ("culink", "nvlink"), &[]).is_empty());
        let c = ptr_dump(0x9000, 4);
        let d = compare(&a, &c, ("culink", "nvlink"), &[]);
        assert_eq!(
            d,
            vec!["global p: first difference at byte 0 (0x0): pointer to `global b`+16 (culink) vs `global b`+4 (nvlink)"]
        );
    }

    #[test]
    fn bytes_and_shapes() {
        let a = ptr_dump(0x1000, 8);
        let mut b = ptr_dump(0x1000, 8);
        if let Ok(d) = &mut b.regions[2].data {
            d[3] = 6;
        }
        b.regions.push(region("global extra", 0x5000, vec![0]));
        b.regions[1].data = Err("CUDA_ERROR_NOT_FOUND".into());
        b.launches_ok = 0;
        b.error = Some("cuLaunchKernel failed".into());
        let d = compare(&a, &b, ("culink", "nvlink"), &[]);
        assert_eq!(d.len(), 4, "{d:#?}");
        assert!(d[0].starts_with("runs differ: culink: 1 launch(es) ok; nvlink: 0 launch(es) ok, then: cuLaunchKernel failed"));
        // `global p` holds the same raw word in both (same base): equal.
        assert_eq!(
            d[1],
            "global b: 16 bytes in culink's cubin, unreadable (CUDA_ERROR_NOT_FOUND) in nvlink's"
        );
        assert_eq!(
            d[2],
            "buffer out: first difference at byte 3 (0x3): 0x05 (culink) vs 0x06 (nvlink)"
        );
        assert_eq!(d[3], "global extra: only in nvlink's cubin");
        let mut c = ptr_dump(0x1000, 8);
        c.regions[2].data = Ok(vec![5; 3]);
        assert_eq!(
            compare(&a, &c, ("x", "y"), &[]),
            vec!["buffer out: size 4 in x's cubin, 3 in y's"]
        );
    }

    fn table(words: &[u64]) -> Dump {
        let mut v = Vec::new();
        for w in words {
            v.extend_from_slice(&w.to_le_bytes());
        }
        Dump {
            regions: vec![
                region("before global tab", 0x1000, v.clone()),
                region("global tab", 0x1000, v),
            ],
            launches_ok: 1,
            error: None,
        }
    }

    #[test]
    fn code_pointers_pair_consistently() {
        let code = ["tab".to_string()];
        let l = ("culink", "nvlink");
        // Different placement, same structure: equal.
        let a = table(&[0x500, 0x600, 0x500, 0]);
        let b = table(&[0x900, 0x700, 0x900, 0]);
        assert!(compare(&a, &b, l, &code).is_empty());
        // Without the directive the bytes differ.
        assert!(!compare(&a, &b, l, &[]).is_empty());
        // A duplicated entry where nvlink has two functions.
        let c = table(&[0x500, 0x500, 0x500, 0]);
        let d = compare(&c, &b, l, &code);
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(
            d[0],
            "before global tab byte 8: code pointer 0x500 (culink) is 0x700 (nvlink) here but 0x900 at before global tab byte 0"
        );
        // Swapped entries are caught by the other direction too.
        let e = table(&[0x600, 0x500, 0x600, 0]);
        let f = table(&[0x900, 0x700, 0x700, 0]);
        assert!(compare(&e, &f, l, &code)[0]
            .contains("code pointer 0x600 (culink) is 0x700 (nvlink) here but 0x900"));
    }

    #[test]
    fn first_diverging_launch_is_reported() {
        let snap = |v1: u8, v2: u8| Dump {
            regions: vec![
                region("before global g", 0x100, vec![1; 4]),
                region("launch 1 `k1`: buffer out", 0x1000, vec![v1; 4]),
                region("launch 1 `k1`: global g", 0x100, vec![1; 4]),
                region("launch 2 `k2`: buffer out", 0x1000, vec![v2; 4]),
                region("launch 2 `k2`: global g", 0x100, vec![v2; 4]),
            ],
            launches_ok: 2,
            error: None,
        };
        let l = ("culink", "nvlink");
        assert!(compare(&snap(1, 2), &snap(1, 2), l, &[]).is_empty());
        let d = compare(&snap(1, 3), &snap(1, 2), l, &[]);
        assert_eq!(
            d,
            vec![
                "launch 2 `k2`: buffer out: first difference at byte 0 (0x0): 0x03 (culink) vs 0x02 (nvlink)",
                "launch 2 `k2`: global g: first difference at byte 0 (0x0): 0x03 (culink) vs 0x02 (nvlink)",
            ]
        );
        let d = compare(&snap(5, 3), &snap(1, 2), l, &[]);
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(d[0].starts_with("launch 1 `k1`: buffer out: first difference"));
        assert_eq!(d[1], "... and 2 more difference(s) after later launches");
        assert_eq!(base_name("launch 12 `k`: global x"), "global x");
        assert_eq!(base_name("before global x"), "global x");
        assert_eq!(launch_of("launch 12 `k`: global x"), Some(12));
        assert_eq!(launch_of("before global x"), None);
    }

    #[test]
    fn printf() {
        let l = ("culink", "nvlink");
        assert_eq!(compare_printf("a\nb\n", "a\nb\n", false, l), None);
        assert_eq!(compare_printf("b\na\n", "a\nb\n", true, l), None);
        let d = compare_printf("b\na\n", "a\nb\n", false, l).unwrap();
        assert_eq!(d, "printf output differs (2 lines from culink, 2 from nvlink): first at line 1: \"b\" vs \"a\"");
        let d = compare_printf("a\n", "a\nb\n", false, l).unwrap();
        assert!(d.ends_with("first at line 2: \"<end>\" vs \"b\""), "{d}");
        assert!(compare_printf("a", "a\n", false, l).is_some());
    }
}
