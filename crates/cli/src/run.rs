//! `aclmem run [settings] -- program [args]`: runs any program on the
//! emulated machine. The program (and everything it starts) finds the
//! emulated `libascendcl.so` first on its library path and through
//! `$ACLMEM_ASCENDCL`, Python children find pyACL's `acl` module (aclmem's)
//! when the package is installed, and the machine's settings are the
//! options given, else the `ACLMEM_EMU_*` variables already set.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use aclmem_emu::EmuConfig;

/// Options of `aclmem run`: each setting overrides its environment
/// variable.
#[derive(clap::Args)]
pub struct Options {
    /// The emulated library (default: $ACLMEM_ASCENDCL, or beside this
    /// executable).
    #[arg(long)]
    pub lib: Option<PathBuf>,
    /// The machine to join ($ACLMEM_EMU_MACHINE; default `default`):
    /// processes of one machine share its memory.
    #[arg(long)]
    pub machine: Option<String>,
    /// The SoC name aclrtGetSocName answers, which decides the product
    /// ($ACLMEM_EMU_SOC; default Ascend910B3).
    #[arg(long)]
    pub soc: Option<String>,
    /// Number of devices ($ACLMEM_EMU_DEVICES).
    #[arg(long)]
    pub devices: Option<String>,
    /// HBM per device, e.g. 64GiB ($ACLMEM_EMU_HBM).
    #[arg(long)]
    pub hbm: Option<String>,
    /// Host memory, e.g. 256GiB ($ACLMEM_EMU_HOST).
    #[arg(long)]
    pub host: Option<String>,
    /// The CANN release emulated, e.g. 8.3 ($ACLMEM_EMU_CANN).
    #[arg(long)]
    pub cann: Option<String>,
    /// ep or rc ($ACLMEM_EMU_RUN_MODE).
    #[arg(long)]
    pub run_mode: Option<String>,
    /// The driver package's version, e.g. 25.3.rc1, or `none`
    /// ($ACLMEM_EMU_DRIVER; default 26.0.rc1, the HDK paired with CANN 9.0).
    #[arg(long)]
    pub driver: Option<String>,
    /// A fault to inject, e.g. `aclrtMalloc@3=207001` (repeatable; added to
    /// $ACLMEM_EMU_FAULTS; grammar in docs/faults.md).
    #[arg(long = "fault", value_name = "SPEC")]
    pub faults: Vec<String>,
    /// Play one rank of a world of N ranks, without its peers
    /// ($ACLMEM_HCCL_FAKE_WORLD): every HCCL communicator is made at once
    /// and every collective completes at once, with deterministic outputs
    /// (docs/hccl.md), to see one rank's memory of a job too large to run.
    /// Sets WORLD_SIZE, RANK (--fake-rank) and LOCAL_RANK (0) unless set.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub fake_world: Option<u32>,
    /// Write a rank table for a job on these hosts (IP addresses, in node
    /// order; each with --devices NPUs, rank = node * devices + device)
    /// and point RANK_TABLE_FILE at it: HCCL's communicators are then made
    /// from it (HcclCommInitClusterInfo), rank 0 serving the rendezvous at
    /// its address. Run the same command on every host.
    #[arg(long, value_name = "IP,IP,...", value_delimiter = ',')]
    pub rank_table_hosts: Vec<std::net::IpAddr>,
    /// The port of rank 0 in the rank table (each device of a host takes
    /// the next; default 60000, HCCL's first).
    #[arg(
        long,
        value_name = "PORT",
        default_value_t = 60000,
        requires = "rank_table_hosts"
    )]
    pub rank_table_port: u16,
    /// What the device does with operators: `compute` (the default:
    /// operators with a kernel are computed, others answer 100024) or
    /// `plan` (every operator is checked and accepted without computing,
    /// copies move no data: a step's memory without its values)
    /// ($ACLMEM_EMU_OPS).
    #[arg(long, value_name = "MODE")]
    pub ops: Option<String>,
    /// The rank played in the fake world (default 0).
    #[arg(long, value_name = "R", requires = "fake_world")]
    pub fake_rank: Option<u32>,
    /// The program and its arguments (after `--`).
    #[arg(last = true, required = true)]
    pub program: Vec<String>,
}

const LIB: &str = "libascendcl.so";

/// The emulated library: `--lib`, `$ACLMEM_ASCENDCL`, or beside this
/// executable (the wheel's `aclmem/_lib`, or `target/<profile>` where
/// `cargo build` puts both).
fn find_lib(explicit: Option<&Path>) -> Result<PathBuf, String> {
    let file_in = |p: PathBuf| if p.is_dir() { p.join(LIB) } else { p };
    let named = explicit.map(Path::to_path_buf).or_else(|| {
        std::env::var_os("ACLMEM_ASCENDCL")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    });
    if let Some(p) = named {
        let p = file_in(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("{}: no such file", p.display()))
        };
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = exe.parent().ok_or("no directory")?;
    let beside = dir.join(LIB);
    if beside.is_file() {
        return Ok(beside);
    }
    Err(format!(
        "{LIB} not found beside {} (build it with `cargo build`, or name it with --lib or $ACLMEM_ASCENDCL)",
        exe.display()
    ))
}

