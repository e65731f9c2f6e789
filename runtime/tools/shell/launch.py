"""Confine this process, then exec the shell: the sandbox behind the ``bash`` tool.

Run as ``python -I -S launch.py <config JSON>``; it imports nothing but the standard library, so
it starts fast and cannot be steered by the workspace (``-I``: no cwd on ``sys.path``, no
``PYTHON*`` variables). Steps, all before ``execve``:

1. a new user + mount + PID namespace, in which each ``mask`` directory (the state folder
   holding session logs, facts and continuity) is covered by an empty read-only tmpfs, so the
   shell can neither read nor write what lies beneath. The shell is the namespace's first
   process: when it ends (or the host kills the call), every process it started ends with it,
   ``setsid`` or not;
2. Landlock: the workspace and a private temp folder read-write, the system folders read and
   execute, a few device files, nothing else; signals and abstract unix sockets scoped to the
   sandbox (Landlock ABI 6+). A Landlocked process cannot mount or unmount, so the masks hold.

Any step failing exits with status 125 and one ``specwire-sandbox:`` line on stderr: the command
never runs unconfined. The config is ``{"workspace", "masks", "read_exec", "read_write",
"devices", "argv", "env"}``.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
from typing import Any

SETUP_FAILED = 125

_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWPID = 0x20000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REC, _MS_PRIVATE = 1 << 14, 1 << 18

_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_TRUNCATE, _IOCTL_DEV = 1 << 14, 1 << 15
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1


class SetupError(Exception):
    pass


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _fail(what: str) -> SetupError:
    errno = ctypes.get_errno()
    return SetupError(f"{what}: {os.strerror(errno)}" if errno else what)


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 when Landlock is unavailable."""
    version = _libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, None, 0, _LANDLOCK_CREATE_RULESET_VERSION)
    return max(int(version), 0)


def _handled_fs(abi: int) -> int:
    rights = (1 << 13) - 1  # ABI 1: execute … make_sym
    if abi >= 2:
        rights |= 1 << 13  # refer
    if abi >= 3:
        rights |= _TRUNCATE
    if abi >= 5:
        rights |= _IOCTL_DEV
    return rights


def _write_proc(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def mask_directories(masks: list[str]) -> None:
    """Cover each directory with an empty read-only tmpfs, in a namespace of our own."""
    uid, gid = os.getuid(), os.getgid()
    if _libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWPID) != 0:
        raise _fail("cannot create a user, mount and PID namespace")
    _write_proc("/proc/self/setgroups", "deny")
    _write_proc("/proc/self/uid_map", f"{uid} {uid} 1")
    _write_proc("/proc/self/gid_map", f"{gid} {gid} 1")
    if _libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        raise _fail("cannot make the mount namespace private")
    flags = _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    for path in masks:
        if _libc.mount(b"tmpfs", os.fsencode(path), b"tmpfs", flags, b"size=4k,mode=0500") != 0:
            raise _fail(f"cannot mask {path}")


def _add_rule(ruleset_fd: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a folder this system does not have
    try:
        attr = _PathBeneathAttr(rights, fd)
        if (
            _libc.syscall(
                _SYS_LANDLOCK_ADD_RULE,
                ruleset_fd,
                _LANDLOCK_RULE_PATH_BENEATH,
                ctypes.byref(attr),
                0,
            )
            != 0
        ):
            raise _fail(f"cannot add a Landlock rule for {path}")
    finally:
        os.close(fd)


def restrict_filesystem(config: dict[str, Any]) -> None:
    abi = landlock_abi()
    if abi < 1:
        raise SetupError("Landlock is not available in this kernel")
    handled = _handled_fs(abi)
    attr = _RulesetAttr(handled, 0, 0)
    size = 8
    if abi >= 6:
        attr.scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL
        size = ctypes.sizeof(_RulesetAttr)
    elif abi >= 4:
        size = 16
    ruleset_fd = int(_libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), size, 0))
    if ruleset_fd < 0:
        raise _fail("cannot create a Landlock ruleset")
    try:
        read_exec = (_EXECUTE | _READ_FILE | _READ_DIR) & handled
        for path in config["read_exec"]:
            _add_rule(ruleset_fd, path, read_exec)
        for path in [config["workspace"], *config["read_write"]]:
            _add_rule(ruleset_fd, path, handled)
        for path in config["devices"]:
            _add_rule(ruleset_fd, path, (_READ_FILE | _WRITE_FILE | _TRUNCATE) & handled)
        if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise _fail("cannot set no_new_privs")
        if _libc.syscall(_SYS_LANDLOCK_RESTRICT_SELF, ruleset_fd, 0) != 0:
            raise _fail("cannot enforce the Landlock ruleset")
    finally:
        os.close(ruleset_fd)


def _confine_and_exec(config: dict[str, Any]) -> None:
    restrict_filesystem(config)
    os.chdir(config["workspace"])
    command: list[str] = config["argv"]
    os.execve(command[0], command, config["env"])


def _wait(child: int) -> int:
    """The exit status of the namespace's first process, as a shell reports it."""
    _, status = os.waitpid(child, 0)
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def main(argv: list[str]) -> int:
    try:
        config = json.loads(argv[1])
        if not config["masks"]:
            _confine_and_exec(config)
        mask_directories(config["masks"])
        child = os.fork()  # the first process of the new PID namespace
        if child == 0:
            try:
                _confine_and_exec(config)
            except (SetupError, OSError, KeyError, TypeError, ValueError) as exc:
                sys.stderr.write(f"specwire-sandbox: {exc}\n")
            os._exit(SETUP_FAILED)
        return _wait(child)
    except (SetupError, OSError, KeyError, IndexError, TypeError, ValueError) as exc:
        sys.stderr.write(f"specwire-sandbox: {exc}\n")
    return SETUP_FAILED


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
