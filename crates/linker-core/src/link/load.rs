//! Phase 1: read every input, expand containers, parse, select.
//!
//! Files are memory-mapped (no copy); in-memory inputs are borrowed. The kind of
//! an input is decided by its content, never its name (`crate::input`):
//! cubins are used as they are; fatbinaries (alone or inside a host object's
//! `__nv_relfatbin`) give the ELF image for the target (or their PTX, compiled
//! by ptxas); archives give their members; PTX is compiled by ptxas. Expansion
//! and parsing run in parallel (rayon), one task per input; diagnostics are
//! collected in input order so the report is deterministic. Then archive
//! members are selected (all of them, nvlink's rule; or lazily) and `-lcudadevrt`
//! is loaded only when undefined symbols remain.

use super::{Diags, FileId};
use crate::arch::SmArch;
use crate::config::{InputSource, LinkFailure, LinkOptions};
use crate::cubin::Cubin;
use crate::elf::{ET_REL, SHT_CUDA_CONSTANT2, STB_GLOBAL, STB_WEAK, STT_SECTION};
use crate::error::{Error, ErrorKind, Result};
use crate::fxhash::{HashMap, HashSet};
use crate::input::archive::{Archive, MemberData};
use crate::input::fatbin::Fatbin;
use crate::input::host::HostObject;
use crate::input::{detect, ptx, InputKind};
use rayon::prelude::*;
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The bytes of one input, kept alive for the whole link.
pub(crate) enum Blob {
    /// A memory-mapped file.
    Mapped(super::inmap::Mapped),
    /// Bytes handed in by the caller, or a file too small to map.
    Owned(Arc<[u8]>),
}

/// How the members of an archive input are loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Group {
    /// Always (objects, whole archives).
    Always,
    /// Only when a member defines a symbol still undefined (lazy archives).
    Lazy,
    /// `-lcudadevrt`: only when undefined symbols remain after everything else.
    DevRt { lazy: bool },
}

/// One input's bytes plus the name diagnostics use for it.
pub(crate) struct NamedBlob {
    pub name: String,
    pub blob: Blob,
    /// The directory thin-archive members are relative to.
    pub dir: PathBuf,
    /// How archive members of this input are loaded.
    pub group: Group,
    /// The file's canonical path (archives named twice are loaded once).
    pub canonical: Option<PathBuf>,
    /// The register-link id of this input when it is a cubin, fatbinary or PTX
    /// file: its absolute path (the working directory joined with the path as
    /// given, not normalised) with every non-alphanumeric byte turned into `_`.
    pub path_id: String,
}

impl NamedBlob {
    pub(crate) fn bytes(&self) -> &[u8] {
        blob_bytes(&self.blob)
    }
}

fn blob_bytes(blob: &Blob) -> &[u8] {
    match blob {
        Blob::Mapped(m) => m,
        Blob::Owned(b) => b,
    }
}

/// A device image's bytes: borrowed from an input, decompressed/compiled, or a
/// mapped thin-archive member.
pub(crate) enum ImageBytes<'b> {
    Borrowed(&'b [u8]),
    Owned(Vec<u8>),
    Mapped(super::inmap::Mapped),
}

/// One device ELF image to link (a candidate until selection).
pub(crate) struct Image<'b> {
    /// `a.o`, `libfoo.a(m.o)`.
    pub name: String,
    pub bytes: ImageBytes<'b>,
    pub group: Group,
}

/// What the register-link file and host-reference pruning need to know about
/// one module (an input or archive member), whether or not it gave an image.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ModuleInfo {
    /// The id in `DEFINE_REGISTER_FUNC(<id>)`: a host object's `__nv_module_id`,
    /// else the mangled path. `None`: never registered (a host object without
    /// device code, such as a plain gcc object).
    pub reg_id: Option<String>,
    /// The kernel patterns of a host object's `.nvHRKE`/`.nvHRKI` lists;
    /// `None` when the module carries no host information (cubin, fatbinary,
    /// PTX, host object without `.nvHR*` sections).
    pub kernel_refs: Option<Vec<String>>,
    /// The variable and constant patterns of its `.nvHRDE`/`.nvHRDI`/
    /// `.nvHRCE`/`.nvHRCI` lists (what host code reads or writes by name).
    pub variable_refs: Vec<String>,
}

/// One module in load order (devrt members last), with its image if it has one.
#[derive(Debug, Clone)]
pub(crate) struct Module {
    pub info: ModuleInfo,
    /// Index into the images `expand_all` returns.
    pub image: Option<usize>,
    pub group: Group,
}

/// `path` made absolute the way nvlink does for register-link ids (the working
/// directory joined with the path as given), every byte that is not an ASCII
/// letter or digit turned into `_`.
pub(crate) fn mangle_path_id(path: &Path) -> String {
    // The working directory is read once per process (a `getcwd` per input
    // before); a link does not change it.
    static CWD: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        match CWD.get_or_init(|| std::env::current_dir().ok()) {
            Some(d) => d.join(path),
            None => path.to_path_buf(),
        }
    };
    mangle_id(&abs.to_string_lossy())
}

/// Every byte of `s` that is not an ASCII letter or digit becomes `_`.
pub(crate) fn mangle_id(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                b as char
            } else {
                '_'
            }
        })
        .collect()
}

/// Which modules are loaded (kept image; or no image, loaded whole), in order:
/// their register-link ids, and the kernel patterns of host-reference pruning
/// (`Some` only when every loaded module carries host information and the
/// lists of the modules other than libcudadevrt's name at least one kernel,
/// nvlink's rule: `a.o` with empty lists whose kernel calls an undefined
/// function still fails after libcudadevrt, whose lists are not empty, was
/// loaded for it).
pub(crate) fn loaded_modules(
    modules: &[Module],
    images: &[Image<'_>],
    kept: &[bool],
) -> (Vec<String>, Option<Vec<String>>) {
    let devrt_loaded = images
        .iter()
        .zip(kept)
        .any(|(img, k)| *k && matches!(img.group, Group::DevRt { .. }));
    let mut ids = Vec::new();
    let mut patterns: Vec<String> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::default();
    let mut all_host = true;
    let mut own_patterns = false;
    for m in modules {
        let loaded = match m.image {
            Some(i) => kept.get(i).copied().unwrap_or(false),
            None => match m.group {
                Group::Always => true,
                Group::DevRt { .. } => devrt_loaded,
                Group::Lazy => false,
            },
        };
        if !loaded {
            continue;
        }
        if let Some(id) = &m.info.reg_id {
            ids.push(id.clone());
        }
        match &m.info.kernel_refs {
            Some(k) => {
                own_patterns |= !k.is_empty() && !matches!(m.group, Group::DevRt { .. });
                for p in k {
                    if seen.insert(p) {
                        patterns.push(p.clone());
                    }
                }
            }
            None => all_host = false,
        }
    }
    let prune = (all_host && own_patterns).then_some(patterns);
    (ids, prune)
}

impl Image<'_> {
    pub(crate) fn bytes(&self) -> &[u8] {
        match &self.bytes {
            ImageBytes::Borrowed(b) => b,
            ImageBytes::Owned(v) => v,
            ImageBytes::Mapped(m) => m,
        }
    }
}

/// A parsed relocatable input.
pub(crate) struct InputFile<'d> {
    /// Position on the command line.
    pub id: FileId,
    /// The name as the user gave it.
    pub name: &'d str,
    /// The parsed object.
    pub cubin: Cubin<'d>,
    /// For each section: the index of the `.text.<fn>` section of the function
    /// that owns it (the text section itself, `.nv.constant0.<fn>`,
    /// `.nv.shared.<fn>`, `.nv.info.<fn>`, relocation sections of those), or
    /// `None` for module-level sections.
    pub owner: Vec<Option<u32>>,
    /// For each `.text.<fn>` section: the function's symbol index (else 0).
    pub func_sym: Vec<u32>,
    /// The jump-table sections (`SHT_CUDA_CONSTANT2`) holding a symbol other
    /// than their section symbol, sorted: ptxas names every table it writes
    /// (`<fn>.const_opt.*`), a `-r` output's read-time loser's table has
    /// none (`sections::orphan_table`).
    pub named_tables: Vec<u32>,
}

impl InputFile<'_> {
    /// The function symbol a PTX `.alias` symbol `index` stands for: another
    /// `STT_FUNC` symbol defined in a function's `.text.<fn>` (ptxas writes
    /// it with size 0 at the function's start, and a call-graph entry
    /// "alias calls function"). nvlink resolves references to the alias to
    /// the function (measured at sm_90: call relocations against `g` of
    /// `.alias g, f` become relocations against `f`).
    pub(crate) fn alias_target(&self, index: u32) -> Option<u32> {
        let sym = self.cubin.symbols.get(index as usize)?;
        if sym.ty() != crate::elf::STT_FUNC {
            return None;
        }
        let func = *self.func_sym.get(sym.section()? as usize)?;
        (func != 0 && func != index).then_some(func)
    }
}

/// Opens an input file: the file and its size, `None` when it is empty.
fn open_file(path: &Path, name: &str) -> Result<Option<(std::fs::File, usize)>> {
    let io = |what: &str, e: std::io::Error| {
        Error::new(ErrorKind::Io, format!("{what}: {e}")).in_file(name.to_string())
    };
    let file = std::fs::File::open(path).map_err(|e| io("cannot open input file", e))?;
    let meta = file
        .metadata()
        .map_err(|e| io("cannot stat input file", e))?;
    if meta.is_dir() {
        return Err(Error::new(ErrorKind::Io, "input is a directory").in_file(name.to_string()));
    }
    if meta.len() == 0 {
        return Ok(None);
    }
    let len = usize::try_from(meta.len()).map_err(|_| {
        Error::new(ErrorKind::Io, "input too large to map").in_file(name.to_string())
    })?;
    Ok(Some((file, len)))
}

