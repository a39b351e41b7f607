/*
 * aclmem: <acl/acl.h> for the emulated libascendcl.so: the ACL runtime
 * calls that physical-memory code uses (see acl_rt.h). Graph, operator and
 * model APIs are not part of the emulation and are not declared.
 */
#ifndef ACLMEM_ACL_ACL_H
#define ACLMEM_ACL_ACL_H

#include "acl_base.h"
#include "acl_rt.h"

#endif /* ACLMEM_ACL_ACL_H */
