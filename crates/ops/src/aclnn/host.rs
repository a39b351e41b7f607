//! Running one of the operator path's kernels on host tensors: how an
//! operator API plan computes.

use aclmem_core::AclError;

use crate::kernels::{self, Call, HostInputs, Spec};
use crate::objects::OpAttr;
use crate::tensor::Tensor;

/// Runs the operator path's kernel `name` on host tensors.
pub(super) fn kernel_on(
    name: &str,
    inputs: &[Tensor],
    out: Spec,
    attrs: OpAttr,
) -> Result<Tensor, AclError> {
    let kernel = kernels::find(name).ok_or(AclError::OP_NOT_FOUND)?;
    let host = HostInputs(
        inputs
            .iter()
            .map(|t| {
                (
                    Spec {
                        dtype: t.dtype,
                        dims: t.dims.clone(),
                    },
                    t.bytes.clone(),
                )
            })
            .collect(),
    );
    let call = Call::new(&host, vec![out.clone()], attrs);
    let mut written = kernel(&call)?;
    let bytes = written.pop().ok_or(AclError::OP_OUTPUT_NOT_MATCH)?;
    Ok(Tensor {
        dtype: out.dtype,
        dims: out.dims,
        bytes,
    })
}
