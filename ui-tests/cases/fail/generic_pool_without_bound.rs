// Code generic over the product must state the calls it makes
// (`P: HasApi<MemPoolCreate>`).
use aclmem_core::{AclError, ProductType, MIB};
use aclmem_hal::{MemPools, Session};

fn pool<B: MemPools<Error = AclError>, P: ProductType>(session: &Session<B, P>) {
    let _pool = session.mem_pool(0, 64 * MIB);
}

fn main() {}