/// Maps a file, at the address `hint` if that is free (0: anywhere).
fn map_file(path: &Path, name: &str, hint: usize) -> Result<Blob> {
    match open_file(path, name)? {
        None => Ok(Blob::Owned(Arc::from(Vec::new()))),
        // The map is read-only and lives as long as the link; a file
        // truncated by another process while we link would fault, as with
        // every mmap-based linker (mold, lld, wild).
        Some((file, len)) => super::inmap::map_file(&file, len, hint)
            .map(Blob::Mapped)
            .map_err(|e| {
                Error::new(ErrorKind::Io, format!("cannot map input file: {e}"))
                    .in_file(name.to_string())
            }),
    }
}

/// Finds `libNAME.a` in the `-L` directories, then in `LIBRARY_PATH`.
pub(crate) fn find_library(name: &str, dirs: &[PathBuf]) -> Option<PathBuf> {
    let file = format!("lib{name}.a");
    let env: Vec<PathBuf> = std::env::var_os("LIBRARY_PATH")
        .map(|v| std::env::split_paths(&v).collect())
        .unwrap_or_default();
    dirs.iter()
        .chain(env.iter())
        .map(|d| d.join(&file))
        .find(|p| p.is_file())
}

/// Reads (maps) every input, in order, then every `-l` library that exists.
pub(crate) fn read_all(opts: &LinkOptions, diags: &mut Diags) -> Result<Vec<NamedBlob>> {
    let _span = tracing::info_span!("read_inputs", count = opts.inputs.len()).entered();
    let lazy_default = if opts.lazy_archives {
        Group::Lazy
    } else {
        Group::Always
    };
    let mut jobs: Vec<(InputSource, Group)> = opts
        .inputs
        .iter()
        .enumerate()
        .map(|(i, input)| {
            let g = if opts.whole_archive_inputs.contains(&i) {
                Group::Always
            } else {
                lazy_default
            };
            (input.clone(), g)
        })
        .collect();
    for lib in &opts.libraries {
        let lazy = opts.lazy_archives && !lib.whole_archive;
        let group = if lib.name == "cudadevrt" {
            Group::DevRt { lazy }
        } else if lazy {
            Group::Lazy
        } else {
            Group::Always
        };
        match find_library(&lib.name, &opts.library_paths) {
            Some(p) => jobs.push((InputSource::File(p), group)),
            // nvlink says nothing about a missing library; culink warns, except
            // for cudadevrt, which nvcc always passes, and when asked to be quiet
            // as nvlink (nvcc also passes host libraries such as -lrt).
            None if lib.name == "cudadevrt" => diags.info(
                "library -lcudadevrt not found (libcudadevrt.a in the -L directories and LIBRARY_PATH); not loaded".to_string(),
            ),
            None if opts.quiet_missing_libraries => diags.info(format!(
                "library -l{} not found (lib{}.a in the -L directories and LIBRARY_PATH); ignored",
                lib.name, lib.name
            )),
            None => diags.warning(Error::new(
                ErrorKind::Io,
                format!(
                    "cannot find -l{} (lib{}.a in the -L directories and LIBRARY_PATH)",
                    lib.name, lib.name
                ),
            )),
        }
    }
    // The files are mapped side by side (`inmap`: their pages can then be
    // dropped with one call per range of inputs): their sizes first, then each
    // is opened, mapped at its place, closed and sniffed, in parallel. (Holding
    // all of them open at once instead cost 40-50 ms at N = 2000: each time the
    // table of file descriptors of a multi-threaded process grows, the kernel
    // waits for an RCU grace period.)
    let lens: Vec<usize> = jobs
        .par_iter()
        .map(|(input, _)| match input {
            InputSource::File(path) => std::fs::metadata(path).map_or(0, |m| m.len() as usize),
            InputSource::Bytes { .. } => 0,
        })
        .collect();
    let hints: Vec<usize> = match super::inmap::side_by_side(&lens) {
        Some((offsets, span)) => match super::inmap::free_range(span) {
            0 => vec![0; lens.len()],
            base => offsets.into_iter().map(|o| base + o).collect(),
        },
        None => vec![0; lens.len()],
    };
    let blobs: Vec<NamedBlob> = jobs
        .into_par_iter()
        .zip(hints)
        .map(|((input, group), hint)| match input {
            InputSource::Bytes { name, data } => Ok(NamedBlob {
                path_id: mangle_id(&name),
                name,
                blob: Blob::Owned(data),
                dir: PathBuf::from("."),
                group,
                canonical: None,
            }),
            InputSource::File(path) => {
                let name = path.display().to_string();
                let blob = map_file(&path, &name, hint)?;
                // Only archives need it (`realpath` costs a syscall per path
                // component: 2000 objects spent ~5 ms on it).
                let canonical = matches!(detect(blob_bytes(&blob)), InputKind::Archive)
                    .then(|| std::fs::canonicalize(&path).ok())
                    .flatten();
                let dir = path
                    .parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
                Ok(NamedBlob {
                    name,
                    blob,
                    dir,
                    group,
                    path_id: mangle_path_id(&path),
                    canonical,
                })
            }
        })
        .collect::<Vec<Result<NamedBlob>>>()
        // In input order, so the error reported (a missing file among
        // several) is the first one's, whichever task failed first.
        .into_iter()
        .collect::<Result<_>>()?;
    Ok(dedupe_archives(blobs, diags))
}

/// As nvlink, an archive named twice (`-lcudadevrt` from CMake and from nvcc,
/// `libx.a libx.a`) is loaded once, where it first appears; objects named
/// twice stay (and clash).
fn dedupe_archives(blobs: Vec<NamedBlob>, diags: &mut Diags) -> Vec<NamedBlob> {
    let mut seen: HashSet<PathBuf> = HashSet::default();
    let mut out = Vec::with_capacity(blobs.len());
    for nb in blobs {
        let is_archive = matches!(detect(nb.bytes()), InputKind::Archive);
        if is_archive {
            if let Some(p) = &nb.canonical {
                if !seen.insert(p.clone()) {
                    diags.info(format!("{}: archive already loaded; skipped", nb.name));
                    continue;
                }
            }
        }
        out.push(nb);
    }
    out
}

/// What expanding one input gave: images and messages (in order).
#[derive(Default)]
struct Expanded<'b> {
    images: Vec<Image<'b>>,
    /// Every module met, in order, with the index of its image in `images`.
    modules: Vec<(ModuleInfo, Option<usize>, Group)>,
    warnings: Vec<Error>,
    infos: Vec<String>,
}

/// Context of one expansion.
#[derive(Clone)]
struct Ctx<'o> {
    arch: SmArch,
    ptxas: Option<&'o Path>,
    /// `LinkOptions::ptxas_options`, `-g` added (without
    /// `-suppress-debug-info`, as nvlink).
    ptxas_options: Vec<String>,
    /// `-suppress-arch-warning`.
    quiet_arch: bool,
    /// Only the modules are wanted (a virtual target): no image is extracted,
    /// no PTX compiled.
    ids_only: bool,
    /// `-dlto`: a fatbinary with LTO IR for the target gives that (the
    /// fatbinary itself, see [`lto_step`]) before its ELF or PTX.
    lto: bool,
}

