//! Gloo for the wheels' HCCL engine: its source from the package registry,
//! built with TCP only (no ibverbs, no redis, no MPI) into a static library
//! by zig against glibc [`crate::wheels::GLIBC`], so the engine the wheels
//! carry (`libaclmem_gloo.so`) links Gloo and zig's C++ runtime (libc++,
//! always static) into itself and needs nothing but glibc.
//!
//! Debian's source package is not reachable from here or CI (only its
//! binary packages are), and its `libgloo0` needs glibc 2.34 and a GCC 12
//! `libstdc++`. The registry's sdist of horovod 0.28.1 carries Gloo's
//! upstream source (`third_party/gloo`, Gloo 0.5.0), pinned here by its
//! hash; only that directory is unpacked, under the target directory, and
//! never committed.
//!
//! Everything is cached under `target/gloo`: the sdist, the unpacked tree
//! and one `libgloo.a` per target, rebuilt only when its key (the sdist,
//! the compiler, the flags, the source list) changes.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use xshell::{Shell, cmd};

use crate::workspace::{Result, run};

/// The sdist carrying Gloo, as pip names it.
const SDIST: &str = "horovod==0.28.1";
/// Its sha256 (pip checks it: `--require-hashes`).
const SDIST_SHA256: &str = "92a43f5a94c43907a56805bad15f19700c62ffc83b7ca483f9e104e229f67ef0";
/// The sdist's file name.
const SDIST_FILE: &str = "horovod-0.28.1.tar.gz";
/// Gloo's tree inside it.
const TREE: &str = "horovod-0.28.1/third_party/gloo";
/// Gloo's version in that tree (its CMakeLists.txt), for `config.h`.
const VERSION: (u32, u32, u32) = (0, 5, 0);

/// Gloo's sources for Linux with the TCP transport only: what its CMake
/// lists compile with every option off (`gloo/CMakeLists.txt` and those of
/// `common`, `rendezvous`, `transport`, `transport/tcp`).
const SOURCES: &[&str] = &[
    "gloo/algorithm.cc",
    "gloo/allgather.cc",
    "gloo/allgatherv.cc",
    "gloo/allreduce.cc",
    "gloo/allreduce_local.cc",
    "gloo/alltoall.cc",
    "gloo/alltoallv.cc",
    "gloo/barrier.cc",
    "gloo/broadcast.cc",
    "gloo/context.cc",
    "gloo/gather.cc",
    "gloo/gatherv.cc",
    "gloo/reduce.cc",
    "gloo/scatter.cc",
    "gloo/types.cc",
    "gloo/common/linux.cc",
    "gloo/common/logging.cc",
    "gloo/rendezvous/context.cc",
    "gloo/rendezvous/file_store.cc",
    "gloo/rendezvous/hash_store.cc",
    "gloo/rendezvous/prefix_store.cc",
    "gloo/rendezvous/store.cc",
    "gloo/transport/address.cc",
    "gloo/transport/buffer.cc",
    "gloo/transport/context.cc",
    "gloo/transport/device.cc",
    "gloo/transport/pair.cc",
    "gloo/transport/unbound_buffer.cc",
    "gloo/transport/tcp/address.cc",
    "gloo/transport/tcp/buffer.cc",
    "gloo/transport/tcp/context.cc",
    "gloo/transport/tcp/device.cc",
    "gloo/transport/tcp/error.cc",
    "gloo/transport/tcp/loop.cc",
    "gloo/transport/tcp/pair.cc",
    "gloo/transport/tcp/socket.cc",
    "gloo/transport/tcp/unbound_buffer.cc",
];

/// The flags every Gloo object is compiled with (`-w`: Gloo's warnings
/// are not ours to fix).
const FLAGS: &[&str] = &["-std=c++17", "-O2", "-fPIC", "-fvisibility=hidden", "-w"];

fn root() -> PathBuf {
    crate::workspace::target_dir().join("gloo")
}

/// Gloo's source tree (the directory holding `gloo/`, with `config.h`
/// written for the TCP transport only), fetched and unpacked when missing.
/// `pip` is a pip of any venv.
pub fn source(sh: &Shell, pip: &Path) -> Result<PathBuf> {
    let root = root();
    let tree = root.join("src");
    let config = tree.join("gloo").join("config.h");
    if config.exists() {
        return Ok(tree);
    }
    let download = root.join("download");
    let sdist = download.join(SDIST_FILE);
    if !sdist.exists() {
        sh.create_dir(&download).map_err(|e| e.to_string())?;
        let requirement = root.join("requirement.txt");
        sh.write_file(
            &requirement,
            format!("{SDIST} --hash=sha256:{SDIST_SHA256}\n"),
        )
        .map_err(|e| e.to_string())?;
        run(cmd!(
            sh,
            "{pip} download --quiet --no-deps --no-binary :all: --require-hashes -r {requirement} -d {download}"
        ))?;
    }
    let unpacked = root.join("unpack");
    crate::workspace::remove_dir_if_present(&unpacked)?;
    crate::workspace::remove_dir_if_present(&tree)?;
    sh.create_dir(&unpacked).map_err(|e| e.to_string())?;
    run(cmd!(sh, "tar -xzf {sdist} -C {unpacked} {TREE}"))?;
    std::fs::rename(unpacked.join(TREE), &tree).map_err(|e| e.to_string())?;
    crate::workspace::remove_dir_if_present(&unpacked)?;
    let template = std::fs::read_to_string(tree.join("gloo").join("config.h.in"))
        .map_err(|e| format!("Gloo's config.h.in: {e}"))?;
    std::fs::write(&config, configure(&template)?).map_err(|e| e.to_string())?;
    Ok(tree)
}

