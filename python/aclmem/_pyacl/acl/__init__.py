"""pyACL's ``acl`` module for programs started by ``aclmem run``: aclmem's
(:mod:`aclmem.acl`, over the emulated ``libascendcl.so``). ``aclmem run``
puts the directory holding this package first on ``PYTHONPATH``; importing
it registers :mod:`aclmem.acl` as ``acl``, ``acl.rt`` and ``acl.util``."""

import aclmem as _aclmem

_aclmem.install()
