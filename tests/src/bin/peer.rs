//! A process of an emulated machine, scripted line by line on stdin: the
//! multi-process tests start several of these on one machine. It drives the
//! emulated `libascendcl.so` (`$ACLMEM_ASCENDCL`) through `aclmem-driver`,
//! and calls what the driver does not wrap through the library's function
//! table, so every call goes through the C ABI.
//!
//! Each command answers one line: `ok [values]` or `err <code>`.
//!
//! | command | does |
//! |---|---|
//! | `init` | `aclInit`, device 0 |
//! | `pid` | `aclrtDeviceGetBareTgid` |
//! | `malloc <bytes>` | `aclrtMallocPhysical` (HBM, device 0) → handle |
//! | `fill <handle> <byte>` | map the handle, write the byte everywhere, unmap |
//! | `check <handle> <byte>` | map, read back: `ok yes` or `ok no` |
//! | `export <handle> <flags>` | → shareable handle |
//! | `export2 <handle> <flags> [fabric]` | V2, DEFAULT (or FABRIC: 256 hex digits) type → shareable handle |
//! | `setpid2 <shareable> <pid>...` | V2 whitelist, DEFAULT type |
//! | `setpid <shareable> <pid>...` | whitelist |
//! | `import <shareable> <device>` | → handle |
//! | `import2 <shareable> [fabric]` | V2, DEFAULT (or FABRIC) type → handle |
//! | `free <handle>` | `aclrtFreePhysical` |
//! | `devmalloc <bytes>` | `aclrtMalloc` (huge pages first) → address |
//! | `devfree <address>` | `aclrtFree` |
//! | `ipckey <address> <bytes>` | `aclrtIpcMemGetExportKey` (pid checks on) → key |
//! | `ipcpid <key> <pid>...` | `aclrtIpcMemSetImportPid` |
//! | `ipcimport <key>` | `aclrtIpcMemImportByKey` → address |
//! | `meminfo` | `aclrtGetMemInfo(ACL_HBM_MEM)` → free total |
//! | `resources` | → open descriptors, mappings (from /proc/self) |
//! | `fork <handle>` | fork; the child checks it inherited nothing and can join as itself; → `ok <child exit code>` |
//! | `exit` | `aclFinalize`, exit 0 |

use std::io::{BufRead, Write};
use std::num::NonZeroU64;
use std::ptr;

use aclmem_core::{AclError, Location, MIB, MemAttr, RawMemLocation, RawPhysicalMemProp};
use aclmem_driver::{AscendCl, Driver, Runtime};
use aclmem_hal::{PhysicalAllocator, RawHandle, ShareableHandle, ShareableMemory, VirtualMemory};
use aclmem_sys::AclFunctions;

struct Peer {
    cl: std::sync::Arc<AscendCl>,
    f: AclFunctions,
    runtime: Option<Runtime>,
    driver: Option<Driver>,
}

fn prop() -> RawPhysicalMemProp {
    RawPhysicalMemProp {
        mem_attr: MemAttr::HbmMemHuge.raw(),
        location: RawMemLocation {
            id: 0,
            type_: Location::Device.raw(),
        },
        ..RawPhysicalMemProp::default()
    }
}

fn code(e: AclError) -> String {
    format!("err {}", e.code())
}

fn num(word: Option<&str>) -> Result<u64, String> {
    word.and_then(|w| w.parse().ok())
        .ok_or_else(|| "err bad-arguments".to_owned())
}

impl Peer {
    fn driver(&self) -> Result<&Driver, String> {
        self.driver
            .as_ref()
            .ok_or_else(|| "err not-initialised".into())
    }

    fn handle(word: Option<&str>) -> Result<RawHandle, String> {
        NonZeroU64::new(num(word)?)
            .map(RawHandle)
            .ok_or_else(|| "err bad-handle".into())
    }

    /// Maps `handle` in a reservation of its own, runs `f` on the address
    /// and size, and tears the mapping down.
    fn with_mapping(
        &self,
        h: RawHandle,
        f: impl FnOnce(usize, usize) -> Result<String, String>,
    ) -> Result<String, String> {
        let d = self.driver()?;
        let size = self.handle_size(h)?;
        let va = d.reserve(size, 0, None, 0).map_err(code)?;
        d.map(va, size, 0, h, 0).map_err(code)?;
        let out = f(va.get(), size);
        d.unmap(va).map_err(code)?;
        d.release(va).map_err(code)?;
        out
    }