/// Gloo's `config.h` from its CMake template: the version, the TCP
/// transport, and every other option off.
fn configure(template: &str) -> Result<String> {
    let (major, minor, patch) = VERSION;
    let mut out = String::new();
    let mut tcp = false;
    for line in template.lines() {
        let line = line
            .replace("@GLOO_VERSION_MAJOR@", &major.to_string())
            .replace("@GLOO_VERSION_MINOR@", &minor.to_string())
            .replace("@GLOO_VERSION_PATCH@", &patch.to_string());
        let line = match line.strip_prefix("#cmakedefine01 ") {
            Some(name) => {
                let on = name.trim() == "GLOO_HAVE_TRANSPORT_TCP";
                tcp |= on;
                format!("#define {} {}", name.trim(), u8::from(on))
            }
            None => line,
        };
        if line.contains('@') || line.contains("#cmakedefine") {
            return Err(format!(
                "Gloo's config.h.in has a line this does not know: {line}"
            ));
        }
        out.push_str(&line);
        out.push('\n');
    }
    if !tcp {
        return Err("Gloo's config.h.in has no GLOO_HAVE_TRANSPORT_TCP".into());
    }
    Ok(out)
}

/// Builds Gloo for `zig_target` (`x86_64-linux-gnu.2.28`) with `zig`
/// (a command: the program and its first arguments) into
/// `target/gloo/<zig_target>/libgloo.a`, beside an `include` link to the
/// tree; gives that directory, which the engine's build reads from
/// `ACLMEM_GLOO_STATIC`.
pub fn static_lib(sh: &Shell, tree: &Path, zig: &[String], zig_target: &str) -> Result<PathBuf> {
    let dir = root().join(zig_target);
    let archive = dir.join("libgloo.a");
    let stamp = dir.join("key");
    let version = Command::new(&zig[0])
        .args(&zig[1..])
        .arg("version")
        .output()
        .map_err(|e| format!("zig: {e}"))?;
    let key = format!(
        "{SDIST_SHA256}\nzig {}\n{}\n{}\n",
        String::from_utf8_lossy(&version.stdout).trim(),
        FLAGS.join(" "),
        SOURCES.join(" ")
    );
    let include = dir.join("include");
    if archive.exists()
        && include.exists()
        && std::fs::read_to_string(&stamp).ok().as_deref() == Some(key.as_str())
    {
        eprintln!("Gloo for {zig_target}: {} (cached)", archive.display());
        return Ok(dir);
    }
    crate::workspace::remove_dir_if_present(&dir)?;
    let objects = dir.join("obj");
    sh.create_dir(&objects).map_err(|e| e.to_string())?;
    std::os::unix::fs::symlink(tree, &include).map_err(|e| e.to_string())?;
    eprintln!(
        "building Gloo ({} files, TCP only) for {zig_target}",
        SOURCES.len()
    );
    let compile = |source: &str| -> Result<PathBuf> {
        let object = objects.join(source.replace('/', "_").replace(".cc", ".o"));
        let out = Command::new(&zig[0])
            .args(&zig[1..])
            .args(["c++", "-target", zig_target])
            .args(FLAGS)
            .arg("-I")
            .arg(tree)
            .arg("-c")
            .arg(tree.join(source))
            .arg("-o")
            .arg(&object)
            .output()
            .map_err(|e| format!("zig c++: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "zig c++ {source} ({zig_target}):\n{}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(object)
    };
    // As many compilers at once as there are cores.
    let jobs = std::thread::available_parallelism().map_or(1, usize::from);
    let queue = Mutex::new(SOURCES.iter());
    let built = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                loop {
                    let next = queue.lock().map(|mut q| q.next().copied());
                    let Ok(Some(source)) = next else { break };
                    let object = compile(source);
                    let failed = object.is_err();
                    if let Ok(mut b) = built.lock() {
                        b.push(object);
                    }
                    if failed {
                        break;
                    }
                }
            });
        }
    });
    let built = built.into_inner().map_err(|e| e.to_string())?;
    let objects: Vec<PathBuf> = built.into_iter().collect::<Result<_>>()?;
    if objects.len() != SOURCES.len() {
        return Err(format!(
            "Gloo: {} of {} objects built",
            objects.len(),
            SOURCES.len()
        ));
    }
    let (program, first) = (&zig[0], &zig[1..]);
    run(cmd!(
        sh,
        "{program} {first...} ar rcs {archive} {objects...}"
    ))?;
    std::fs::write(&stamp, key).map_err(|e| e.to_string())?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::configure;

    #[test]
    fn config_turns_on_the_tcp_transport_only() {
        let template = "#define GLOO_VERSION_MINOR @GLOO_VERSION_MINOR@\n\
                        #cmakedefine01 GLOO_USE_REDIS\n\
                        #cmakedefine01 GLOO_HAVE_TRANSPORT_TCP\n\
                        #cmakedefine01 GLOO_HAVE_TRANSPORT_TCP_TLS\n";
        let config = configure(template).unwrap();
        assert_eq!(
            config,
            "#define GLOO_VERSION_MINOR 5\n\
             #define GLOO_USE_REDIS 0\n\
             #define GLOO_HAVE_TRANSPORT_TCP 1\n\
             #define GLOO_HAVE_TRANSPORT_TCP_TLS 0\n"
        );
        assert!(configure("#cmakedefine01 GLOO_USE_REDIS\n").is_err());
        assert!(configure("#define X @SOMETHING@\n").is_err());
    }
}