/// A directory in which every CANN library of the catalogue
/// (`libascendcl.so`, `libhccl.so`, `libacl_op_compiler.so`, ...) is a
/// symbolic link to `lib`: a framework that links them all (torch_npu)
/// loads one object, because the dynamic loader knows a file it has already
/// loaded under another name by its device and inode. So a process has one
/// emulator however many of those names it loads.
///
/// The links are made beside `lib` when that directory is writable (a
/// build directory, a virtual environment), else in a private directory of
/// this user (`$XDG_RUNTIME_DIR/aclmem` or `/tmp/aclmem-<uid>`), named for
/// the library's inode. Beside a real CANN installation (one of the other
/// libraries is a file there) nothing is laid out: its directory is used
/// as it is.
pub fn framework_dir(lib: &Path) -> Result<PathBuf, String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(lib).map_err(|e| format!("{}: {e}", lib.display()))?;
    let same = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.dev() == meta.dev() && m.ino() == meta.ino())
    };
    let link_all = |dir: &Path| -> std::io::Result<()> {
        for library in aclmem_sys::catalogue::Library::ALL {
            let link = dir.join(library.soname());
            if same(&link) {
                continue;
            }
            // A stale link or a leftover of another build is replaced;
            // a regular file of that name is kept (someone else's).
            if link
                .symlink_metadata()
                .is_ok_and(|m| m.file_type().is_symlink())
            {
                std::fs::remove_file(&link)?;
            }
            std::os::unix::fs::symlink(lib, &link)?;
            if !same(&link) {
                return Err(std::io::Error::other(format!(
                    "{} is not {}",
                    link.display(),
                    lib.display()
                )));
            }
        }
        Ok(())
    };
    let beside = lib.parent().unwrap_or(Path::new("/"));
    // A CANN installation (`--lib` naming the real library): its other
    // libraries are real files beside it; nothing is laid out over them.
    let installed = aclmem_sys::catalogue::Library::ALL.iter().any(|l| {
        l.soname() != LIB
            && beside
                .join(l.soname())
                .symlink_metadata()
                .is_ok_and(|m| m.file_type().is_file())
    });
    if installed || link_all(beside).is_ok() {
        return Ok(beside.to_path_buf());
    }
    let private = private_dir(&format!("libs-{}-{}", meta.dev(), meta.ino()))?;
    link_all(&private).map_err(|e| format!("{}: {e}", private.display()))?;
    Ok(private)
}

/// A directory `name` in this user's private directory for aclmem
/// (`$XDG_RUNTIME_DIR/aclmem` or `/tmp/aclmem-<uid>`), created if needed;
/// refused unless that directory is this user's and no one else may write
/// it.
fn private_dir(name: &str) -> Result<PathBuf, String> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|v| !v.is_empty())
        .map(|d| PathBuf::from(d).join("aclmem"))
        .unwrap_or_else(|| std::env::temp_dir().join(format!("aclmem-{uid}")));
    let private = base.join(name);
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&private)
            .map_err(|e| format!("{}: {e}", private.display()))?;
    }
    // Only a directory of this user's that no one else can write is used.
    let m = std::fs::symlink_metadata(&base).map_err(|e| e.to_string())?;
    if m.uid() != uid || m.mode() & 0o022 != 0 || !m.is_dir() {
        return Err(format!(
            "{} is not a private directory of this user",
            base.display()
        ));
    }
    Ok(private)
}