impl Ctx<'_> {
    /// The target as nvlink names it in messages: `compute_XX` for a virtual
    /// target.
    fn target(&self) -> String {
        if self.ids_only {
            self.arch.virtual_name()
        } else {
            self.arch.to_string()
        }
    }

    /// The device ELF for the target from a fatbinary at `data`: borrowed when
    /// stored plain, decompressed, or compiled from its PTX. `None` when the
    /// fatbinary has nothing for the target.
    fn image_of_fatbin<'x>(
        &self,
        data: &'x [u8],
        name: &str,
        warnings: &mut Vec<Error>,
    ) -> Result<Option<Cow<'x, [u8]>>> {
        let fb = Fatbin::parse(data)?;
        let lto_ir = fb.entries.iter().find(|e| {
            e.kind == crate::input::fatbin::EntryKind::Other(crate::input::fatbin::KIND_LTO_IR)
                && e.sm <= self.arch.sm
        });
        // With -dlto nvlink takes the LTO IR even where the fatbinary also
        // holds SASS for the target (measured: `code=[sm_80,lto_80]`).
        if self.lto && lto_ir.is_some() {
            return Ok(Some(Cow::Borrowed(data)));
        }
        if let Some(e) = fb.select_elf(|sm, variant| {
            super::blackwell::arch_compatible(SmArch::new(sm), variant, self.arch)
        }) {
            return e.contents().map(Some);
        }
        if let Some(e) = fb.select_ptx(self.arch.sm) {
            let text = e.contents()?;
            let ptxas = ptx::find_ptxas(self.ptxas).map_err(|e| e.in_file(name.to_string()))?;
            // nvlink's built-in ptxas takes the options nvcc recorded in the
            // entry (`--generate-line-info`; `-g --dont-merge-basicblocks
            // --return-at-end` for -G), then the link's (measured from the
            // tkinfo notes of its output).
            let options: Vec<String> = e
                .options
                .split_whitespace()
                .map(String::from)
                .chain(self.ptxas_options.iter().cloned())
                .collect();
            return compiled(
                ptx::compile(&text, name, self.arch, &ptxas, &options),
                name,
                warnings,
            )
            .map(|v| Some(Cow::Owned(v)));
        }
        // Only LTO IR for the target, without -dlto: nvlink refuses it ("LTO
        // objects found, use -dlto").
        if let Some(e) = lto_ir {
            return Err(Error::new(
                ErrorKind::Unsupported,
                format!(
                    "holds only LTO IR for {} (lto_{}: nvcc -dlto); link with -dlto (link-time optimization) or compile it with -rdc=true and code=sm_{} or compute_{}",
                    self.arch, e.sm, self.arch.sm, e.sm
                ),
            ));
        }
        Ok(None)
    }

    /// What a virtual target (`compute_XX`, [`Ctx::ids_only`]) makes of the
    /// fatbinary at `data`: nothing to extract, and [`Note::NoArch`] when it
    /// holds no PTX for the target, the code the driver would JIT-link
    /// (nvlink 13.0.88 then warns "SM Arch ('compute_80') not found"; SASS,
    /// even for an older SM, does not count: measured with `nvcc -dc`
    /// objects of compute_80/90 PTX and of sm_80/90 SASS against
    /// compute_75–90a).
    fn virtual_note(&self, data: &[u8]) -> Result<Note> {
        let fb = Fatbin::parse(data)?;
        Ok(match fb.select_ptx(self.arch.sm) {
            Some(_) => Note::IdsOnly,
            None => Note::NoArch,
        })
    }

    /// Expands one non-archive input (or archive member) into at most one image,
    /// with what the register-link file and pruning need to know about it
    /// (`path_id`: its register id unless it is a host object with a module id).
    /// `Ok((_, Err(note)))`: no device code for the target (the note says why).
    fn expand_object<'x>(
        &self,
        data: &'x [u8],
        name: &str,
        path_id: &str,
        warnings: &mut Vec<Error>,
    ) -> Result<(ModuleInfo, Expansion<'x>)> {
        let in_file = |e: Error| e.in_file(name.to_string());
        let by_path = ModuleInfo {
            reg_id: Some(path_id.to_string()),
            kernel_refs: None,
            variable_refs: Vec::new(),
        };
        match detect(data) {
            InputKind::CudaElf if is_executable(data) => {
                Ok((by_path, Err(Note::NotRelocatable { host: false })))
            }
            InputKind::CudaElf => Ok((by_path, Ok(Cow::Borrowed(data)))),
            InputKind::Fatbin if self.ids_only => {
                Ok((by_path, Err(self.virtual_note(data).map_err(in_file)?)))
            }
            InputKind::Fatbin => match self
                .image_of_fatbin(data, name, warnings)
                .map_err(in_file)?
            {
                Some(img) if is_executable(&img) => {
                    Ok((by_path, Err(Note::NotRelocatable { host: false })))
                }
                Some(img) => Ok((by_path, Ok(img))),
                None => Ok((by_path, Err(Note::NoArch))),
            },
            InputKind::HostElf => {
                let host = HostObject::parse(data).map_err(in_file)?;
                let kernel_refs = host
                    .host_refs
                    .as_ref()
                    .map(|r| r.kernels.iter().map(|k| k.to_string()).collect());
                let variable_refs = host
                    .host_refs
                    .as_ref()
                    .map(|r| r.variables.iter().chain(&r.constants).map(|v| v.to_string()).collect())
                    .unwrap_or_default();
                let Some((section, off, fat)) = host.fatbin else {
                    let info = ModuleInfo {
                        reg_id: None,
                        kernel_refs,
                        variable_refs,
                    };
                    return Ok((info, Err(Note::NoDeviceCode)));
                };
                let info = ModuleInfo {
                    reg_id: Some(host.module_id.unwrap_or(path_id).to_string()),
                    kernel_refs,
                    variable_refs,
                };
                if self.ids_only {
                    let note = self
                        .virtual_note(fat)
                        .map_err(|e| in_file(e.in_section(section).at(off)))?;
                    return Ok((info, Err(note)));
                }
                let img = self
                    .image_of_fatbin(fat, name, warnings)
                    .map_err(|e| in_file(e.in_section(section).at(off)))?;
                match img {
                    Some(i) if is_executable(&i) => Ok((
                        ModuleInfo {
                            reg_id: None,
                            ..info
                        },
                        Err(Note::NotRelocatable { host: true }),
                    )),
                    img => Ok((info, img.ok_or(Note::NoArch))),
                }
            }
            InputKind::LtoIr if self.ids_only => Ok((by_path, Err(Note::IdsOnly))),
            // LTO IR as NVRTC writes it (nvlink 13.0.88 ignores a `.ltoir`
            // file: its extension is unknown to it).
            InputKind::LtoIr if self.lto => Ok((by_path, Ok(Cow::Borrowed(data)))),
            InputKind::LtoIr => Err(in_file(Error::new(
                ErrorKind::Unsupported,
                "input is LTO IR: link with -dlto (link-time optimization)",
            ))),
            InputKind::Ptx if self.ids_only => Ok((by_path, Err(Note::IdsOnly))),
            InputKind::Ptx => {
                let ptxas = ptx::find_ptxas(self.ptxas).map_err(in_file)?;
                let img = compiled(
                    ptx::compile(data, name, self.arch, &ptxas, &self.ptxas_options),
                    name,
                    warnings,
                )?;
                Ok((by_path, Ok(Cow::Owned(img))))
            }
            // nvlink 13.0.88 skips an empty file without a word; build
            // systems leave such placeholders (mold skips them too).
            InputKind::Empty => Ok((by_path, Err(Note::Empty))),
            InputKind::Archive => Err(in_file(Error::new(
                ErrorKind::Unsupported,
                "an archive inside an archive is not supported",
            ))),
            k => Err(in_file(Error::new(
                ErrorKind::Malformed,
                format!(
                    "input is {}; culink links relocatable CUDA device objects, fatbinaries, host objects with device code, archives of those, and PTX",
                    k.describe()
                ),
            ))),
        }
    }
}

/// The image of a PTX compile, its ptxas warnings added to `warnings`.
fn compiled(r: Result<ptx::Compiled>, name: &str, warnings: &mut Vec<Error>) -> Result<Vec<u8>> {
    let c = r?;
    warnings.extend(c.warnings.into_iter().map(|w| {
        Error::new(ErrorKind::Unsupported, format!("ptxas: {w}")).in_file(name.to_string())
    }));
    Ok(c.image)
}

/// One object's device image for the target, or why it has none.
type Expansion<'x> = std::result::Result<Cow<'x, [u8]>, Note>;

/// Why an input gave no image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Note {
    /// A host object without a fatbinary section.
    NoDeviceCode,
    /// Device code, but none for the target arch.
    NoArch,
    /// The device code for the target is an executable (whole-program) cubin:
    /// code compiled without `-rdc`, which nvlink 13.0.88 leaves out of the
    /// link without a word (not registered either). From a host object the
    /// module still counts for host-reference pruning; a cubin or fatbinary
    /// file counts for nothing.
    NotRelocatable { host: bool },
    /// A zero-length file: skipped with a warning, as nvlink skips it
    /// (silently); not registered.
    Empty,
    /// A virtual target's module with code for it: registered, nothing
    /// extracted ([`Ctx::ids_only`]).
    IdsOnly,
}

/// Whether `image` is an ELF executable (`e_type` `ET_EXEC`).
fn is_executable(image: &[u8]) -> bool {
    image.len() >= 18
        && image.starts_with(b"\x7fELF")
        && u16::from_le_bytes([image[16], image[17]]) == crate::elf::ET_EXEC
}

