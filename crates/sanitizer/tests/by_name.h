/*
 * Included before a program (cc -include by_name.h): every ACL call the
 * sanitizer checks goes through a pointer that dlsym found on the
 * program's own handle of libascendcl.so, as torch_npu calls ACL. An
 * LD_PRELOAD library never sees such calls; the sanitizer's LD_AUDIT side
 * does.
 */
#ifndef ACLMEM_BY_NAME_H
#define ACLMEM_BY_NAME_H
/* The system headers below come before the program's: what the program
 * asks of them (defects.c: POSIX 2008, for its barriers) is asked here. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <acl/acl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static void *acl_by_name(const char *name) {
    static void *lib;
    if (lib == NULL) lib = dlopen("libascendcl.so", RTLD_NOW | RTLD_LOCAL);
    void *f = lib ? dlsym(lib, name) : NULL;
    if (f == NULL) {
        fprintf(stderr, "by_name.h: no %s\n", name);
        exit(3);
    }
    return f;
}

#define ACL_BY_NAME(name) ((__typeof__(&name))acl_by_name(#name))
#define aclInit(...) ACL_BY_NAME(aclInit)(__VA_ARGS__)
#define aclrtSetDevice(...) ACL_BY_NAME(aclrtSetDevice)(__VA_ARGS__)
#define aclrtMallocPhysical(...) ACL_BY_NAME(aclrtMallocPhysical)(__VA_ARGS__)
#define aclrtFreePhysical(...) ACL_BY_NAME(aclrtFreePhysical)(__VA_ARGS__)
#define aclrtReserveMemAddress(...) ACL_BY_NAME(aclrtReserveMemAddress)(__VA_ARGS__)
#define aclrtReleaseMemAddress(...) ACL_BY_NAME(aclrtReleaseMemAddress)(__VA_ARGS__)
#define aclrtMapMem(...) ACL_BY_NAME(aclrtMapMem)(__VA_ARGS__)
#define aclrtUnmapMem(...) ACL_BY_NAME(aclrtUnmapMem)(__VA_ARGS__)
#define aclrtMemcpy(...) ACL_BY_NAME(aclrtMemcpy)(__VA_ARGS__)
#define aclrtMemExportToShareableHandle(...) ACL_BY_NAME(aclrtMemExportToShareableHandle)(__VA_ARGS__)
#define aclrtMemImportFromShareableHandle(...) ACL_BY_NAME(aclrtMemImportFromShareableHandle)(__VA_ARGS__)
#define aclrtDeviceGetBareTgid(...) ACL_BY_NAME(aclrtDeviceGetBareTgid)(__VA_ARGS__)
#define aclrtMemSetPidToShareableHandle(...) ACL_BY_NAME(aclrtMemSetPidToShareableHandle)(__VA_ARGS__)
#define aclrtResetDevice(...) ACL_BY_NAME(aclrtResetDevice)(__VA_ARGS__)
#define aclFinalize(...) ACL_BY_NAME(aclFinalize)(__VA_ARGS__)
#define aclrtGetDeviceCount(...) ACL_BY_NAME(aclrtGetDeviceCount)(__VA_ARGS__)
#define aclrtMalloc(...) ACL_BY_NAME(aclrtMalloc)(__VA_ARGS__)
#define aclrtFree(...) ACL_BY_NAME(aclrtFree)(__VA_ARGS__)
#endif
