//! Finding and opening `libascendcl.so`.

use std::env;
use std::fmt;
use std::path::{Path, PathBuf};

use libloading::Library;

/// The library's file name.
pub const LIBRARY_NAME: &str = "libascendcl.so";

/// Environment variable naming the library (a file, or a directory holding
/// it). Checked right after an explicit path.
pub const ENV_OVERRIDE: &str = "ACLMEM_ASCENDCL";

/// The conventional toolkit location of CANN's `set_env.sh` layout.
pub const DEFAULT_TOOLKIT_LIB64: &str = "/usr/local/Ascend/ascend-toolkit/latest/lib64";

/// One place the loader looked, and why it did not load from there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// Where it looked (`"$ASCEND_HOME_PATH/lib64"` style sources are
    /// expanded; a skipped source is named as such).
    pub candidate: String,
    /// What went wrong.
    pub error: String,
}

/// Why the driver could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoadError {
    /// No candidate could be opened.
    NotFound {
        /// Every candidate, in search order.
        tried: Vec<Attempt>,
    },
    /// The library the caller named (an explicit path, or
    /// `$ACLMEM_ASCENDCL`) did not load. Nothing else is tried: on a CANN
    /// machine a typo must not silently load the installed library.
    Named {
        /// Who named it: `"explicit path"` or `"$ACLMEM_ASCENDCL"`.
        source: String,
        /// The path as given (a directory is looked into for
        /// `libascendcl.so`).
        path: PathBuf,
        /// Why it did not load.
        error: String,
    },
    /// The library opened but lacks a symbol the driver requires.
    MissingSymbol {
        /// The symbol.
        symbol: &'static str,
        /// The library that lacks it.
        library: String,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::NotFound { tried } => {
                writeln!(f, "could not load {LIBRARY_NAME}; tried, in order:")?;
                for (i, a) in tried.iter().enumerate() {
                    writeln!(f, "  {}. {}: {}", i + 1, a.candidate, a.error)?;
                }
                write!(
                    f,
                    "install the CANN toolkit and source its set_env.sh, or set {ENV_OVERRIDE}"
                )
            }
            LoadError::Named {
                source,
                path,
                error,
            } => write!(
                f,
                "could not load {} (named by {source}): {error}",
                path.display()
            ),
            LoadError::MissingSymbol { symbol, library } => write!(
                f,
                "{library} does not export the required symbol `{symbol}` (CANN too old, or not libascendcl)"
            ),
        }
    }
}

impl std::error::Error for LoadError {}

/// The error with its sources (libloading puts dlerror()'s text there).
fn describe(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// How the library this process already had loaded is named.
const ALREADY_LOADED: &str = "libascendcl.so already loaded in this process";

/// The `libascendcl.so` this process already has loaded (by a C extension,
/// a framework, or the dynamic linker at start-up), if any. Binding to it
/// keeps one runtime per process, as pyACL does, where loading another file
/// of that name would start a second runtime that knows none of the first
/// one's memory.
fn already_loaded() -> Option<(Library, String)> {
    // SAFETY: with RTLD_NOLOAD, dlopen loads nothing: it only hands out
    // another reference to a library the process already loaded, whose
    // initialisers have run.
    let library = unsafe {
        libloading::os::unix::Library::open(Some(LIBRARY_NAME), libc::RTLD_NOW | libc::RTLD_NOLOAD)
    }
    .ok()?;
    Some((library.into(), ALREADY_LOADED.into()))
}

/// Where to look, in order.
#[derive(Debug, Clone, Default)]
pub struct SearchPath {
    /// A path given by the caller (file or directory).
    pub explicit: Option<PathBuf>,
}

enum Candidate {
    Path(String, PathBuf),
    Skipped(String, &'static str),
    LoaderSearch,
}

fn file_in(p: PathBuf) -> PathBuf {
    if p.is_dir() { p.join(LIBRARY_NAME) } else { p }
}

impl SearchPath {
    /// The library the caller named, if any: the explicit path, else
    /// `$ACLMEM_ASCENDCL`.
    fn named(&self) -> Option<(String, PathBuf)> {
        if let Some(p) = &self.explicit {
            return Some(("explicit path".into(), p.clone()));
        }
        env::var_os(ENV_OVERRIDE)
            .filter(|v| !v.is_empty())
            .map(|v| (format!("${ENV_OVERRIDE}"), PathBuf::from(v)))
    }

    fn candidates(&self) -> Vec<Candidate> {
        let mut out = vec![Candidate::Skipped(format!("${ENV_OVERRIDE}"), "not set")];
        for var in ["ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"] {
            match env::var_os(var) {
                Some(v) if !v.is_empty() => out.push(Candidate::Path(
                    format!("${var}/lib64"),
                    Path::new(&v).join("lib64").join(LIBRARY_NAME),
                )),
                _ => out.push(Candidate::Skipped(format!("${var}/lib64"), "not set")),
            }
        }
        out.push(Candidate::Path(
            "CANN default".into(),
            Path::new(DEFAULT_TOOLKIT_LIB64).join(LIBRARY_NAME),
        ));
        out.push(Candidate::LoaderSearch);
        out
    }

    /// Opens the library given by an explicit path; else the one this
    /// process already has loaded; else the one `$ACLMEM_ASCENDCL` names;
    /// else the first candidate that loads.
    pub(crate) fn open(&self) -> Result<(Library, String), LoadError> {
        if self.explicit.is_none()
            && let Some(found) = already_loaded()
        {
            return Ok(found);
        }
        if let Some((source, given)) = self.named() {
            let path = file_in(given.clone());
            let named_error = |error: String| LoadError::Named {
                source: source.clone(),
                path: given.clone(),
                error,
            };
            if !path.exists() {
                return Err(named_error(format!("{}: no such file", path.display())));
            }
            // SAFETY: as for the search below: the library the user named.
            return match unsafe { Library::new(&path) } {
                Ok(l) => Ok((l, path.display().to_string())),
                Err(e) => Err(named_error(describe(&e))),
            };
        }
        let mut tried = vec![Attempt {
            candidate: ALREADY_LOADED.into(),
            error: "not loaded".into(),
        }];
        for c in self.candidates() {
            let (label, result) = match c {
                Candidate::Skipped(source, why) => {
                    tried.push(Attempt {
                        candidate: source,
                        error: why.into(),
                    });
                    continue;
                }
                Candidate::Path(source, path) => {
                    let label = format!("{} ({source})", path.display());
                    if !path.exists() {
                        tried.push(Attempt {
                            candidate: label,
                            error: "no such file".into(),
                        });
                        continue;
                    }
                    // SAFETY: loading a library runs its initialisers. We
                    // load only libascendcl.so from the places CANN documents
                    // or the user names; its initialisers are the vendor's
                    // (or the aclmem emulator's), which is the point of this
                    // crate. No Rust invariant depends on them.
                    (
                        label,
                        unsafe { Library::new(&path) }.map(|l| (l, path.display().to_string())),
                    )
                }
                Candidate::LoaderSearch => {
                    let label = format!(
                        "{LIBRARY_NAME} (dynamic loader search: LD_LIBRARY_PATH, ld.so.cache, system paths)"
                    );
                    // SAFETY: as above.
                    (
                        label,
                        unsafe { Library::new(LIBRARY_NAME) }
                            .map(|l| (l, LIBRARY_NAME.to_string())),
                    )
                }
            };
            match result {
                Ok(found) => return Ok(found),
                Err(e) => tried.push(Attempt {
                    candidate: label,
                    error: describe(&e),
                }),
            }
        }
        Err(LoadError::NotFound { tried })
    }
}