/// What a CANN toolkit installation gives a program to find, laid out for
/// the emulated release in a private directory (named for the release and
/// the library), so that `ASCEND_HOME_PATH` (and `ASCEND_TOOLKIT_HOME`,
/// `ASCEND_OPP_PATH`) can name it: `lib64/` with every CANN library name
/// of the catalogue linked to `lib`, the `runtime/`, `compiler/` and `opp/`
/// directories torch_npu checks at import, `share/info/<package>/version.info`
/// (`Version=<release>`) for the runtime's packages, and
/// `<arch>-linux/ascend_toolkit_install.info` (`version=<release>`), which
/// torch_npu's environment report reads. No operator library (`libopapi`)
/// is there: frameworks then take the operator path the emulator carries
/// out. Without it, torch_npu prints a warning on standard output at
/// import (`docs/torch-npu.md`).
pub fn installation(lib: &Path, release: &str) -> Result<PathBuf, String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(lib).map_err(|e| format!("{}: {e}", lib.display()))?;
    let home = private_dir(&format!("cann-{release}-{}-{}", meta.dev(), meta.ino()))?;
    let io = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    let lib64 = home.join("lib64");
    for d in ["runtime", "compiler", "opp", "lib64"] {
        let d = home.join(d);
        std::fs::create_dir_all(&d).map_err(|e| io(&d, e))?;
    }
    for library in aclmem_sys::catalogue::Library::ALL {
        let link = lib64.join(library.soname());
        if std::fs::read_link(&link).is_ok_and(|t| t == lib) {
            continue;
        }
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(lib, &link).map_err(|e| io(&link, e))?;
    }
    let version = format!("Version={release}\n");
    for package in ["runtime", "compiler", "hccl", "opp", "toolkit"] {
        let dir = home.join("share").join("info").join(package);
        std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
        let file = dir.join("version.info");
        std::fs::write(&file, &version).map_err(|e| io(&file, e))?;
    }
    let arch = home.join(format!("{}-linux", std::env::consts::ARCH));
    std::fs::create_dir_all(&arch).map_err(|e| io(&arch, e))?;
    let info = arch.join("ascend_toolkit_install.info");
    std::fs::write(
        &info,
        format!(
            "package_name=Ascend-cann-toolkit\nversion={release}\narch={}\nos=linux\n",
            std::env::consts::ARCH
        ),
    )
    .map_err(|e| io(&info, e))?;
    Ok(home)
}