fn expand_one<'b>(nb: &'b NamedBlob, ctx: &Ctx<'_>) -> Result<Expanded<'b>> {
    let _span = tracing::debug_span!("expand_input", input = nb.name.as_str()).entered();
    let data = nb.bytes();
    let mut out = Expanded::default();
    let arch = ctx.arch;
    if detect(data) != InputKind::Archive {
        let (info, result) = ctx.expand_object(data, &nb.name, &nb.path_id, &mut out.warnings)?;
        let image = result.is_ok().then_some(0);
        if !matches!(
            result,
            Err(Note::NotRelocatable { host: false } | Note::Empty)
        ) {
            out.modules.push((info, image, Group::Always));
        }
        match result {
            Ok(img) => out.images.push(Image {
                name: nb.name.clone(),
                bytes: match img {
                    Cow::Borrowed(b) => ImageBytes::Borrowed(b),
                    Cow::Owned(v) => ImageBytes::Owned(v),
                },
                group: Group::Always,
            }),
            Err(Note::NoArch) if ctx.quiet_arch => {}
            Err(Note::NoArch) => out.warnings.push(Error::new(
                ErrorKind::Arch,
                format!("SM Arch ('{}') not found in '{}'", ctx.target(), nb.name),
            )),
            Err(Note::IdsOnly) => {}
            Err(Note::NoDeviceCode) => out.infos.push(format!(
                "{}: host object without device code (no __nv_relfatbin or .nv_fatbin section); nothing to link",
                nb.name
            )),
            Err(Note::Empty) => out.warnings.push(
                Error::new(ErrorKind::Malformed, "empty input file; ignored").in_file(nb.name.clone()),
            ),
            Err(Note::NotRelocatable { .. }) => out.infos.push(format!(
                "{}: its {arch} code is not relocatable (compiled without -rdc); not linked, as by nvlink",
                nb.name
            )),
        }
        return Ok(out);
    }
    let ar = Archive::parse(data).map_err(|e| e.in_file(nb.name.clone()))?;
    if ar.members.is_empty() {
        out.infos.push(format!("{}: empty archive", nb.name));
    }
    for m in &ar.members {
        let mname = format!("{}({})", nb.name, m.name);
        let member_id = format!("{}_{}_", nb.path_id, mangle_id(m.name));
        let at = |e: Error| e.in_file(mname.clone());
        let mut info = ModuleInfo::default();
        let result = match &m.data {
            MemberData::Inline(bytes) => take_info(
                ctx.expand_object(bytes, &mname, &member_id, &mut out.warnings),
                &mut info,
            )
            .map(|r| {
                r.map(|img| match img {
                    Cow::Borrowed(b) => ImageBytes::Borrowed(b),
                    Cow::Owned(v) => ImageBytes::Owned(v),
                })
            }),
            MemberData::External(rel) => {
                let path = nb.dir.join(rel);
                let blob = map_file(&path, &mname, 0)?;
                let bytes: &[u8] = match &blob {
                    Blob::Mapped(m) => m,
                    Blob::Owned(b) => b,
                };
                let r = take_info(
                    ctx.expand_object(bytes, &mname, &member_id, &mut out.warnings),
                    &mut info,
                );
                match r {
                    // A plain cubin member: keep the map, no copy.
                    Ok(Ok(Cow::Borrowed(b))) if b.len() == bytes.len() => match blob {
                        Blob::Mapped(m) => Ok(Ok(ImageBytes::Mapped(m))),
                        Blob::Owned(o) => Ok(Ok(ImageBytes::Owned(o.to_vec()))),
                    },
                    Ok(Ok(img)) => Ok(Ok(ImageBytes::Owned(img.into_owned()))),
                    Ok(Err(n)) => Ok(Err(n)),
                    Err(e) => Err(e),
                }
            }
        };
        if result.is_ok()
            && !matches!(
                result,
                Ok(Err(Note::NotRelocatable { host: false } | Note::Empty))
            )
        {
            let image = matches!(result, Ok(Ok(_))).then_some(out.images.len());
            out.modules.push((info, image, nb.group));
        }
        match result {
            Ok(Ok(bytes)) => out.images.push(Image {
                name: mname,
                bytes,
                group: nb.group,
            }),
            Ok(Err(Note::NoArch)) => out.infos.push(format!(
                "{mname}: SM Arch ('{}') not found; member not linked",
                ctx.target()
            )),
            Ok(Err(Note::IdsOnly)) => {}
            Ok(Err(Note::NoDeviceCode)) => out
                .infos
                .push(format!("{mname}: host object without device code; skipped")),
            Ok(Err(Note::Empty)) => out.infos.push(format!("{mname}: empty member; skipped")),
            Ok(Err(Note::NotRelocatable { .. })) => out.infos.push(format!(
                "{mname}: its {arch} code is not relocatable (compiled without -rdc); not linked"
            )),
            // Archives may hold other files (e.g. text); report them under -v only.
            Err(e) if e.kind == ErrorKind::Malformed && !is_object(&m.data, nb) => {
                out.infos.push(format!("{}; member skipped", at(e)))
            }
            Err(e) => return Err(at(e)),
        }
    }
    Ok(out)
}

/// Splits an expansion result, storing its module information in `info`.
fn take_info<T>(r: Result<(ModuleInfo, T)>, info: &mut ModuleInfo) -> Result<T> {
    r.map(|(i, t)| {
        *info = i;
        t
    })
}

/// Whether an archive member looks like something culink should read (an ELF,
/// fatbinary or PTX); anything else in an archive is skipped, not an error.
fn is_object(data: &MemberData<'_>, nb: &NamedBlob) -> bool {
    match data {
        MemberData::Inline(b) => !matches!(detect(b), InputKind::Unknown | InputKind::Empty),
        MemberData::External(rel) => {
            let mut head = [0u8; 8];
            std::fs::File::open(nb.dir.join(rel))
                .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
                .map(|n| !matches!(detect(&head[..n]), InputKind::Unknown | InputKind::Empty))
                .unwrap_or(true)
        }
    }
}

/// What [`expand_all`] gives: the images, every module met, and, for a
/// `-dlto` link with nothing else to link, the output itself: ptxas'
/// whole-program compile of the optimized code ([`lto_step`]).
type Expand<'b> = (Vec<Image<'b>>, Vec<Module>, Option<Vec<u8>>);

/// Expands every input (containers, archives, PTX) into device images, in
/// parallel; `-lcudadevrt`'s images go last. Also returns every module met,
/// in the same order (see [`loaded_modules`]).
pub(crate) fn expand_all<'b>(
    blobs: &'b [NamedBlob],
    opts: &LinkOptions,
    arch: SmArch,
    ids_only: bool,
    diags: &mut Diags,
) -> std::result::Result<Expand<'b>, LinkFailure> {
    let _span = tracing::info_span!("expand_inputs", count = blobs.len()).entered();
    let ctx = Ctx {
        arch,
        ptxas: opts.ptxas.as_deref(),
        ptxas_options: ptxas_options(opts),
        quiet_arch: opts.suppress_arch_warning,
        ids_only,
        lto: opts.link_time_opt,
    };
    let results: Vec<Result<Expanded<'b>>> =
        blobs.par_iter().map(|nb| expand_one(nb, &ctx)).collect();
    let mut images = Vec::new();
    let mut devrt = Vec::new();
    // (info, image as (is devrt, index in its list), group)
    let mut modules = Vec::new();
    let mut devrt_modules = Vec::new();
    for r in results {
        match r {
            Ok(ex) => {
                for w in ex.warnings {
                    diags.warning(w);
                }
                for i in ex.infos {
                    diags.info(i);
                }
                let mut at = Vec::with_capacity(ex.images.len());
                for img in ex.images {
                    if matches!(img.group, Group::DevRt { .. }) {
                        at.push((true, devrt.len()));
                        devrt.push(img);
                    } else {
                        at.push((false, images.len()));
                        images.push(img);
                    }
                }
                for (info, image, group) in ex.modules {
                    let image = image.and_then(|i| at.get(i).copied());
                    let m = (info, image, group);
                    if matches!(group, Group::DevRt { .. }) {
                        devrt_modules.push(m);
                    } else {
                        modules.push(m);
                    }
                }
            }
            Err(e) => diags.error(e),
        }
    }
    diags.checkpoint()?;
    let base = images.len();
    images.extend(devrt);
    let mut modules: Vec<Module> = modules
        .into_iter()
        .chain(devrt_modules)
        .map(|(info, image, group)| Module {
            info,
            image: image.map(|(is_devrt, i)| if is_devrt { base + i } else { i }),
            group,
        })
        .collect();
    let lto = lto_step(&mut images, &mut modules, &ctx, opts, diags)?;
    Ok((images, modules, lto))
}

/// The options of the ptxas that compiles PTX for the link: the link's
/// ([`LinkOptions::ptxas_options`]), and `-g` for a `-g` link (without
/// `-suppress-debug-info`, as nvlink).
pub(crate) fn ptxas_options(opts: &LinkOptions) -> Vec<String> {
    let mut o = opts.ptxas_options.clone();
    if opts.device_debug && !opts.suppress_debug_info {
        o.push("-g".to_string());
    }
    o
}

/// The ptxas for the link-time optimized code: `--ptxas`, else the one of
/// the toolkit `-nvvmpath` names (`<cuda>/nvvm` → `<cuda>/bin/ptxas`), else
/// `ptxas` on `PATH`.
pub(crate) fn lto_ptxas(opts: &LinkOptions) -> Result<PathBuf> {
    let toolkit = opts
        .nvvm_path
        .as_deref()
        .and_then(Path::parent)
        .map(|root| root.join("bin/ptxas"))
        .filter(|p| p.is_file());
    ptx::find_ptxas(opts.ptxas.as_deref().or(toolkit.as_deref()))
}

/// What the optimizer may drop, as nvJitLink options: the kernels and
/// variables host code uses, when every module carries host information and
/// names a kernel (the host-reference pruning rule of [`loaded_modules`]),
/// with `-optimize-unused-variables` (measured: nvlink's optimizer then
/// drops `unused_a` and makes `counter` local, as nvJitLink does with these
/// options); else an explicit `-kernels-used`/`-variables-used`.
fn lto_used(modules: &[Module], opts: &LinkOptions) -> Vec<String> {
    let mut out = Vec::new();
    if opts.kernels_used.is_some() || opts.variables_used.is_some() {
        for k in opts.kernels_used.iter().flatten() {
            out.push(format!("-kernels-used={k}"));
        }
        for v in opts.variables_used.iter().flatten() {
            out.push(format!("-variables-used={v}"));
        }
        return out;
    }
    if opts.ignore_host_info {
        return out;
    }
    let own = modules
        .iter()
        .filter(|m| !matches!(m.group, Group::DevRt { .. }));
    let all_host = own.clone().all(|m| m.info.kernel_refs.is_some());
    let mut seen = HashSet::default();
    for m in own.clone() {
        for k in m.info.kernel_refs.iter().flatten() {
            if seen.insert(("k", k.as_str())) {
                out.push(format!("-kernels-used={k}"));
            }
        }
    }
    if !all_host || out.is_empty() {
        return Vec::new();
    }
    for m in own {
        for v in &m.info.variable_refs {
            if seen.insert(("v", v.as_str())) {
                out.push(format!("-variables-used={v}"));
            }
        }
    }
    out.push("-optimize-unused-variables".into());
    out
}

/// Whether an image is an LTO module: with `-dlto` a fatbinary holding LTO
/// IR for the target, or LTO IR itself, stands for itself among the images
/// (every other image is an ELF).
fn is_lto_module(img: &Image<'_>) -> bool {
    matches!(
        crate::input::detect(img.bytes()),
        InputKind::Fatbin | InputKind::LtoIr
    )
}

