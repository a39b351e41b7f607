/*
 * aclmem: CANN's acl_rt_memory_soma.h, the stream-ordered memory pools,
 * for the emulated libascendcl.so. Like CANN's, it is included on its own
 * (acl_rt.h does not include it) and includes acl_rt.h; its include guard
 * is CANN's, so a program that includes CANN's copy as well sees one.
 *
 * Prototypes and values are CANN's (hicann/runtime
 * include/external/acl/acl_rt_memory_soma.h; docs/facts.md lists the
 * sources); a test checks each declaration against the catalogue's
 * prototype and each layout against the library's. The pool calls are
 * CANN 9.0's (create, destroy, attributes) and 9.1's (allocations, trims);
 * documented for Atlas A2 only.
 */
#ifndef INC_EXTERNAL_ACL_RT_MEMORY_H_
#define INC_EXTERNAL_ACL_RT_MEMORY_H_

#include <stddef.h>

#include "acl_base.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void* aclrtMemPool;

typedef enum aclrtMemPoolAttr {
    ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES = 0x1,
    ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC = 0x2,
    ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES = 0x3,
    ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD = 0x4,
    ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT = 0x5,
    ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH = 0x6,
    ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT = 0x7,
    ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH = 0x8
} aclrtMemPoolAttr;

typedef struct {
    aclrtMemAllocationType allocType;
    aclrtMemHandleType handleType;
    aclrtMemLocation location;
    size_t maxSize;
    unsigned char reserved[32];
} aclrtMemPoolProps;

ACL_FUNC_VISIBILITY aclError aclrtMemPoolCreate(aclrtMemPool* memPool, const aclrtMemPoolProps* poolProps);
ACL_FUNC_VISIBILITY aclError aclrtMemPoolDestroy(const aclrtMemPool memPool);
ACL_FUNC_VISIBILITY aclError aclrtMemPoolSetAttr(aclrtMemPool memPool, aclrtMemPoolAttr attr, void* value);
ACL_FUNC_VISIBILITY aclError aclrtMemPoolGetAttr(aclrtMemPool memPool, aclrtMemPoolAttr attr, void* value);
ACL_FUNC_VISIBILITY aclError aclrtMemPoolMallocAsync(void** ptr, size_t size, aclrtMemPool memPool, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemPoolFreeAsync(void* ptr, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemPoolTrimTo(aclrtMemPool memPool, size_t minBytesToKeep);

#ifdef __cplusplus
}
#endif

#endif /* INC_EXTERNAL_ACL_RT_MEMORY_H_ */