    /// The size of a handle: the sizes the tests use are whole 2 MiB
    /// multiples up to 64 MiB; the peer asks the library by trying to map.
    fn handle_size(&self, h: RawHandle) -> Result<usize, String> {
        let d = self.driver()?;
        let va = d.reserve(64 * MIB, 0, None, 0).map_err(code)?;
        let mut found = Err("err unknown-size".to_owned());
        for n in 1..=32 {
            if d.map(va, n * 2 * MIB, 0, h, 0).is_ok() {
                d.unmap(va).map_err(code)?;
                found = Ok(n * 2 * MIB);
                break;
            }
        }
        d.release(va).map_err(code)?;
        found
    }

    fn copy(&self, dst: usize, src: usize, count: usize, kind: u32) -> Result<(), String> {
        let f = self.f.aclrtMemcpy.ok_or("err no-memcpy")?;
        // SAFETY: the documented prototype; `dst`/`src` are a live local
        // buffer and a mapping made just before, both `count` bytes long.
        let r = unsafe { f(dst as *mut _, count, src as *const _, count, kind) };
        AclError::check(r).map_err(code)
    }

    fn run(&mut self, line: &str) -> Result<String, String> {
        let mut words = line.split_whitespace();
        let cmd = words.next().unwrap_or_default();
        match cmd {
            "init" => {
                let runtime = self.cl.init().map_err(code)?;
                self.driver = Some(runtime.device(0).map_err(code)?);
                self.runtime = Some(runtime);
                Ok("ok".into())
            }
            "pid" => Ok(format!("ok {}", self.driver()?.bare_tgid().map_err(code)?)),
            "malloc" => {
                let bytes = num(words.next())? as usize;
                let h = self
                    .driver()?
                    .malloc_physical(bytes, &prop(), 0)
                    .map_err(code)?;
                Ok(format!("ok {}", h.0))
            }
            "fill" => {
                let h = Self::handle(words.next())?;
                let byte = num(words.next())? as u8;
                self.with_mapping(h, |va, size| {
                    let data = vec![byte; size];
                    self.copy(va, data.as_ptr() as usize, size, 1)?;
                    Ok("ok".into())
                })
            }
            "check" => {
                let h = Self::handle(words.next())?;
                let byte = num(words.next())? as u8;
                self.with_mapping(h, |va, size| {
                    let mut data = vec![!byte; size];
                    self.copy(data.as_mut_ptr() as usize, va, size, 2)?;
                    Ok(if data.iter().all(|&b| b == byte) {
                        "ok yes"
                    } else {
                        "ok no"
                    }
                    .into())
                })
            }
            "export" => {
                let h = Self::handle(words.next())?;
                let flags = num(words.next())?;
                let s = self.driver()?.export(h, flags).map_err(code)?;
                Ok(format!("ok {}", s.0))
            }
            "export2" => {
                let h = Self::handle(words.next())?;
                let flags = num(words.next())?;
                let fabric = words.next() == Some("fabric");
                let f = self
                    .f
                    .aclrtMemExportToShareableHandleV2
                    .ok_or("err missing")?;
                let mut out = [0u8; 128];
                let kind = if fabric { 2 } else { 1 };
                // SAFETY: the documented prototype; a live 128-byte out
                // buffer, large enough for either handle type.
                let r = unsafe {
                    f(
                        h.0.get() as usize as _,
                        flags,
                        kind,
                        out.as_mut_ptr().cast(),
                    )
                };
                AclError::check(r).map_err(code)?;
                Ok(if fabric {
                    format!(
                        "ok {}",
                        out.iter().map(|b| format!("{b:02x}")).collect::<String>()
                    )
                } else {
                    format!(
                        "ok {}",
                        u64::from_ne_bytes(out[..8].try_into().unwrap_or_default())
                    )
                })
            }
            "setpid" => {
                let s = num(words.next())?;
                let pids: Vec<i32> = words.filter_map(|w| w.parse().ok()).collect();
                self.driver()?
                    .set_pids(ShareableHandle(s), &pids)
                    .map_err(code)?;
                Ok("ok".into())
            }
            "import" => {
                let s = num(words.next())?;
                let device = num(words.next())? as u32;
                let h = self
                    .driver()?
                    .import(ShareableHandle(s), device)
                    .map_err(code)?;
                Ok(format!("ok {}", h.0))
            }
            "setpid2" => {
                let mut s = num(words.next())?;
                let mut pids: Vec<i32> = words.filter_map(|w| w.parse().ok()).collect();
                let f = self
                    .f
                    .aclrtMemSetPidToShareableHandleV2
                    .ok_or("err missing")?;
                // SAFETY: the documented prototype; live locals.
                let r = unsafe {
                    f(
                        (&mut s as *mut u64).cast(),
                        1,
                        pids.as_mut_ptr(),
                        pids.len(),
                    )
                };
                AclError::check(r).map_err(code)?;
                Ok("ok".into())
            }
            "import2" => {
                let word = words.next().ok_or("err bad-arguments")?;
                let fabric = words.next() == Some("fabric");
                let mut buf = [0u8; 128];
                if fabric {
                    for (i, b) in buf.iter_mut().enumerate() {
                        *b = word
                            .get(2 * i..2 * i + 2)
                            .and_then(|h| u8::from_str_radix(h, 16).ok())
                            .ok_or("err bad-fabric-handle")?;
                    }
                } else {
                    buf[..8].copy_from_slice(&num(Some(word))?.to_ne_bytes());
                }
                let f = self
                    .f
                    .aclrtMemImportFromShareableHandleV2
                    .ok_or("err missing")?;
                let mut h: aclmem_sys::aclrtDrvMemHandle = ptr::null_mut();
                let kind = if fabric { 2 } else { 1 };
                // SAFETY: the documented prototype; live locals.
                let r = unsafe { f(buf.as_mut_ptr().cast(), kind, 0, &mut h) };
                AclError::check(r).map_err(code)?;
                Ok(format!("ok {}", h as usize))
            }
            "free" => {
                let h = Self::handle(words.next())?;
                self.driver()?.free_physical(h).map_err(code)?;
                Ok("ok".into())
            }
            "devmalloc" => {
                let bytes = num(words.next())? as usize;
                let f = self.f.aclrtMalloc.ok_or("err missing")?;
                let mut p: *mut std::ffi::c_void = ptr::null_mut();
                // SAFETY: the documented prototype; a live out-parameter.
                let r = unsafe { f(&mut p, bytes, 0) };
                AclError::check(r).map_err(code)?;
                Ok(format!("ok {}", p as usize))
            }
            "devfree" => {
                let p = num(words.next())? as usize;
                let f = self.f.aclrtFree.ok_or("err missing")?;
                // SAFETY: the documented prototype; the library checks the
                // address.
                AclError::check(unsafe { f(p as *mut _) }).map_err(code)?;
                Ok("ok".into())
            }
            "ipckey" => {
                let p = num(words.next())? as usize;
                let bytes = num(words.next())? as usize;
                let f = self.f.aclrtIpcMemGetExportKey.ok_or("err missing")?;
                let mut key = [0 as std::ffi::c_char; 65];
                // SAFETY: the documented prototype; `key` is 65 live bytes.
                let r = unsafe { f(p as *mut _, bytes, key.as_mut_ptr(), key.len(), 0) };
                AclError::check(r).map_err(code)?;
                // SAFETY: the library wrote a NUL-terminated key.
                let key = unsafe { std::ffi::CStr::from_ptr(key.as_ptr()) };
                Ok(format!("ok {}", key.to_string_lossy()))
            }
            "ipcpid" => {
                let key = std::ffi::CString::new(words.next().unwrap_or_default())
                    .map_err(|_| "err bad-key")?;
                let mut pids: Vec<i32> = words.map(|w| w.parse().unwrap_or(-1)).collect();
                let f = self.f.aclrtIpcMemSetImportPid.ok_or("err missing")?;
                // SAFETY: the documented prototype; live locals.
                let r = unsafe { f(key.as_ptr(), pids.as_mut_ptr(), pids.len()) };
                AclError::check(r).map_err(code)?;
                Ok("ok".into())
            }
            "ipcimport" => {
                let key = std::ffi::CString::new(words.next().unwrap_or_default())
                    .map_err(|_| "err bad-key")?;
                let f = self.f.aclrtIpcMemImportByKey.ok_or("err missing")?;
                let mut p: *mut std::ffi::c_void = ptr::null_mut();
                // SAFETY: the documented prototype; live locals.
                let r = unsafe { f(&mut p, key.as_ptr(), 0) };
                AclError::check(r).map_err(code)?;
                Ok(format!("ok {}", p as usize))
            }
            "meminfo" => {
                let (free, total) = self.driver()?.mem_info(MemAttr::HbmMem).map_err(code)?;
                Ok(format!("ok {free} {total}"))
            }
            "resources" => {
                let fds = std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count());
                let maps =
                    std::fs::read_to_string("/proc/self/maps").map_or(0, |m| m.lines().count());
                Ok(format!("ok {fds} {maps}"))
            }
            "nofile" => {
                // Leaves exactly `extra` descriptors free: the soft
                // RLIMIT_NOFILE becomes the number of the next free one.
                let extra = num(words.next())?;
                let mut limit = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                // SAFETY: a live out-parameter.
                if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
                    return Err("err getrlimit".into());
                }
                // Room first (an earlier `nofile` may have left none), to
                // find the free numbers: dup hands out the lowest ones.
                limit.rlim_cur = limit.rlim_max;
                // SAFETY: a live, initialised argument.
                if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } != 0 {
                    return Err("err setrlimit".into());
                }
                // SAFETY: dups of stdin, each owned here and closed below.
                let free: Vec<i32> = (0..=extra).map(|_| unsafe { libc::dup(0) }).collect();
                for &fd in free.iter().filter(|&&fd| fd >= 0) {
                    // SAFETY: a descriptor dup returned above, owned here.
                    unsafe { libc::close(fd) };
                }
                let Some(&cut) = free.last().filter(|_| free.iter().all(|&fd| fd >= 0)) else {
                    return Err("err dup".into());
                };
                limit.rlim_cur = cut as u64;
                // SAFETY: as above.
                if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } != 0 {
                    return Err("err setrlimit".into());
                }
                Ok(format!("ok {}", limit.rlim_cur))
            }
            "fork" => {
                let h = Self::handle(words.next())?;
                Ok(format!("ok {}", self.fork_check(h)?))
            }
            "exit" => {
                self.driver = None;
                self.runtime = None;
                std::process::exit(0);
            }
            _ => Err(format!("err unknown-command {cmd}")),
        }
    }

    /// Forks; the child (without exec) checks that it is a new process to
    /// the machine: calls answer 100001, the handle of the parent is not
    /// its own after joining, and the parent's arenas are gone from its
    /// address space. The exit code says which check failed (0: none).
    fn fork_check(&self, h: RawHandle) -> Result<i32, String> {
        let d = self.driver()?;
        let va = d.reserve(2 * MIB, 0, None, 0).map_err(code)?;
        d.map(va, 2 * MIB, 0, h, 0).map_err(code)?;
        let get_device = self.f.aclrtGetDevice.ok_or("err missing")?;
        let free = self.f.aclrtFreePhysical.ok_or("err missing")?;
        let init = self.f.aclInit.ok_or("err missing")?;
        let set_device = self.f.aclrtSetDevice.ok_or("err missing")?;
        let finalize = self.f.aclFinalize.ok_or("err missing")?;
        let bare = self.f.aclrtDeviceGetBareTgid.ok_or("err missing")?;
        // SAFETY: fork in a process whose other threads hold no lock the
        // child needs: the child only calls the library (whose fork
        // handlers prepared it), reads /proc and exits.
        let child = unsafe { libc::fork() };
        if child == 0 {
            let status = (|| {
                let mut dev = 0;
                // SAFETY: documented prototypes; live locals.
                unsafe {
                    // No device in a child that has not joined: the
                    // runtime's answer for a thread without one.
                    if get_device(&mut dev) != AclError::RT_CONTEXT_NULL.code() {
                        return 1;
                    }
                    if free(h.0.get() as usize as _) != AclError::UNINITIALIZE.code() {
                        return 2;
                    }
                }
                let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
                let start = format!("{:x}-", va.get());
                if maps.lines().any(|l| l.starts_with(&start)) {
                    return 3;
                }
                // SAFETY: documented prototypes; live locals.
                unsafe {
                    if init(ptr::null()) != 0 || set_device(0) != 0 {
                        return 4;
                    }
                    if free(h.0.get() as usize as _) != AclError::RT_INVALID_HANDLE.code() {
                        return 5;
                    }
                    let mut pid = 0;
                    if bare(&mut pid) != 0 || pid != std::process::id() as i32 {
                        return 6;
                    }
                    if finalize() != 0 {
                        return 7;
                    }
                }
                0
            })();
            // SAFETY: leave the child without running the parent's exit
            // handlers or destructors.
            unsafe { libc::_exit(status) };
        }
        let mut status = 0;
        // SAFETY: waits for the child made just above.
        unsafe { libc::waitpid(child, &mut status, 0) };
        d.unmap(va).map_err(code)?;
        d.release(va).map_err(code)?;
        Ok(if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            100
        })
    }
}

fn main() {
    let path = std::env::var("ACLMEM_ASCENDCL").expect("ACLMEM_ASCENDCL names the library");
    let cl = AscendCl::load(Some(std::path::Path::new(&path))).expect("the emulated library loads");
    let f = cl.functions();
    let mut peer = Peer {
        cl,
        f,
        runtime: None,
        driver: None,
    };
    let stdin = std::io::stdin();
    let mut out = std::io::stdout();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let reply = peer.run(&line).unwrap_or_else(|e| e);
        if writeln!(out, "{reply}").and_then(|()| out.flush()).is_err() {
            break;
        }
    }
}