/// Whether a relocatable cubin needs nothing from other objects: no
/// undefined symbol but weak ones (`__UFT`, ...), the driver's functions
/// (`vprintf`, `malloc`) and `extern __shared__` arrays.
fn needs_nothing(image: &[u8]) -> bool {
    let Ok(c) = Cubin::parse(image) else {
        return false;
    };
    !c.symbols.iter().skip(1).any(|s| {
        s.is_undefined()
            && s.bind() == STB_GLOBAL
            && !s.name.is_empty()
            && s.other & crate::elf::STO_CUDA_SHARED == 0
            && !super::relocate::DRIVER_FUNCTIONS.contains(&s.name)
    })
}

/// A global symbol some other image (but libcudadevrt's, loaded only for
/// what it defines) leaves undefined that none defines, the LTO result `lto`
/// included (the driver's functions and `extern __shared__` arrays aside);
/// the first such name.
fn removed_but_needed(images: &[Image<'_>], lto: &[u8]) -> Option<String> {
    let mut defined: HashSet<&str> = HashSet::default();
    let mut wanted: Vec<&str> = Vec::new();
    // (whether its undefined symbols count, the image)
    let parsed: Vec<(bool, Cubin<'_>)> = images
        .iter()
        .filter(|i| !is_lto_module(i))
        .map(|i| (!matches!(i.group, Group::DevRt { .. }), i.bytes()))
        .chain(std::iter::once((false, lto)))
        .filter_map(|(counts, b)| Some((counts, Cubin::parse(b).ok()?)))
        .collect();
    for (counts, c) in &parsed {
        for s in c.symbols.iter().skip(1) {
            if s.is_undefined() {
                if !counts {
                    continue;
                }
                if s.bind() == STB_GLOBAL
                    && s.other & crate::elf::STO_CUDA_SHARED == 0
                    && !super::relocate::DRIVER_FUNCTIONS.contains(&s.name)
                {
                    wanted.push(s.name);
                }
            } else if s.bind() != crate::elf::STB_LOCAL {
                defined.insert(s.name);
            }
        }
    }
    wanted
        .into_iter()
        .find(|n| !defined.contains(n))
        .map(String::from)
}

/// `-dlto`: replaces the LTO modules among `images` by one relocatable image,
/// `ptxas -c` of the PTX libnvJitLink makes of them all, at the place of the
/// last of them (measured: nvlink links the optimized code there: after `g.o`
/// in `a.lto.o g.o b.lto.o`, first in `a.lto.o b.lto.o g.o`); their modules
/// point at it. When no other device code is linked and that image needs
/// nothing (no libcudadevrt either), nvlink compiles the program whole
/// instead, optimized with what host code uses ([`lto_used`]; measured:
/// equivalent outputs in both cases, and the partial link's optimizer knows
/// nothing of the host: a kernel only launched from the device stays global).
fn lto_step(
    images: &mut Vec<Image<'_>>,
    modules: &mut [Module],
    ctx: &Ctx<'_>,
    opts: &LinkOptions,
    diags: &mut Diags,
) -> std::result::Result<Option<Vec<u8>>, LinkFailure> {
    let members: Vec<usize> = (0..images.len())
        .filter(|&i| is_lto_module(&images[i]))
        .collect();
    let Some(&last) = members.last() else {
        return Ok(None);
    };
    let _span = tracing::info_span!("lto_step", modules = members.len()).entered();
    let names: Vec<&str> = members.iter().map(|&i| images[i].name.as_str()).collect();
    let label = format!("link-time optimized code of {}", names.join(", "));
    let fatbins: Vec<(&str, &[u8])> = members
        .iter()
        .map(|&i| (images[i].name.as_str(), images[i].bytes()))
        .collect();
    let libs = crate::input::lto::candidates(opts.nvjitlink.as_deref(), opts.nvvm_path.as_deref());
    let debug = opts.device_debug && !opts.suppress_debug_info;
    let optimize =
        |used: &[String]| crate::input::lto::optimize(&libs, ctx.arch, debug, used, &fatbins);
    let mut warnings = Vec::new();
    let alone = !opts.relocatable
        && images
            .iter()
            .all(|i| is_lto_module(i) || matches!(i.group, Group::DevRt { .. }));
    let step = (|| -> Result<(Vec<u8>, Option<Vec<u8>>)> {
        let used = if alone {
            lto_used(modules, opts)
        } else {
            Vec::new()
        };
        // libnvJitLink first: without it there is nothing to compile.
        let ptx = optimize(&used)?;
        let ptxas = lto_ptxas(opts)?;
        let compile = |ptx: &[u8]| ptx::compile(ptx, &label, ctx.arch, &ptxas, &ctx.ptxas_options);
        if alone {
            // Most likely a whole program: optimized knowing what host code
            // uses, compiled whole and `-c` at once; the `-c` object says
            // whether it needs anything (a device launch needs libcudadevrt:
            // then it is a partial link after all, optimized again without
            // the host's lists).
            let (object, whole) = rayon::join(
                || compile(&ptx),
                || ptx::compile_program(&ptx, &label, ctx.arch, &ptxas, &ctx.ptxas_options),
            );
            let object = compiled(object, &label, &mut warnings)?;
            if needs_nothing(&object) {
                return Ok((object, Some(whole?.image)));
            }
            warnings.clear();
            let ptx = optimize(&[])?;
            return Ok((compiled(compile(&ptx), &label, &mut warnings)?, None));
        }
        Ok((compiled(compile(&ptx), &label, &mut warnings)?, None))
    })();
    for w in warnings {
        diags.warning(w);
    }
    let (image, whole_program) = match step {
        Ok(s) => s,
        Err(e) => {
            let e = if e.file.is_none() {
                e.in_file(label)
            } else {
                e
            };
            diags.error(e);
            diags.checkpoint()?;
            return Ok(None);
        }
    };
    // libnvJitLink's optimizer treats the modules as the whole program, so
    // it drops a global that only other objects use (nvlink's own partial
    // link keeps them: its optimizer's partial-link mode is private). Such a
    // link falls back to the modules' compiled code or PTX, with a warning.
    if let Some(name) = removed_but_needed(images, &image) {
        diags.warning(Error::new(
            ErrorKind::Unsupported,
            format!(
                "-dlto: '{name}' is used by an object built without -dlto, and the optimized code does not define it (libnvJitLink's optimizer drops a global only such objects use); {} are linked from their compiled code or PTX instead, without link-time optimization",
                names.join(", ")
            ),
        ));
        let toolkit_ptxas = lto_ptxas(opts).ok();
        let plain = Ctx {
            lto: false,
            ptxas: toolkit_ptxas.as_deref().or(ctx.ptxas),
            ..ctx.clone()
        };
        for &i in &members {
            if crate::input::detect(images[i].bytes()) == InputKind::LtoIr {
                diags.error(
                    Error::new(
                        ErrorKind::Unsupported,
                        "is LTO IR only, so it cannot be linked without link-time optimization",
                    )
                    .in_file(images[i].name.clone()),
                );
                continue;
            }
            let mut warnings = Vec::new();
            let r = plain.image_of_fatbin(images[i].bytes(), &images[i].name, &mut warnings);
            for w in warnings {
                diags.warning(w);
            }
            match r {
                Ok(Some(img)) => {
                    images[i].bytes = ImageBytes::Owned(img.into_owned());
                }
                Ok(None) => diags.error(
                    Error::new(
                        ErrorKind::Arch,
                        format!(
                            "holds only LTO IR for {}, so it cannot be linked without link-time optimization",
                            ctx.arch
                        ),
                    )
                    .in_file(images[i].name.clone()),
                ),
                Err(e) => diags.error(e.in_file(images[i].name.clone())),
            }
        }
        diags.checkpoint()?;
        return Ok(None);
    }
    diags.info(format!(
        "-dlto: {} optimized together by libnvJitLink",
        names.join(", ")
    ));
    let group = images[last].group;
    let mut image = Some(image);
    // Old index -> new index; every LTO module goes to the merged image.
    let mut new_index = Vec::with_capacity(images.len());
    let mut kept = Vec::with_capacity(images.len() - members.len() + 1);
    let mut merged = 0;
    for (i, img) in std::mem::take(images).into_iter().enumerate() {
        if i == last {
            merged = kept.len();
            kept.push(Image {
                name: label.clone(),
                bytes: ImageBytes::Owned(image.take().unwrap_or_default()),
                group,
            });
            new_index.push(merged);
        } else if is_lto_module(&img) {
            new_index.push(usize::MAX);
        } else {
            new_index.push(kept.len());
            kept.push(img);
        }
    }
    *images = kept;
    for m in modules.iter_mut() {
        if let Some(i) = m.image {
            m.image = Some(match new_index[i] {
                usize::MAX => merged,
                n => n,
            });
        }
    }
    Ok(whole_program)
}

/// Parses every image in parallel, checks that it is a relocatable cubin for
/// `arch`, then keeps the images the archive rules select (see [`select`]).
/// Also returns, per image, whether it was kept.
pub(crate) fn parse_all<'d, 'm>(
    images: &'d [Image<'_>],
    arch: SmArch,
    verbose: bool,
    keep_system_libraries: bool,
    mappings: &Mappings<'m>,
    diags: &mut Diags,
) -> std::result::Result<ParsedInputs<'d, 'm>, LinkFailure> {
    let _span = tracing::info_span!("parse_inputs", count = images.len()).entered();
    let results: Vec<(Result<InputFile<'d>>, Option<Error>)> = images
        .par_iter()
        .enumerate()
        .map(|(i, img)| {
            let mut warning = None;
            let r = parse_one(FileId(i as u32), &img.name, img.bytes(), arch, &mut warning);
            (r, warning)
        })
        .collect();
    let mut files = Vec::with_capacity(results.len());
    for (r, warning) in results {
        if let Some(w) = warning {
            diags.warning(w);
        }
        match r {
            Ok(f) => files.push(f),
            Err(e) => diags.error(e),
        }
    }
    diags.checkpoint()?;
    let groups: Vec<Group> = images.iter().map(|i| i.group).collect();
    // nvlink 13.0.88 warns about every input but libcudadevrt's members
    // that is no `-ewp` object when one is (-Werror makes it an error).
    let ewp = |f: &InputFile<'_>| f.cubin.header.e_type == crate::elf::ET_CUDA_EWP;
    if files.iter().any(ewp) {
        for (f, g) in files.iter().zip(&groups) {
            if !ewp(f) && !matches!(g, Group::DevRt { .. }) {
                diags.warning(Error::new(
                    ErrorKind::Unsupported,
                    format!(
                        "'{}': -ewp compiled objects should only link with libcudadevrt",
                        f.name
                    ),
                ));
            }
        }
    }
    let keep = select(&files, &groups, keep_system_libraries);
    let mut out = Vec::with_capacity(files.len());
    let mut pages = Vec::with_capacity(files.len());
    // The late pages go once every input is parsed, one input after the
    // other: from inside the parallel parse, each split (which takes the
    // address-space lock for writing) stalled the other thread's page faults
    // (+60 ms at N = 2000). All inputs mapped at once stay below the link's
    // later peak.
    for (f, &k) in files.into_iter().zip(&keep) {
        if k {
            pages.push(mappings.defer(&f));
            out.push(f);
        } else if verbose {
            diags.info(format!(
                "{}: archive member not loaded (defines no symbol the link needs)",
                f.name
            ));
        }
    }
    mappings.drop_resident();
    for (i, f) in out.iter_mut().enumerate() {
        f.id = FileId(i as u32);
    }
    check_section_kinds(&out, diags);
    diags.checkpoint()?;
    Ok(ParsedInputs {
        files: out,
        keep,
        pages,
    })
}

/// What [`parse_all`] gives back.
pub(crate) struct ParsedInputs<'d, 'm> {
    /// The inputs to link, in command-line order (`FileId` = position).
    pub files: Vec<InputFile<'d>>,
    /// Per image: whether it is linked.
    pub keep: Vec<bool>,
    /// Per file: its pages that are dropped between uses.
    pub pages: Vec<Option<DeferredPages<'m>>>,
}

/// Sections are merged by name: all sections of one name must agree on whether
/// they occupy file space, or a merged output would hold a NOBITS size as file
/// contents (unbounded output) or drop a PROGBITS contribution's bytes.
fn check_section_kinds(files: &[InputFile<'_>], diags: &mut Diags) {
    let mut first: HashMap<&str, (bool, &str)> = HashMap::default();
    for f in files {
        for s in f.cubin.sections.iter().skip(1) {
            let nobits = s.is_nobits();
            let (kind, other) = *first.entry(s.name).or_insert((nobits, f.name));
            if kind != nobits {
                let what = |nb: bool| if nb { "no file space" } else { "file contents" };
                diags.error(
                    Error::malformed(format!(
                        "section has {} here but {} in '{other}' (sections of one name are merged)",
                        what(nobits),
                        what(kind)
                    ))
                    .in_file(f.name)
                    .in_section(s.name),
                );
                return;
            }
        }
    }
}

/// Global names an input defines, and the strong undefined references it needs
/// (driver-provided functions excluded).
fn defs_and_refs<'d>(f: &InputFile<'d>) -> (Vec<&'d str>, Vec<&'d str>) {
    let mut defs = Vec::new();
    let mut refs = Vec::new();
    for s in &f.cubin.symbols {
        let b = s.bind();
        if (b != STB_GLOBAL && b != STB_WEAK) || s.ty() == STT_SECTION || s.name.is_empty() {
            continue;
        }
        if s.is_undefined() {
            // Weak undefined references (`__UFT*`, `__UDT*`, ...) need no
            // definition, nor does an `extern __shared__` array (the kernel's
            // dynamic shared window): nvlink loads no libcudadevrt for it
            // (nvcc_dlink test `dynamic_shared_needs_no_device_runtime...`; nvcc
            // -dlink always passes -lcudadevrt). Nor does a texture,
            // surface or sampler reference (a PTX `.texref`/`.surfref`: the
            // driver binds it by name; measured with nvcc objects and a
            // hand-written `.texref`; test `inputs::cudadevrt_only_when_needed`).
            // Nor do the names the linker or the driver resolves
            // (`__UFT*`/`__UDT*`, `.nv.reservedSmem.*`), which a `-r` output
            // holds as GLOBAL (nvlink -r and culink -r alike): nvlink loads
            // no libcudadevrt for them (sweep repro: a relink of an `-r`
            // output with -lcudadevrt at sm_90+; test
            // `inputs::relocatable_output_needs_no_device_runtime`).
            if b == STB_GLOBAL
                && s.other & crate::elf::STO_CUDA_SHARED == 0
                && !super::relocate::is_texture_kind(s.ty())
                && !super::relocate::is_driver_provided(s.name)
                && !super::relocate::UNIFIED_TABLE_SYMBOLS.contains(&s.name)
                && !super::relocate::is_driver_variable(s.name)
            {
                refs.push(s.name);
            }
        } else {
            defs.push(s.name);
        }
    }
    (defs, refs)
}

/// Which images are linked: every `Always` image; `Lazy` members that define a
/// symbol still undefined (repeated to a fixpoint, in image order); and the
/// `DevRt` images only when undefined symbols remain after that, or always
/// with `keep_devrt` (`-keep-system-libraries`) (all of them, or lazily when
/// `DevRt { lazy: true }`).
pub(crate) fn select(files: &[InputFile<'_>], groups: &[Group], keep_devrt: bool) -> Vec<bool> {
    let _span = tracing::debug_span!("select_members").entered();
    if groups.iter().all(|g| *g == Group::Always) {
        return vec![true; files.len()]; // nothing to select (no archive, no -lcudadevrt)
    }
    let syms: Vec<(Vec<&str>, Vec<&str>)> = files.par_iter().map(defs_and_refs).collect();
    let mut sel = Selection {
        syms: &syms,
        keep: groups.iter().map(|g| *g == Group::Always).collect(),
        defined: HashSet::default(),
        wanted: Vec::new(),
    };
    for i in 0..files.len() {
        if sel.keep[i] {
            sel.add(i);
        }
    }
    sel.fixpoint(|i| groups[i] == Group::Lazy);
    if keep_devrt || sel.any_undefined() {
        for (i, g) in groups.iter().enumerate() {
            if *g == (Group::DevRt { lazy: false }) {
                sel.keep[i] = true;
                sel.add(i);
            }
        }
        sel.fixpoint(|i| groups[i] == Group::Lazy || groups[i] == Group::DevRt { lazy: true });
    }
    sel.keep
}

/// The state of archive member selection.
struct Selection<'s, 'd> {
    /// Per image: (defined globals, undefined references).
    syms: &'s [(Vec<&'d str>, Vec<&'d str>)],
    keep: Vec<bool>,
    defined: HashSet<&'d str>,
    wanted: Vec<&'d str>,
}

impl Selection<'_, '_> {
    fn add(&mut self, i: usize) {
        self.defined.extend(self.syms[i].0.iter().copied());
        self.wanted.extend(self.syms[i].1.iter().copied());
    }
    fn any_undefined(&self) -> bool {
        self.wanted.iter().any(|n| !self.defined.contains(n))
    }
    /// Loads candidates (`pick`) that define an undefined name until nothing changes.
    fn fixpoint(&mut self, pick: impl Fn(usize) -> bool) {
        loop {
            let open: HashSet<&str> = self
                .wanted
                .iter()
                .copied()
                .filter(|n| !self.defined.contains(n))
                .collect();
            if open.is_empty() {
                return;
            }
            let mut changed = false;
            for i in 0..self.keep.len() {
                if !self.keep[i] && pick(i) && self.syms[i].0.iter().any(|d| open.contains(d)) {
                    self.keep[i] = true;
                    self.add(i);
                    changed = true;
                }
            }
            if !changed {
                return;
            }
        }
    }
}

/// `e_version` of an ELF ABI 7 object from CUDA 12.0 (ABI 7 objects carry
/// the toolkit version there, `118` for CUDA 11.8; ABI 8 objects have 1).
const CUDA_12_0: u32 = 120;

/// Whether `cubin` is an ELF ABI 7 object from a toolkit before `version`
/// (in `e_version`'s encoding, [`CUDA_12_0`]).
fn toolkit_before(cubin: &Cubin<'_>, version: u32) -> bool {
    cubin.header.abi_version() < 8 && cubin.header.e_version < version
}

/// A virtual target's (`compute_XX`) check of the device ELF inputs: code
/// for a later SM refuses the link (nvlink 13.0.88: "Input file 't90.o' arch
/// does not match target 'compute_80'"); any SM up to the target's is
/// accepted, unlike an `sm_XX` link (measured over sm_75–90a cubins and
/// compute_75–90a: `compute_90` takes sm_75 and sm_90a code alike). Nothing
/// else of them is read.
pub(crate) fn check_virtual_target(images: &[Image<'_>], arch: SmArch) -> Result<()> {
    for img in images {
        let cubin = Cubin::parse(img.bytes()).map_err(|e| e.in_file(img.name.as_str()))?;
        let in_arch = cubin.arch();
        if in_arch.sm > arch.sm {
            return Err(Error::new(
                ErrorKind::Arch,
                format!(
                    "input is for {in_arch}, which does not match the target {}",
                    arch.virtual_name()
                ),
            )
            .in_file(img.name.as_str()));
        }
    }
    Ok(())
}

fn parse_one<'d>(
    id: FileId,
    name: &'d str,
    data: &'d [u8],
    arch: SmArch,
    warning: &mut Option<Error>,
) -> Result<InputFile<'d>> {
    let cubin = Cubin::parse(data).map_err(|e| e.in_file(name))?;
    if cubin.header.e_type != ET_REL && cubin.header.e_type != crate::elf::ET_CUDA_EWP {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!(
                "input is not a relocatable object (e_type {}); link relocatable objects from ptxas -c or nvcc -dc",
                cubin.header.e_type
            ),
        )
        .in_file(name));
    }
    let in_arch = cubin.arch();
    let variant = super::blackwell::input_variant(&cubin);
    if !super::blackwell::arch_compatible(in_arch, variant, arch) {
        *warning = super::blackwell::limited_output_warning(in_arch, arch, name)
            .map(|w| Error::new(ErrorKind::Arch, w).in_file(name));
        return Err(Error::new(
            ErrorKind::Arch,
            format!("input is for {in_arch}, which does not match the target {arch}"),
        )
        .in_file(name));
    }
    if in_arch.sm == 90 && toolkit_before(&cubin, CUDA_12_0) {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!(
                "sm_90 code from CUDA {}.{} must be recompiled with toolkit >= CUDA 12.0 (as nvlink requires)",
                cubin.header.e_version / 10,
                cubin.header.e_version % 10
            ),
        )
        .in_file(name));
    }
    check_limits(&cubin).map_err(|e| e.in_file(name))?;
    check_subformats(&cubin).map_err(|e| e.in_file(name))?;
    let n = cubin.sections.len();
    let mut func_sym = vec![0u32; n];
    let mut owner = vec![None; n];
    for s in &cubin.sections {
        if s.name.starts_with(".text.") && s.flags & crate::elf::SHF_EXECINSTR != 0 {
            // sm_75..89 keep the register count in the top byte of sh_info.
            if s.sh_type != crate::elf::SHT_PROGBITS {
                return Err(Error::malformed(format!(
                    "text section has sh_type {:#x}, not SHT_PROGBITS",
                    s.sh_type
                ))
                .in_file(name)
                .in_section(s.name));
            }
            let sym = s.info & 0x00ff_ffff;
            if sym == 0 || sym as usize >= cubin.symbols.len() {
                return Err(Error::malformed(format!(
                    "sh_info {:#x} of a text section does not name a symbol",
                    s.info
                ))
                .in_file(name)
                .in_section(s.name));
            }
            func_sym[s.index as usize] = sym;
            owner[s.index as usize] = Some(s.index);
        }
    }
    // Sections tied to a function through sh_info (constant0, shared, nv.info.<fn>).
    for s in &cubin.sections {
        if owner[s.index as usize].is_some() || s.is_reloc() {
            continue;
        }
        if let Some(t) = s
            .info_section()
            .filter(|&t| (t as usize) < n && func_sym[t as usize] != 0)
        {
            owner[s.index as usize] = Some(t);
        }
    }
    // Relocation sections follow their target.
    for s in &cubin.sections {
        if s.is_reloc() {
            owner[s.index as usize] = owner.get(s.info as usize).copied().flatten();
        }
    }
    let named_tables = if cubin
        .sections
        .iter()
        .any(|s| s.sh_type == SHT_CUDA_CONSTANT2)
    {
        let mut v: Vec<u32> = cubin
            .symbols
            .iter()
            .filter(|y| y.ty() != STT_SECTION)
            .filter_map(|y| y.section())
            .filter(|&i| {
                cubin
                    .sections
                    .get(i as usize)
                    .is_some_and(|s| s.sh_type == SHT_CUDA_CONSTANT2)
            })
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    } else {
        Vec::new()
    };
    Ok(InputFile {
        id,
        name,
        cubin,
        owner,
        func_sym,
        named_tables,
    })
}