/// HCCL's rank table (`docs/hccl.md`) for `hosts`, each with `devices`
/// NPUs, written to this user's private directory (named for this run);
/// its path.
pub fn write_rank_table(
    hosts: &[std::net::IpAddr],
    devices: u32,
    port: u16,
) -> Result<PathBuf, String> {
    let table = aclmem_formats::rank_table::RankTable::for_hosts(hosts, devices, port)
        .ok_or_else(|| format!("ports {port} and {devices} more do not fit"))?;
    let path = private_dir("rank-tables")?.join(format!("{}.json", std::process::id()));
    std::fs::write(&path, table.to_json()).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// `dir` first, then what `var` already holds.
pub fn prepended(var: &str, dir: &Path) -> OsString {
    let mut value = OsString::from(dir);
    if let Some(old) = std::env::var_os(var).filter(|v| !v.is_empty()) {
        value.push(":");
        value.push(old);
    }
    value
}

pub fn run(o: Options) -> ExitCode {
    let fail = |e: String| {
        eprintln!("error: {e}");
        ExitCode::from(2)
    };
    let lib = match find_lib(o.lib.as_deref()) {
        Ok(l) => std::fs::canonicalize(&l).unwrap_or(l),
        Err(e) => return fail(e),
    };
    let Some((program, args)) = o.program.split_first() else {
        return fail("name the program to run after --".into());
    };
    let ops = match aclmem_emu::OpsMode::parse(
        &o.ops
            .clone()
            .or_else(|| std::env::var("ACLMEM_EMU_OPS").ok())
            .unwrap_or_default(),
    ) {
        Ok(m) => m,
        Err(e) => return fail(e),
    };
    let settings = [
        ("ACLMEM_EMU_MACHINE", o.machine),
        ("ACLMEM_EMU_SOC", o.soc),
        ("ACLMEM_EMU_DEVICES", o.devices),
        ("ACLMEM_EMU_HBM", o.hbm),
        ("ACLMEM_EMU_HOST", o.host),
        ("ACLMEM_EMU_CANN", o.cann),
        ("ACLMEM_EMU_RUN_MODE", o.run_mode),
        ("ACLMEM_EMU_OPS", o.ops),
    ];
    let setting = |name: &str| {
        settings
            .iter()
            .find(|(v, _)| *v == name)
            .and_then(|(_, s)| s.clone())
            .or_else(|| std::env::var(name).ok())
    };
    // The emulator's own parser: a setting it would refuse at aclInit is
    // refused here, before the program starts.
    let config = match EmuConfig::from_env_with(setting) {
        Ok(c) => c,
        Err(e) => return fail(e.to_string()),
    };
    let machine = setting("ACLMEM_EMU_MACHINE")
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| aclmem_emu::DEFAULT_MACHINE.to_owned());
    let dir = match framework_dir(&lib) {
        Ok(d) => d,
        Err(e) => return fail(format!("cannot lay out the CANN libraries: {e}")),
    };
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env("ACLMEM_ASCENDCL", &lib)
        .env("LD_LIBRARY_PATH", prepended("LD_LIBRARY_PATH", &dir));
    if let Some(d) = &o.driver {
        if let Err(e) = aclmem_emu::env::parse_driver(d) {
            return fail(e);
        }
        cmd.env("ACLMEM_EMU_DRIVER", d);
    }
    // A `--fault` that names no fault (empty, or only `;`) is a mistake,
    // not a run without faults.
    if let Some(f) = o
        .faults
        .iter()
        .find(|f| aclmem_emu::faults::parse(f).is_ok_and(|faults| faults.is_empty()))
    {
        return fail(format!(
            "--fault {f:?} names no fault (grammar: docs/faults.md)"
        ));
    }
    // Faults: the environment's, then the options', in one spec the
    // emulator's own parser accepts (a bad one is refused here).
    let faults: Vec<String> = std::env::var("ACLMEM_EMU_FAULTS")
        .ok()
        .into_iter()
        .chain(o.faults.iter().cloned())
        .filter(|f| !f.trim().is_empty())
        .collect();
    if !faults.is_empty() {
        let spec = faults.join(";");
        if let Err(e) = aclmem_emu::faults::parse(&spec) {
            return fail(e.to_string());
        }
        cmd.env("ACLMEM_EMU_FAULTS", spec);
    }
    if !o.rank_table_hosts.is_empty() {
        match write_rank_table(&o.rank_table_hosts, config.devices, o.rank_table_port) {
            Ok(path) => {
                cmd.env("RANK_TABLE_FILE", path);
            }
            Err(e) => return fail(format!("cannot write the rank table: {e}")),
        }
    }
    if let Some(world) = o.fake_world {
        let rank = o.fake_rank.unwrap_or(0);
        if rank >= world {
            return fail(format!(
                "--fake-rank {rank} is not a rank of a world of {world}"
            ));
        }
        cmd.env("ACLMEM_HCCL_FAKE_WORLD", world.to_string());
        for (var, value) in [
            ("WORLD_SIZE", world.to_string()),
            ("RANK", rank.to_string()),
            ("LOCAL_RANK", "0".to_owned()),
        ] {
            if std::env::var_os(var).is_none() {
                cmd.env(var, value);
            }
        }
    }
    // An installation to find, unless the environment names one already
    // (a real CANN's, or the user's).
    if std::env::var_os("ASCEND_HOME_PATH").is_none_or(|v| v.is_empty()) {
        match installation(&lib, config.cann.release()) {
            Ok(home) => {
                cmd.env("ASCEND_HOME_PATH", &home)
                    .env("ASCEND_TOOLKIT_HOME", &home)
                    .env("ASCEND_OPP_PATH", home.join("opp"));
            }
            Err(e) => return fail(format!("cannot lay out the CANN installation: {e}")),
        }
    }
    for (var, value) in &settings {
        if let Some(v) = value {
            cmd.env(var, v);
        }
    }
    // The wheel carries, beside the directory of this executable
    // (`aclmem/_lib`), a directory whose `acl` package is aclmem's pyACL.
    let exe = std::env::current_exe().ok();
    let pyacl = exe
        .as_deref()
        .and_then(Path::parent)
        .and_then(Path::parent)
        .map(|d| d.join("_pyacl"));
    if let Some(p) = pyacl.filter(|p| p.join("acl").is_dir()) {
        cmd.env("PYTHONPATH", prepended("PYTHONPATH", &p));
    }
    eprintln!(
        "aclmem run: emulated machine `{machine}` ({config}), operators: {}, no NPU involved; {}",
        ops.name(),
        lib.display()
    );
    if let Some(warning) = ops.warning() {
        eprintln!("aclmem run: {warning}");
    }
    let e = cmd.exec();
    eprintln!("error: cannot run {program}: {e}");
    ExitCode::from(127)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("aclmem-run-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(LIB), b"not really a library").unwrap();
        d
    }

    #[test]
    fn every_cann_name_becomes_the_one_library() {
        let d = scratch("names");
        let lib = d.join(LIB);
        assert_eq!(framework_dir(&lib).unwrap(), d);
        let ino = std::fs::metadata(&lib).unwrap().ino();
        for l in aclmem_sys::catalogue::Library::ALL {
            let m = std::fs::metadata(d.join(l.soname())).unwrap();
            assert_eq!(m.ino(), ino, "{}", l.soname());
        }
        // Again: nothing to do, same answer.
        assert_eq!(framework_dir(&lib).unwrap(), d);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_cann_installation_is_left_as_it_is() {
        let d = scratch("installed");
        std::fs::write(d.join("libhccl.so"), b"the real one").unwrap();
        assert_eq!(framework_dir(&d.join(LIB)).unwrap(), d);
        assert_eq!(
            std::fs::read(d.join("libhccl.so")).unwrap(),
            b"the real one"
        );
        assert!(
            d.join("libgraph.so").symlink_metadata().is_err(),
            "no link laid out"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}
