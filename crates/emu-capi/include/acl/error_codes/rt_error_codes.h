/*
 * aclmem: error codes of the ACL runtime layer (ACL_ERROR_RT_*), as CANN's
 * runtime defines them. Written for the emulated libascendcl.so from the
 * documented values (docs/facts.md lists the sources); the values agree
 * with aclmem-core's error table, which a test checks.
 */
#ifndef ACLMEM_ACL_ERROR_CODES_RT_ERROR_CODES_H
#define ACLMEM_ACL_ERROR_CODES_RT_ERROR_CODES_H

#define ACL_RT_SUCCESS 0

/* 1xxxxx: the caller's or the environment's error. */
#define ACL_ERROR_RT_PARAM_INVALID 107000
#define ACL_ERROR_RT_INVALID_DEVICEID 107001
#define ACL_ERROR_RT_CONTEXT_NULL 107002
#define ACL_ERROR_RT_ADDR_UNALIGNED 107008
#define ACL_ERROR_RT_INVALID_MEMORY_TYPE 107016
#define ACL_ERROR_RT_INVALID_HANDLE 107017
#define ACL_ERROR_RT_INVALID_MALLOC_TYPE 107018

/* 2xxxxx: resources ran out, or the hardware does not support the call. */
#define ACL_ERROR_RT_FEATURE_NOT_SUPPORT 207000
#define ACL_ERROR_RT_MEMORY_ALLOCATION 207001
#define ACL_ERROR_RT_MEMORY_FREE 207002
#define ACL_ERROR_RT_NO_DEVICE 207004
#define ACL_ERROR_RT_RESOURCE_ALLOC_FAIL 207005
#define ACL_ERROR_RT_NO_PERMISSION 207006
#define ACL_ERROR_RT_OVER_LIMIT 207012
#define ACL_ERROR_RT_DEVICE_OOM 207018

/* 5xxxxx: internal errors. */
#define ACL_ERROR_RT_INTERNAL_ERROR 507000
#define ACL_ERROR_RT_LOST_HEARTBEAT 507010
#define ACL_ERROR_RT_IPC_ERROR 507022
#define ACL_ERROR_RT_DEV_SETUP_ERROR 507033
#define ACL_ERROR_RT_STREAM_SYNC_TIMEOUT 507046
#define ACL_ERROR_RT_DRV_INTERNAL_ERROR 507899
#define ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED 507910
#define ACL_ERROR_HOST_MEMORY_NOT_REGISTERED 507911

#endif /* ACLMEM_ACL_ERROR_CODES_RT_ERROR_CODES_H */
