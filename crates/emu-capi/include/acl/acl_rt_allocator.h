/*
 * aclmem: CANN's acl_rt_allocator.h, the custom allocator registered per
 * stream, for the emulated libascendcl.so. acl_rt.h includes it, as
 * CANN's does.
 *
 * Prototypes are CANN's (hicann/runtime
 * include/external/acl/acl_rt_allocator.h; the handle types are
 * acl_base_rt.h's; docs/facts.md lists the sources); a test checks each
 * declaration against the catalogue's prototype. The emulated library
 * stores what is registered and hands it back; its operators need no
 * workspace, so it calls none of the functions (docs/errors.md).
 */
#ifndef ACLMEM_ACL_ACL_RT_ALLOCATOR_H
#define ACLMEM_ACL_ACL_RT_ALLOCATOR_H

#include <stddef.h>

#include "acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void* aclrtAllocatorDesc;
typedef void* aclrtAllocator;
typedef void* aclrtAllocatorBlock;
typedef void* aclrtAllocatorAddr;

typedef void* (*aclrtAllocatorAllocFunc)(aclrtAllocator allocator, size_t size);
typedef void (*aclrtAllocatorFreeFunc)(aclrtAllocator allocator, aclrtAllocatorBlock block);
typedef void* (*aclrtAllocatorAllocAdviseFunc)(aclrtAllocator allocator, size_t size, aclrtAllocatorAddr addr);
typedef void* (*aclrtAllocatorGetAddrFromBlockFunc)(aclrtAllocatorBlock block);

ACL_FUNC_VISIBILITY aclrtAllocatorDesc aclrtAllocatorCreateDesc();
ACL_FUNC_VISIBILITY aclError aclrtAllocatorDestroyDesc(aclrtAllocatorDesc allocatorDesc);
ACL_FUNC_VISIBILITY aclError aclrtAllocatorSetObjToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocator allocator);
ACL_FUNC_VISIBILITY aclError aclrtAllocatorSetAllocFuncToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocatorAllocFunc func);
ACL_FUNC_VISIBILITY aclError aclrtAllocatorSetFreeFuncToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocatorFreeFunc func);
ACL_FUNC_VISIBILITY aclError aclrtAllocatorSetAllocAdviseFuncToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocatorAllocAdviseFunc func);
ACL_FUNC_VISIBILITY aclError aclrtAllocatorSetGetAddrFromBlockFuncToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocatorGetAddrFromBlockFunc func);
ACL_FUNC_VISIBILITY aclError aclrtAllocatorRegister(aclrtStream stream, aclrtAllocatorDesc allocatorDesc);
ACL_FUNC_VISIBILITY aclError aclrtAllocatorGetByStream(aclrtStream stream, aclrtAllocatorDesc* allocatorDesc, aclrtAllocator* allocator, aclrtAllocatorAllocFunc* allocFunc, aclrtAllocatorFreeFunc* freeFunc, aclrtAllocatorAllocAdviseFunc* allocAdviseFunc, aclrtAllocatorGetAddrFromBlockFunc* getAddrFromBlockFunc);
ACL_FUNC_VISIBILITY aclError aclrtAllocatorUnregister(aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLMEM_ACL_ACL_RT_ALLOCATOR_H */