/// The largest `sh_addralign` an input section may have. Real cubins use at
/// most 128; the limit keeps alignment padding (and so output size and memory)
/// proportional to the input size whatever the headers claim.
pub(crate) const MAX_SECTION_ALIGN: u64 = 4096;

/// The largest section size and in-section symbol value or size culink links
/// (1 TiB, beyond any GPU memory): sums of many such values cannot overflow.
pub(crate) const MAX_SECTION_SIZE: u64 = 1 << 40;

/// Rejects sizes, alignments and symbol values beyond culink's limits, so that
/// no later phase overflows its arithmetic or pads the output without bound.
fn check_limits(cubin: &Cubin<'_>) -> Result<()> {
    let over = |what: String| Error::new(ErrorKind::Overflow, what);
    for s in cubin.sections.iter().skip(1) {
        if s.sh_type == crate::elf::SHT_NULL {
            return Err(Error::malformed(
                "inactive (SHT_NULL) section header after section 0; cubins have none",
            )
            .in_section(s.name));
        }
        if s.addralign > MAX_SECTION_ALIGN {
            return Err(over(format!(
                "section alignment {:#x} exceeds culink's limit of {MAX_SECTION_ALIGN:#x}",
                s.addralign
            ))
            .in_section(s.name));
        }
        if s.size > MAX_SECTION_SIZE {
            return Err(over(format!(
                "section size {:#x} exceeds culink's limit of {MAX_SECTION_SIZE:#x}",
                s.size
            ))
            .in_section(s.name));
        }
    }
    for sym in &cubin.symbols {
        let bad_align = |v: u64| v > MAX_SECTION_ALIGN || (v > 1 && !v.is_power_of_two());
        if sym.shndx == crate::elf::SHN_COMMON
            && (bad_align(sym.value) || sym.size > MAX_SECTION_SIZE)
        {
            // `.common` variables keep their alignment in st_value.
            return Err(over(format!(
                "common symbol alignment {:#x} (a power of two up to {MAX_SECTION_ALIGN:#x}) / size {:#x} out of range",
                sym.value, sym.size
            ))
            .in_section(".symtab")
            .for_symbol(sym.name));
        }
        let Some(sec) = cubin.symbol_section(sym) else {
            continue;
        };
        // Shared variables keep their alignment in st_value (COMMON-style).
        let shared = sec.sh_type == crate::elf::SHT_CUDA_SHARED
            && sym.other & crate::elf::STO_CUDA_SHARED != 0;
        let bad_value = if shared {
            bad_align(sym.value)
        } else {
            sym.value > MAX_SECTION_SIZE
        };
        if bad_value || sym.size > MAX_SECTION_SIZE {
            return Err(over(format!(
                "symbol value {:#x} / size {:#x} exceeds culink's limits",
                sym.value, sym.size
            ))
            .in_section(sec.name)
            .for_symbol(sym.name));
        }
    }
    Ok(())
}

