//! The operator path through the C ABI, in-process: descriptors, buffers
//! and attributes as a framework builds them, data operators carried out on
//! device memory, every bad descriptor answered with the runtime's code and
//! nothing written, and the default device of `aclInit`'s configuration.
//! One test, because the library's state is process-wide.

use std::ffi::{CString, c_char, c_void};
use std::ptr;

use aclmem_core::AclError;
use aclmem_emu_capi::ops::*;
use aclmem_emu_capi::*;

const F32: i32 = 0;
const I32: i32 = 3;
const I64: i32 = 9;
const ND: i32 = 2;
const H2D: u32 = 1;
const D2H: u32 = 2;

fn set(k: &str, v: &str) {
    // SAFETY: this binary runs one test, which owns the environment.
    unsafe { std::env::set_var(k, v) };
}

/// A device buffer holding `data`.
unsafe fn device<T: Copy>(data: &[T]) -> *mut c_void {
    let bytes = std::mem::size_of_val(data).max(1);
    let mut p = ptr::null_mut();
    // SAFETY: live locals; `data` is read for its length in bytes.
    unsafe {
        assert_eq!(aclrtMalloc(&mut p, bytes, 0), 0);
        assert_eq!(
            aclrtMemcpy(
                p,
                bytes,
                data.as_ptr().cast(),
                std::mem::size_of_val(data),
                H2D
            ),
            0
        );
    }
    p
}

/// `n` values of `T` read back from the device.
unsafe fn read<T: Copy + Default>(p: *const c_void, n: usize) -> Vec<T> {
    let mut out = vec![T::default(); n];
    let bytes = std::mem::size_of_val(out.as_slice());
    // SAFETY: `out` is ours, `bytes` long.
    let code = unsafe { aclrtMemcpy(out.as_mut_ptr().cast(), bytes, p, bytes, D2H) };
    assert_eq!(code, 0);
    out
}

/// A descriptor and its buffer, as torch_npu makes them.
struct Operand {
    desc: *mut c_void,
    buf: *mut c_void,
}

fn operand(dtype: i32, dims: &[i64], data: *mut c_void, bytes: usize) -> Operand {
    let desc = aclCreateTensorDesc(dtype, dims.len() as i32, dims.as_ptr(), ND);
    assert!(!desc.is_null());
    assert_eq!(aclSetTensorFormat(desc, ND), 0);
    assert_eq!(aclSetTensorShape(desc, dims.len() as i32, dims.as_ptr()), 0);
    Operand {
        desc,
        buf: aclCreateDataBuffer(data, bytes),
    }
}

/// A host input (sizes, strides, a scalar), placement host.
fn host(values: &[i64], scalar: bool) -> Operand {
    let dims = [values.len() as i64];
    let n = if scalar { 0 } else { 1 };
    let desc = aclCreateTensorDesc(I64, n, dims.as_ptr(), ND);
    assert_eq!(aclSetTensorPlaceMent(desc, 1), 0);
    Operand {
        desc,
        buf: aclCreateDataBuffer(values.as_ptr() as *mut c_void, values.len() * 8),
    }
}

unsafe fn run(op: &str, inputs: &[&Operand], outputs: &[&Operand], attr: *mut c_void) -> i32 {
    // SAFETY: the caller's contract.
    unsafe { run_by(aclopCompileAndExecute, op, inputs, outputs, attr) }
}

/// The prototype both `aclopCompileAndExecute` and its V2 have here.
type Execute = unsafe extern "C" fn(
    *const c_char,
    i32,
    *const *const c_void,
    *const *const c_void,
    i32,
    *const *const c_void,
    *const *const c_void,
    *const c_void,
    i32,
    i32,
    *const c_char,
    *mut c_void,
) -> i32;

