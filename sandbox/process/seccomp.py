"""The process engine's seccomp filter: a classic-BPF program handed to bwrap (`--seccomp FD`).

Namespaces, cgroups and rlimits bound what a candidate can reach and use; this filter takes away
the kernel interfaces a judged program has no use for and that widen the attack surface or undo
the isolation: new namespaces (unshare, setns, clone with a namespace flag), mounts (old and new
mount API), ptrace and cross-process memory access, the keyring, bpf, perf, userfaultfd, io_uring,
modules, kexec, reboot, swap, clock setting, quotas, accounting, syslog. Refused calls return
EPERM (clone3 returns ENOSYS, as Docker's default profile does, so the C library falls back to
clone, whose flags the filter can read). A system call of another ABI (i386, x32) kills the
process. The list follows Docker's default profile for a container without capabilities.

Tables: x86_64 and aarch64 (checked against the host's kernel headers in the tests). Elsewhere
`program()` returns None and the engine says so (namespaces, cgroups and rlimits only).
"""

from __future__ import annotations

import errno
import platform
import struct

# Syscalls refused with EPERM, by architecture (numbers from asm/unistd_64.h / asm-generic).
X86_64 = {
    "ptrace": 101, "syslog": 103, "uselib": 134, "ustat": 136, "sysfs": 139, "vhangup": 153,
    "pivot_root": 155, "_sysctl": 156, "acct": 163, "settimeofday": 164, "mount": 165,
    "umount2": 166, "swapon": 167, "swapoff": 168, "reboot": 169, "iopl": 172, "ioperm": 173,
    "create_module": 174, "init_module": 175, "delete_module": 176, "get_kernel_syms": 177,
    "query_module": 178, "quotactl": 179, "nfsservctl": 180, "lookup_dcookie": 212,
    "clock_settime": 227, "kexec_load": 246, "add_key": 248, "request_key": 249, "keyctl": 250,
    "unshare": 272, "perf_event_open": 298, "fanotify_init": 300, "name_to_handle_at": 303,
    "open_by_handle_at": 304, "clock_adjtime": 305, "setns": 308, "process_vm_readv": 310,
    "process_vm_writev": 311, "kcmp": 312, "finit_module": 313, "kexec_file_load": 320,
    "bpf": 321, "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426,
    "io_uring_register": 427, "open_tree": 428, "move_mount": 429, "fsopen": 430,
    "fsconfig": 431, "fsmount": 432, "fspick": 433, "pidfd_getfd": 438, "process_madvise": 440,
    "mount_setattr": 442, "quotactl_fd": 443,
}  # fmt: skip
AARCH64 = {
    "lookup_dcookie": 18, "umount2": 39, "mount": 40, "pivot_root": 41, "nfsservctl": 42,
    "vhangup": 58, "quotactl": 60, "acct": 89, "unshare": 97, "kexec_load": 104,
    "init_module": 105, "delete_module": 106, "clock_settime": 112, "syslog": 116, "ptrace": 117,
    "reboot": 142, "settimeofday": 170, "add_key": 217, "request_key": 218, "keyctl": 219,
    "swapon": 224, "swapoff": 225, "perf_event_open": 241, "fanotify_init": 262,
    "name_to_handle_at": 264, "open_by_handle_at": 265, "clock_adjtime": 266, "setns": 268,
    "process_vm_readv": 270, "process_vm_writev": 271, "kcmp": 272, "finit_module": 273,
    "bpf": 280, "userfaultfd": 282, "kexec_file_load": 294, "io_uring_setup": 425,
    "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428, "move_mount": 429,
    "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "pidfd_getfd": 438,
    "process_madvise": 440, "mount_setattr": 442, "quotactl_fd": 443,
}  # fmt: skip
# (audit arch, clone, clone3, blocked table, first number of a foreign ABI sharing the arch or None)
ARCHES = {
    "x86_64": (0xC000003E, 56, 435, X86_64, 0x40000000),  # x32 calls have bit 30 set
    "aarch64": (0xC00000B7, 220, 435, AARCH64, None),
}
# CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME
CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000
CLONE_NAMESPACES |= 0x10000000 | 0x20000000 | 0x40000000 | 0x00000080

# classic BPF
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06
_RET_KILL_PROCESS = 0x80000000
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
_NR, _ARCH, _ARG0_LOW = 0, 4, 16  # args[0]'s low word on a little-endian machine

VERSION = 1  # part of the engine's stamp: bump when the policy changes


def _ins(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def program(machine: str | None = None) -> bytes | None:
    """The filter for this machine's architecture, as bytes of `struct sock_filter`; None when
    there is no table for it."""
    arch = ARCHES.get(machine or platform.machine())
    if arch is None:
        return None
    audit_arch, clone, clone3, blocked, foreign = arch
    eperm = _RET_ERRNO | errno.EPERM
    out = [
        _ins(_LD_W_ABS, _ARCH),
        _ins(_JEQ_K, audit_arch, jt=1, jf=0),
        _ins(_RET_K, _RET_KILL_PROCESS),
        _ins(_LD_W_ABS, _NR),
    ]
    if foreign is not None:
        out += [_ins(_JGE_K, foreign, jt=0, jf=1), _ins(_RET_K, eperm)]
    out += [_ins(_JEQ_K, clone3, jt=0, jf=1), _ins(_RET_K, _RET_ERRNO | errno.ENOSYS)]
    for nr in sorted(set(blocked.values())):
        out += [_ins(_JEQ_K, nr, jt=0, jf=1), _ins(_RET_K, eperm)]
    # clone: refuse namespace flags in its first argument (the flags on both architectures)
    out += [
        _ins(_JEQ_K, clone, jt=0, jf=3),
        _ins(_LD_W_ABS, _ARG0_LOW),
        _ins(_JSET_K, CLONE_NAMESPACES, jt=0, jf=1),
        _ins(_RET_K, eperm),
        _ins(_RET_K, _RET_ALLOW),
    ]
    return b"".join(out)