/// Decodes every section with an inner format (EIATTR, EICOMPAT, notes, call
/// graph, prototypes) once, up front: a malformed record is an error naming the
/// section and offset even where a later phase would skip or rebuild it.
fn check_subformats(cubin: &Cubin<'_>) -> Result<()> {
    use crate::cubin::{callgraph, compat, eiattr, notes};
    use crate::elf::*;
    for s in &cubin.sections {
        let checked = match s.sh_type {
            // Walked without collecting (one Vec per section was ~13 allocations per object).
            SHT_CUDA_INFO => {
                eiattr::Iter::<eiattr::EiAttr>::new(s.data).try_for_each(|r| r.map(drop))
            }
            SHT_CUDA_COMPAT => compat::parse(s.data).map(drop),
            SHT_CUDA_CALLGRAPH => callgraph::CallGraph::parse(s.data).map(drop),
            SHT_CUDA_PROTOTYPE => callgraph::parse_prototypes(s.data).map(drop),
            SHT_NOTE => notes::parse_notes(s.data).and_then(|list| {
                for n in &list {
                    n.tkinfo().transpose()?;
                    // CUDA 12's `.note.nv.cuver` shares the cuinfo note type with a
                    // 12-byte descriptor (version 1); only cuinfo notes are checked.
                    if s.name != ".note.nv.cuver" {
                        n.cuinfo().transpose()?;
                    }
                }
                Ok(())
            }),
            _ => Ok(()),
        };
        checked.map_err(|e| e.in_section(s.name))?;
    }
    Ok(())
}

/// Defined global symbol names of every member of the archive at `path`
/// whose device code is for `arch` (members without code for it are
/// skipped): (member display name, names). For diagnostics only: failures
/// give nothing. PTX-only members are not compiled.
pub(crate) fn archive_definitions(path: &Path, arch: SmArch) -> Vec<(String, Vec<String>)> {
    let name = path.display().to_string();
    let Ok(blob) = map_file(path, &name, 0) else {
        return Vec::new();
    };
    let data: &[u8] = match &blob {
        Blob::Mapped(m) => m,
        Blob::Owned(b) => b,
    };
    let Ok(ar) = Archive::parse(data) else {
        return Vec::new();
    };
    // No ptxas: a PTX member would need compiling, which a hint is not worth.
    let ctx = Ctx {
        arch,
        ptxas: Some(Path::new("/nonexistent/culink-hints-no-ptxas")),
        ptxas_options: Vec::new(),
        quiet_arch: true,
        ids_only: false,
        lto: false,
    };
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut out = Vec::new();
    for m in &ar.members {
        let mname = format!("{name}({})", m.name);
        let owned;
        let bytes: &[u8] = match &m.data {
            MemberData::Inline(b) => b,
            MemberData::External(rel) => match std::fs::read(dir.join(rel)) {
                Ok(v) => {
                    owned = v;
                    &owned
                }
                Err(_) => continue,
            },
        };
        let Ok((_, Ok(img))) = ctx.expand_object(bytes, &mname, "", &mut Vec::new()) else {
            continue;
        };
        let Ok(c) = Cubin::parse(&img) else { continue };
        if c.arch().sm != arch.sm {
            continue;
        }
        let names: Vec<String> = c
            .symbols
            .iter()
            .filter(|s| s.bind() != crate::elf::STB_LOCAL && !s.is_undefined())
            .map(|s| s.name.to_string())
            .collect();
        out.push((mname, names));
    }
    out
}