unsafe fn run_by(
    execute: Execute,
    op: &str,
    inputs: &[&Operand],
    outputs: &[&Operand],
    attr: *mut c_void,
) -> i32 {
    let name = CString::new(op).unwrap();
    let in_desc: Vec<*const c_void> = inputs.iter().map(|o| o.desc as *const c_void).collect();
    let in_buf: Vec<*const c_void> = inputs.iter().map(|o| o.buf as *const c_void).collect();
    let out_desc: Vec<*const c_void> = outputs.iter().map(|o| o.desc as *const c_void).collect();
    let out_buf: Vec<*const c_void> = outputs.iter().map(|o| o.buf as *const c_void).collect();
    // SAFETY: arrays of live handles, as long as the counts say.
    unsafe {
        execute(
            name.as_ptr(),
            inputs.len() as i32,
            in_desc.as_ptr(),
            in_buf.as_ptr(),
            outputs.len() as i32,
            out_desc.as_ptr(),
            out_buf.as_ptr(),
            attr,
            0,
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    }
}

#[test]
fn operators_through_the_c_abi() {
    set(
        "ACLMEM_EMU_MACHINE",
        &format!("capi-ops-{}", std::process::id()),
    );
    set("ACLMEM_EMU_QUIET", "1");
    set("ACLMEM_EMU_DEVICES", "2");
    set("ACLMEM_EMU_HBM", "256MiB");
    let dir = std::env::temp_dir().join(format!("aclmem-ops-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        CString::new(p.to_str().unwrap()).unwrap()
    };
    // SAFETY: every call follows its C prototype; pointers are live
    // locals, or deliberately NULL or garbage where the test says so.
    unsafe {
        // Before aclInit no thread has a device: 107002, and that answer is
        // not the thread's last error.
        let mut dev = -1;
        assert_eq!(aclrtGetDevice(&mut dev), AclError::RT_CONTEXT_NULL.code());
        assert_eq!(aclrtPeekAtLastError(0), 0);
        // A default device that is not a decimal id is refused, as the
        // runtime's parser refuses it.
        let bad = config("bad.json", r#"{"defaultDevice": {"default_device": "01"}}"#);
        assert_eq!(aclInit(bad.as_ptr()), AclError::INVALID_PARAM.code());
        let good = config(
            "acl.json",
            r#"{"dump": {}, "defaultDevice": {"default_device": "1"}}"#,
        );
        assert_eq!(aclInit(good.as_ptr()), 0);
        // A thread without a device gets the default one for the calls that
        // need one (torch_npu's allocator asks aclrtGetMemInfo that way).
        let (device, info) = std::thread::spawn(|| {
            let (mut free, mut total) = (0usize, 0usize);
            let info = aclrtGetMemInfo(1, &mut free, &mut total);
            let mut d = -1;
            assert_eq!(aclrtGetDevice(&mut d), 0);
            (d, (info, total))
        })
        .join()
        .unwrap();
        assert_eq!((device, info), (1, (0, 256 << 20)));
        assert_eq!(aclrtSetDevice(0), 0);

        data_operators();
        compute_operators();
        bad_descriptors();
        assert_eq!(aclFinalize(), 0);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

unsafe fn data_operators() {
    // SAFETY: as in the test above.
    unsafe {
        // Cast: f32 -> i32, truncating.
        let floats = device(&[-1.5f32, 0.25, 7.9, 300.0]);
        let ints = device(&[0i32; 4]);
        let x = operand(F32, &[4], floats, 16);
        let y = operand(I32, &[4], ints, 16);
        let attr = aclopCreateAttr();
        let dst_type = c"dst_type";
        assert_eq!(aclopSetAttrInt(attr, dst_type.as_ptr(), I32 as i64), 0);
        assert_eq!(run("Cast", &[&x], &[&y], attr), 0);
        assert_eq!(read::<i32>(ints, 4), [-1, 0, 7, 300]);
        // Read back as the framework reads a descriptor.
        assert_eq!(aclGetTensorDescNumDims(y.desc), 1);
        let mut d = 0i64;
        assert_eq!(aclGetTensorDescDimV2(y.desc, 0, &mut d), 0);
        assert_eq!(d, 4);
        assert_eq!(
            aclGetTensorDescDimV2(y.desc, 1, &mut d),
            AclError::INVALID_PARAM.code()
        );
        assert_eq!(
            (aclGetTensorDescType(y.desc), aclGetTensorDescFormat(y.desc)),
            (I32, ND)
        );

        // ViewCopy: a 2x3 source written transposed into a 3x2 view.
        let a = device(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let b = device(&[0.0f32; 6]);
        let (src, dst) = (operand(F32, &[6], a, 24), operand(F32, &[6], b, 24));
        let out = operand(F32, &[3, 2], b, 24);
        let (dst_size, dst_stride, zero) =
            (host(&[3, 2], false), host(&[2, 1], false), host(&[0], true));
        let (src_size, src_stride) = (host(&[3, 2], false), host(&[1, 3], false));
        let inputs = [
            &dst,
            &dst_size,
            &dst_stride,
            &zero,
            &src,
            &src_size,
            &src_stride,
            &zero,
        ];
        assert_eq!(run("ViewCopy", &inputs, &[&out], ptr::null_mut()), 0);
        assert_eq!(read::<f32>(b, 6), [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);

        // NonZero: the output holds the most; V2 writes the real shape into
        // its descriptor, V1 leaves the caller's descriptor as it was.
        let values = device(&[0.0f32, 2.0, 0.0, 5.0]);
        let coords = device(&[-1i64; 8]);
        let nz_in = operand(F32, &[2, 2], values, 16);
        let nz_out = operand(I64, &[4, 2], coords, 64);
        let dims = |o: &Operand| {
            (0..aclGetTensorDescNumDims(o.desc))
                .map(|i| {
                    let mut d = 0i64;
                    assert_eq!(aclGetTensorDescDimV2(o.desc, i, &mut d), 0);
                    d
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run("NonZero", &[&nz_in], &[&nz_out], ptr::null_mut()), 0);
        assert_eq!(dims(&nz_out), [4, 2]);
        let v2 = run_by(
            aclopCompileAndExecuteV2,
            "NonZero",
            &[&nz_in],
            &[&nz_out],
            ptr::null_mut(),
        );
        assert_eq!(v2, 0);
        assert_eq!(dims(&nz_out), [2, 2]);
        assert_eq!(read::<i64>(coords, 8), [0, 1, 1, 1, -1, -1, -1, -1]);
        aclDestroyTensorDesc(nz_in.desc);
        aclDestroyTensorDesc(nz_out.desc);
        assert_eq!(aclDestroyDataBuffer(nz_in.buf), 0);
        assert_eq!(aclDestroyDataBuffer(nz_out.buf), 0);
        assert_eq!(aclrtFree(values), 0);
        assert_eq!(aclrtFree(coords), 0);

        // ZerosLike in place, and an empty tensor (NULL buffer, size 0).
        let z = operand(F32, &[6], b, 24);
        assert_eq!(run("ZerosLike", &[&z], &[&z], ptr::null_mut()), 0);
        assert_eq!(read::<f32>(b, 6), [0.0; 6]);
        let empty = operand(F32, &[0, 3], ptr::null_mut(), 0);
        assert_eq!(run("OnesLike", &[&empty], &[&empty], ptr::null_mut()), 0);

        // Every handle goes; each only once.
        for o in [
            &x,
            &y,
            &src,
            &dst,
            &out,
            &z,
            &empty,
            &dst_size,
            &dst_stride,
            &zero,
            &src_size,
            &src_stride,
        ] {
            aclDestroyTensorDesc(o.desc);
            assert_eq!(aclDestroyDataBuffer(o.buf), 0);
            assert_eq!(aclDestroyDataBuffer(o.buf), AclError::INVALID_PARAM.code());
        }
        aclopDestroyAttr(attr);
        for p in [floats, ints, a, b] {
            assert_eq!(aclrtFree(p), 0);
        }
    }
}

/// A matrix product on device memory, as torch_npu launches `mm` of a
/// transposed weight (`nn.Linear`): x (2 × 3) times w (2 × 3) transposed.
unsafe fn compute_operators() {
    // SAFETY: as in the test above.
    unsafe {
        let x = device(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let w = device(&[1.0f32, 0.0, 1.0, 0.0, 1.0, 0.0]);
        let out = device(&[0.0f32; 4]);
        let (x, w, y) = (
            operand(F32, &[2, 3], x, 24),
            operand(F32, &[2, 3], w, 24),
            operand(F32, &[2, 2], out, 16),
        );
        let attr = aclopCreateAttr();
        assert_eq!(aclopSetAttrBool(attr, c"transpose_x1".as_ptr(), 0), 0);
        assert_eq!(aclopSetAttrBool(attr, c"transpose_x2".as_ptr(), 1), 0);
        assert_eq!(run("MatMul", &[&x, &w], &[&y], attr), 0);
        // [[1,2,3],[4,5,6]] · [[1,0],[0,1],[1,0]] = [[4,2],[10,5]]
        assert_eq!(read::<f32>(out, 4), [4.0, 2.0, 10.0, 5.0]);
        aclopDestroyAttr(attr);
    }
}

unsafe fn bad_descriptors() {
    // SAFETY: as in the test above.
    unsafe {
        let p = device(&[1.0f32; 4]);
        let q = device(&[9.0f32; 4]);
        let x = operand(F32, &[4], p, 16);
        let y = operand(F32, &[4], q, 16);
        let unchanged = || read::<f32>(q, 4) == [9.0; 4];
        // An operator the emulator has no kernel for.
        assert_eq!(
            run(
                "FusedInferAttentionScore",
                &[&x, &x],
                &[&y],
                ptr::null_mut()
            ),
            AclError::OP_NOT_FOUND.code()
        );
        // A product of 1-D tensors: MatMul takes matrices only, and writes
        // nothing.
        assert_eq!(
            run("MatMul", &[&x, &x], &[&y], ptr::null_mut()),
            AclError::OP_INPUT_NOT_MATCH.code()
        );
        // Counts that do not fit the operator.
        assert_eq!(
            run("ZerosLike", &[&x, &x], &[&y], ptr::null_mut()),
            AclError::OP_INPUT_NOT_MATCH.code()
        );
        assert_eq!(
            run("ZerosLike", &[&x], &[], ptr::null_mut()),
            AclError::OP_OUTPUT_NOT_MATCH.code()
        );
        // A garbage or destroyed descriptor, a buffer passed as one.
        let garbage = Operand {
            desc: 0x1234 as *mut c_void,
            buf: x.buf,
        };
        assert_eq!(
            run("ZerosLike", &[&garbage], &[&y], ptr::null_mut()),
            AclError::INVALID_PARAM.code()
        );
        let swapped = Operand {
            desc: x.buf,
            buf: x.desc,
        };
        assert_eq!(
            run("ZerosLike", &[&swapped], &[&y], ptr::null_mut()),
            AclError::INVALID_PARAM.code()
        );
        let gone = operand(F32, &[4], p, 16);
        aclDestroyTensorDesc(gone.desc);
        assert_eq!(
            run("ZerosLike", &[&gone], &[&y], ptr::null_mut()),
            AclError::INVALID_PARAM.code()
        );
        // A private format the kernels cannot convert (NC1HWC0_C04), one
        // they can whose padded storage the buffer cannot hold (FRACTAL_NZ
        // of [4] float32 is 16x16 elements), a type the kernels do not
        // compute on, a buffer too small for the shape, an output outside
        // device memory.
        let c04 = operand(F32, &[4], p, 16);
        assert_eq!(aclSetTensorFormat(c04.desc, 12), 0);
        assert_eq!(
            run("ZerosLike", &[&c04], &[&y], ptr::null_mut()),
            AclError::FORMAT_NOT_MATCH.code()
        );
        let nz = operand(F32, &[4], p, 16);
        assert_eq!(aclSetTensorFormat(nz.desc, 29), 0);
        assert_eq!(
            run("ZerosLike", &[&nz], &[&y], ptr::null_mut()),
            AclError::INVALID_PARAM.code()
        );
        let string = operand(13, &[4], p, 16);
        assert_eq!(
            run("ZerosLike", &[&string], &[&y], ptr::null_mut()),
            AclError::UNSUPPORTED_DATA_TYPE.code()
        );
        let small = operand(F32, &[8], q, 16);
        assert_eq!(
            run("ZerosLike", &[&x], &[&small], ptr::null_mut()),
            AclError::INVALID_PARAM.code()
        );
        let mut host_bytes = [7.0f32; 4];
        let outside = operand(F32, &[4], host_bytes.as_mut_ptr().cast(), 16);
        assert_eq!(
            run("ZerosLike", &[&x], &[&outside], ptr::null_mut()),
            AclError::INVALID_PARAM.code()
        );
        assert_eq!(
            host_bytes, [7.0; 4],
            "host memory is not an operator's output"
        );
        // Host memory the device reaches (registered mapped for it, as
        // torch_npu's swapped memory is) is one, as on an NPU.
        let mut page = vec![7.0f32; 2048];
        let aligned = page.as_mut_ptr() as usize;
        let base = (aligned + 4095) & !4095;
        let reg = base as *mut c_void;
        let mut dev_ptr = ptr::null_mut();
        // A live local out parameter; the range lies in `page`.
        assert_eq!(aclrtHostRegister(reg, 16, 0, &mut dev_ptr), 0);
        let registered = operand(F32, &[4], dev_ptr, 16);
        assert_eq!(run("ZerosLike", &[&x], &[&registered], ptr::null_mut()), 0);
        // The registered range, inside `page`.
        let written = std::slice::from_raw_parts(reg.cast::<f32>(), 4);
        assert_eq!(written, [0.0; 4]);
        assert_eq!(aclrtHostUnregister(reg), 0);
        drop(page);
        // An attribute of the wrong kind.
        let attr = aclopCreateAttr();
        assert_eq!(
            aclopSetAttrString(attr, c"dst_type".as_ptr(), c"int".as_ptr()),
            0
        );
        assert_eq!(
            run("Cast", &[&x], &[&y], attr),
            AclError::OP_ATTR_NOT_MATCH.code()
        );
        assert!(unchanged(), "no failed call wrote its output");
        // NULL and garbage everywhere a pointer goes.
        assert!(aclCreateTensorDesc(F32, 2, ptr::null(), ND).is_null());
        assert!(aclCreateTensorDesc(F32, -1, ptr::null(), ND).is_null());
        assert!(aclCreateTensorDesc(F32, 129, [0i64; 129].as_ptr(), ND).is_null());
        assert!(aclCreateTensorDesc(F32, 1, 0x10 as *const i64, ND).is_null());
        assert_eq!(
            aclSetTensorShape(ptr::null_mut(), 0, ptr::null()),
            AclError::INVALID_PARAM.code()
        );
        assert_eq!(
            aclSetTensorPlaceMent(x.desc, 7),
            AclError::INVALID_PARAM.code()
        );
        assert_eq!(
            aclopSetAttrInt(attr, ptr::null(), 1),
            AclError::INVALID_PARAM.code()
        );
        assert_eq!(
            aclopSetAttrListInt(attr, c"x".as_ptr(), 2, 0x10 as *const i64),
            AclError::INVALID_PARAM.code()
        );
        assert_eq!(
            aclopSetAttrBool(0x99 as *mut c_void, c"x".as_ptr(), 1),
            AclError::INVALID_PARAM.code()
        );
        assert_eq!(aclGetTensorDescNumDims(0x99 as *const c_void), 0);
        assert_eq!(aclGetTensorDescType(ptr::null()), -1);
        let name: *const c_char = ptr::null();
        assert_eq!(
            aclopCompileAndExecute(
                name,
                0,
                ptr::null(),
                ptr::null(),
                0,
                ptr::null(),
                ptr::null(),
                ptr::null(),
                0,
                0,
                ptr::null(),
                ptr::null_mut()
            ),
            AclError::INVALID_PARAM.code()
        );
        assert_eq!(
            aclopCompileAndExecute(
                c"ZerosLike".as_ptr(),
                1,
                0x10 as *const *const c_void,
                ptr::null(),
                0,
                ptr::null(),
                ptr::null(),
                ptr::null(),
                0,
                0,
                ptr::null(),
                ptr::null_mut()
            ),
            AclError::INVALID_PARAM.code()
        );
        aclopDestroyAttr(attr);
        aclopDestroyAttr(attr);
        aclDestroyTensorDesc(0x1234 as *const c_void);
        assert_eq!(aclrtFree(p), 0);
        assert_eq!(aclrtFree(q), 0);
    }
}