/// At most this many inputs get their code split into a mapping of its own
/// (each split adds two memory mappings; Linux allows 65,530 per process by
/// default).
const MAX_CODE_SPLITS: usize = 16_000;

/// The address ranges the inputs' images are mapped in (runs of adjacent
/// input mappings, `inmap`), so that their resident pages can be given back
/// while the link does not need them.
pub(crate) struct Mappings<'m> {
    /// (start, end) of each run, by address.
    runs: Vec<(usize, usize)>,
    splits: std::sync::atomic::AtomicUsize,
    _inputs: std::marker::PhantomData<&'m ()>,
}

/// The pages holding one input image inside one run of mappings, which the link
/// drops from memory between their uses (dropped pages are read again from
/// the file on the next access: the mappings are read-only and private).
pub(crate) struct DeferredPages<'m> {
    /// Index of the run in [`Mappings`].
    run: usize,
    /// Start of the image's first page (address).
    start: usize,
    /// End of the image's last page (address).
    end: usize,
    _inputs: std::marker::PhantomData<&'m ()>,
}

impl<'m> Mappings<'m> {
    /// The runs of the mappings of `blobs` and of the mapped thin-archive
    /// members of `images`.
    pub(crate) fn new(blobs: &'m [NamedBlob], images: &'m [Image<'_>]) -> Self {
        let runs: Vec<(usize, usize)> = blobs
            .iter()
            .filter_map(|b| match &b.blob {
                Blob::Mapped(m) => Some(m),
                Blob::Owned(_) => None,
            })
            .chain(images.iter().filter_map(|i| match &i.bytes {
                ImageBytes::Mapped(m) => Some(m),
                _ => None,
            }))
            .map(|m| m.pages())
            .collect();
        Mappings {
            runs: super::inmap::runs(runs),
            splits: std::sync::atomic::AtomicUsize::new(0),
            _inputs: std::marker::PhantomData,
        }
    }

    /// Splits `file`'s code into a mapping of its own, so that the kernel's
    /// fault-around, which maps up to 64 KiB of cached pages around any
    /// touched page of the same mapping, does not bring the code back while
    /// the phases before the write read the metadata in front of it or the
    /// write copies the constants behind it; returns the image's own pages.
    /// `None` when the image is not mapped.
    /// Advisory only: a failed `madvise` changes nothing. Once every input is
    /// split, [`Mappings::drop_resident`] drops all their pages.
    pub(crate) fn defer(&self, file: &InputFile<'_>) -> Option<DeferredPages<'m>> {
        let page = super::inmap::page_size();
        let data = file.cubin.data;
        let (lo, hi) = (data.as_ptr() as usize, data.as_ptr() as usize + data.len());
        let i = self.runs.partition_point(|r| r.0 <= lo).checked_sub(1)?;
        let (base, run_end) = self.runs[i];
        if hi > run_end {
            return None;
        }
        let (mut code_lo, mut code_hi) = (hi, lo);
        for s in &file.cubin.sections {
            if s.flags & crate::elf::SHF_EXECINSTR != 0 && !s.data.is_empty() {
                code_lo = code_lo.min(s.data.as_ptr() as usize);
                code_hi = code_hi.max(s.data.as_ptr() as usize + s.data.len());
            }
        }
        // The pages holding the image (a page it shares with a neighbouring
        // archive member included: dropping is advisory, a dropped page only
        // has to be read again).
        let round_up = |a: usize| (a - base).div_ceil(page) * page + base;
        let round_down = |a: usize| (a - base) / page * page + base;
        let (start, end) = (round_down(lo), round_up(hi));
        let late = round_up(code_lo).clamp(start, end);
        let code_end = round_down(code_hi.max(code_lo));
        if code_end >= late + 2 * page
            && self
                .splits
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                < MAX_CODE_SPLITS
        {
            super::inmap::split_off(late, code_end);
        }
        Some(DeferredPages {
            run: i,
            start,
            end,
            _inputs: std::marker::PhantomData,
        })
    }

    /// Drops the resident pages of every input (one call per run): what
    /// the parse read. Each later phase faults in only the pages it reads (the
    /// metadata in front of the code; see [`Mappings::defer`]).
    pub(crate) fn drop_resident(&self) {
        for &(lo, hi) in &self.runs {
            super::inmap::drop_pages(lo, hi);
        }
    }
}

/// The write's page release: which inputs each output range copies from.
pub(crate) struct Release<'m> {
    /// Per file, its deferred pages.
    pages: Vec<Option<DeferredPages<'m>>>,
    /// (output offset where a copied input section starts, its file), by offset.
    spans: Vec<(u64, FileId)>,
    next: usize,
    /// Per run: the address range of the pages to drop after this window.
    pending: Vec<(usize, usize)>,
}

impl<'m> Release<'m> {
    /// `spans`: the output offsets of the copied input sections and their files.
    pub(crate) fn new(
        pages: Vec<Option<DeferredPages<'m>>>,
        mut spans: Vec<(u64, FileId)>,
    ) -> Self {
        spans.sort_unstable_by_key(|s| s.0);
        let runs = pages.iter().flatten().map(|p| p.run + 1).max().unwrap_or(0);
        Release {
            pages,
            spans,
            next: 0,
            pending: vec![(usize::MAX, 0); runs],
        }
    }

    /// Called once the output up to `written` is complete: drops the pages of
    /// the inputs that the window just written copied from, as one address
    /// range per run (from the first such input's pages to the last's;
    /// inputs in between and an input whose sections lie in several windows
    /// are read again when needed and dropped again after).
    pub(crate) fn release_written(&mut self, written: u64) {
        while let Some(&(at, file)) = self.spans.get(self.next) {
            if at >= written {
                break;
            }
            self.next += 1;
            if let Some(p) = &self.pages[file.0 as usize] {
                let r = &mut self.pending[p.run];
                *r = (r.0.min(p.start), r.1.max(p.end));
            }
        }
        for r in &mut self.pending {
            if r.0 < r.1 {
                super::inmap::drop_pages(r.0, r.1);
            }
            *r = (usize::MAX, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(
        id: Option<&str>,
        refs: Option<&[&str]>,
        image: Option<usize>,
        group: Group,
    ) -> Module {
        Module {
            info: ModuleInfo {
                reg_id: id.map(String::from),
                kernel_refs: refs.map(|r| r.iter().map(|s| s.to_string()).collect()),
                variable_refs: Vec::new(),
            },
            image,
            group,
        }
    }

    fn image(group: Group) -> Image<'static> {
        Image {
            name: String::new(),
            bytes: ImageBytes::Owned(Vec::new()),
            group,
        }
    }

    const DEVRT: Group = Group::DevRt { lazy: false };

    #[test]
    fn register_ids_and_pruning_rule() {
        let images = [image(Group::Always), image(Group::Always), image(DEVRT)];
        let a = module(Some("_a"), Some(&["_Z1k*"]), Some(0), Group::Always);
        let noarch = module(Some("_na"), Some(&[]), None, Group::Always);
        let b = module(Some("_b"), Some(&[]), Some(1), Group::Always);
        let devrt = module(Some("_rt"), Some(&["__nv_static_*x*"]), Some(2), DEVRT);
        let plain = module(None, None, None, Group::Always);
        let all = [a.clone(), noarch.clone(), b.clone(), devrt.clone()];
        // Everything loaded, every module with host information.
        let (ids, prune) = loaded_modules(&all, &images, &[true, true, true]);
        assert_eq!(ids, ["_a", "_na", "_b", "_rt"]);
        assert_eq!(prune, Some(vec!["_Z1k*".into(), "__nv_static_*x*".into()]));
        // libcudadevrt not loaded: not registered.
        let (ids, _) = loaded_modules(&all, &images, &[true, true, false]);
        assert_eq!(ids, ["_a", "_na", "_b"]);
        // Only libcudadevrt's lists name kernels: no pruning.
        let (_, prune) = loaded_modules(&[b.clone(), devrt], &images, &[true, true, true]);
        assert_eq!(prune, None);
        // A plain host object: not registered, pruning off.
        let (ids, prune) = loaded_modules(&[a.clone(), plain], &images, &[true, true, true]);
        assert_eq!((ids, prune), (vec!["_a".to_string()], None));
        // A cubin (registered by path, no host information): pruning off.
        let cubin = module(Some("_tmp_a_cubin"), None, Some(1), Group::Always);
        let (ids, prune) = loaded_modules(&[a, cubin], &images, &[true, true, true]);
        assert_eq!((ids.len(), prune), (2, None));
    }

    #[test]
    fn path_ids() {
        assert_eq!(mangle_id("/tmp/dl/./a.cubin"), "_tmp_dl___a_cubin");
        assert_eq!(mangle_id("/x/é.o"), "_x____o"); // é is two bytes
        assert_eq!(
            mangle_path_id(Path::new("/tmp/dl/sub/../a.fatbin")),
            "_tmp_dl_sub____a_fatbin"
        );
        let rel = mangle_path_id(Path::new("a.o"));
        assert!(rel.starts_with('_') && rel.ends_with("_a_o"), "{rel}");
    }
}
