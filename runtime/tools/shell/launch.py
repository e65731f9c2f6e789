"""Confine this process, then exec the shell: the sandbox behind the ``bash`` tool.

The host reads this file once when it starts, compiles it, and runs the code object with
``python -I -S -c <bootstrap> <code> <config>`` (both ``marshal``-ed, hex-encoded) on an
interpreter that lies outside everything the sandbox may write: no file the shell can touch is
read or run before confinement. It imports nothing but the standard library, and not ``json``
(whose ``re`` import costs more than the rest of the setup), so it starts fast and cannot be
steered by the workspace (``-I``: no cwd on ``sys.path``, no ``PYTHON*`` variables; ``-S``: no
``site``). Steps, all before ``execve``:

1. a new user, mount, PID and network namespace: the shell sees its own loopback and nothing
   else, and it is the PID namespace's first
   process, so when it ends (or the host kills the call) every process it started ends too;
2. a private root (``pivot_root``) holding only the system folders, the workspace, the private
   temp folder and a few device files: the host's ``/run``, ``/tmp``, home folders and every
   Unix socket in them do not exist inside. On it: the state folder (session logs, facts,
   continuity) under an empty read-only tmpfs, the host's code that lies in the workspace bound
   read-only, the host's unreadable ``/etc`` files (shadow, ssh host keys) covered;
3. limits: the PID namespace's ``pid_max`` (holds for root too, which ``RLIMIT_NPROC`` does
   not bind), ``RLIMIT_NPROC``, ``RLIMIT_AS``, ``RLIMIT_FSIZE``, ``RLIMIT_CPU``, no core files;
4. Landlock: the workspace and the temp folder read-write, the system folders read and execute,
   the device files, nothing else; signals and abstract Unix sockets scoped to the sandbox
   (ABI 6+). A Landlocked process can neither mount nor unmount, so the view above holds;
5. with ``network: outbound`` only (``"egress"`` in the config): the host's egress proxy socket
   is bound (that one socket) at ``EGRESS_SOCKET`` in the private root, and a relay, forked
   after every step above so it is as confined as the shell, listens on ``127.0.0.1`` of the
   sandbox's own network namespace and carries each connection to that socket; the shell gets
   ``HTTP(S)_PROXY`` / ``ALL_PROXY`` pointing at it. The relay ends with the PID namespace.

Any step failing exits with status 125 and one ``specwire-sandbox:`` line on stderr: the
command never runs unconfined. The config (the last argument) is ``{"root", "workspace",
"read_exec", "read_write", "devices", "links", "masks", "protect", "hide", "limits", "argv",
"env", "egress"}`` (``egress``: the proxy's socket path on the host, or ``None``).
"""

from __future__ import annotations

import ctypes
import marshal
import os
import resource
import sys
from typing import Any

SETUP_FAILED = 125

_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41}
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWNET = 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 1 << 14, 1 << 18
_MS_NOATIME, _MS_NODIRATIME, _MS_RELATIME, _MS_STRICTATIME = 1024, 2048, 1 << 21, 1 << 24
_MNT_DETACH = 2
# statvfs f_flag bits that a bind remount must repeat (they are locked in a user namespace).
_ST_TO_MS = ((2, _MS_NOSUID), (4, _MS_NODEV), (8, _MS_NOEXEC), (1024, _MS_NOATIME))
_ST_NODIRATIME, _ST_RELATIME = 2048, 4096
_SIOCSIFFLAGS = 0x8914
_IFF_UP, _IFF_LOOPBACK, _IFF_RUNNING = 0x1, 0x8, 0x40
_PID_MAX_FLOOR = 301  # the kernel refuses a smaller pid_max (RESERVED_PIDS + 1)
EGRESS_SOCKET = "/run/specwire/egress.sock"
PROXY_VARIABLES = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)
NO_PROXY_VARIABLES = ("NO_PROXY", "no_proxy")
_RELAY_CONNECTIONS = 32
_RELAY_IDLE_S = 600.0

_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_TRUNCATE, _IOCTL_DEV = 1 << 14, 1 << 15
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1

_LIMITS = {
    "memory": resource.RLIMIT_AS,
    "processes": resource.RLIMIT_NPROC,
    "fileSize": resource.RLIMIT_FSIZE,
    "cpu": resource.RLIMIT_CPU,
}


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
_libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]


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


def enter_namespaces() -> None:
    """A user, mount, PID and network namespace, this user mapped to itself."""
    uid, gid = os.getuid(), os.getgid()
    flags = _CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWPID | _CLONE_NEWNET
    if _libc.unshare(flags) != 0:
        raise _fail("cannot create the sandbox's namespaces")
    _write_proc("/proc/self/setgroups", "deny")
    _write_proc("/proc/self/uid_map", f"{uid} {uid} 1")
    _write_proc("/proc/self/gid_map", f"{gid} {gid} 1")
    if _libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        raise _fail("cannot make the mount namespace private")


def loopback_up() -> None:
    """Bring up ``lo`` of the new network namespace, so local-only tools still work."""
    fd = _libc.socket(2, 2, 0)  # AF_INET, SOCK_DGRAM
    if fd < 0:
        raise _fail("cannot open a socket to configure loopback")
    try:
        flags = _IFF_UP | _IFF_LOOPBACK | _IFF_RUNNING  # struct ifreq: name[16], flags, pad
        request = ctypes.create_string_buffer(
            b"lo".ljust(16, b"\0") + flags.to_bytes(2, sys.byteorder), 40
        )
        if _libc.ioctl(fd, _SIOCSIFFLAGS, request) != 0:
            raise _fail("cannot bring up the loopback interface")
    finally:
        os.close(fd)


def limit_processes(count: int) -> None:
    """Cap the PID namespace's pids (6.14+: pid_max is per PID namespace); binds root too."""
    try:
        _write_proc("/proc/sys/kernel/pid_max", str(max(count + 1, _PID_MAX_FLOOR)))
    except OSError as exc:
        if os.getuid() == 0:  # RLIMIT_NPROC does not bind root: no other bound is left
            raise SetupError(f"cannot bound the number of processes: {exc.strerror}") from exc


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    encode = os.fsencode
    if (
        _libc.mount(
            None if source is None else encode(source),
            encode(target),
            None if fstype is None else encode(fstype),
            flags,
            data.encode() if data else None,
        )
        != 0
    ):
        raise _fail(f"cannot mount {target}")


def _locked_flags(path: str) -> int:
    """The flags a read-only remount of ``path``'s bind must keep (they are locked)."""
    bits = os.statvfs(path).f_flag
    flags = 0
    for st_bit, ms_bit in _ST_TO_MS:
        if bits & st_bit:
            flags |= ms_bit
    if bits & _ST_NODIRATIME:
        flags |= _MS_NODIRATIME
    if bits & _ST_RELATIME:
        flags |= _MS_RELATIME
    elif not bits & 1024:
        flags |= _MS_STRICTATIME
    return flags


def _make_target(target: str, *, directory: bool) -> None:
    os.makedirs(target if directory else os.path.dirname(target), mode=0o755, exist_ok=True)
    if not directory and not os.path.lexists(target):
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o600))


def _bind(path: str, root: str, *, read_only: bool = False) -> None:
    if not os.path.exists(path):
        return  # a folder this system does not have
    target = root + path
    _make_target(target, directory=os.path.isdir(path))
    _mount(path, target, None, _MS_BIND | _MS_REC)
    if read_only:
        _mount(None, target, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _locked_flags(path))


def _cover(path: str, root: str) -> None:
    """Hide ``path``: an empty read-only tmpfs over a folder, ``/dev/null`` over a file."""
    target = root + path
    if os.path.isdir(target):
        sealed = _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
        _mount("tmpfs", target, "tmpfs", sealed, "size=4k,mode=0500")
    elif os.path.isfile(target):
        _mount("/dev/null", target, None, _MS_BIND)


def build_root(config: dict[str, Any]) -> None:
    """Pivot into a fresh root that holds only what the sandbox may see."""
    root = os.path.realpath(config["root"])
    _mount("tmpfs", root, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=1m,mode=0755")
    for path, target in config["links"]:
        os.makedirs(os.path.dirname(root + path), mode=0o755, exist_ok=True)
        os.symlink(target, root + path)
    for path in [*config["read_exec"], config["workspace"], *config["read_write"]]:
        _bind(path, root)
    for path in config["devices"]:
        _bind(path, root)
    for path in config["protect"]:
        _bind(path, root, read_only=True)
    for path in [*config["masks"], *config["hide"]]:
        _cover(path, root)
    egress = config.get("egress")
    if egress:
        _make_target(root + EGRESS_SOCKET, directory=False)
        _mount(egress, root + EGRESS_SOCKET, None, _MS_BIND)
    os.chdir(root)
    machine = os.uname().machine
    if machine not in _SYS_PIVOT_ROOT:
        raise SetupError(f"no pivot_root for {machine}")
    if _libc.syscall(_SYS_PIVOT_ROOT[machine], b".", b".") != 0:
        raise _fail("cannot pivot to the sandbox's root")
    if _libc.umount2(b".", _MNT_DETACH) != 0:
        raise _fail("cannot detach the host's root")
    os.chdir("/")
    _mount(None, "/", None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)


def apply_limits(limits: dict[str, int]) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for name, value in limits.items():
        resource.setrlimit(_LIMITS[name], (value, value))


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


def _relay_pump(inside: Any, proxy: Any) -> None:
    """Copy bytes both ways until both sides finished, one failed, or nothing moved a while."""
    import select
    import socket

    peers = {inside: proxy, proxy: inside}
    for end in peers:
        end.settimeout(_RELAY_IDLE_S)
    try:
        while peers:
            ready, _, _ = select.select(list(peers), [], [], _RELAY_IDLE_S)
            if not ready:
                return
            for source in ready:
                data = source.recv(65536)
                if data:
                    peers[source].sendall(data)
                else:
                    target = peers.pop(source)
                    try:  # noqa: SIM105 (the launcher does not load contextlib)
                        target.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
    except OSError:
        return


def _relay_forever(listener: Any, proxy_path: str) -> None:
    """Accept on the sandbox's loopback; one forked child carries each connection to the proxy."""
    import socket

    children: set[int] = set()
    while True:
        while children:
            pid, _ = os.waitpid(-1, os.WNOHANG if len(children) < _RELAY_CONNECTIONS else 0)
            if pid == 0:
                break
            children.discard(pid)
        inside, _ = listener.accept()
        try:
            child = os.fork()
        except OSError:
            inside.close()
            continue
        if child:
            children.add(child)
            inside.close()
            continue
        listener.close()
        proxy = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            proxy.connect(proxy_path)
            _relay_pump(inside, proxy)
        finally:
            os._exit(0)


def start_relay(env: dict[str, str]) -> dict[str, str]:
    """Fork the relay; the environment the shell gets, its proxy variables set to the relay."""
    import socket

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    child = os.fork()
    if child == 0:
        try:
            quiet = os.open("/dev/null", os.O_RDWR)
            for fd in (0, 1, 2):  # never hold the call's output pipe open
                os.dup2(quiet, fd)
            _relay_forever(listener, EGRESS_SOCKET)
        finally:
            os._exit(0)
    listener.close()
    url = f"http://127.0.0.1:{port}"
    shell_env = dict(env)
    shell_env.update(dict.fromkeys(PROXY_VARIABLES, url))
    shell_env.update(dict.fromkeys(NO_PROXY_VARIABLES, ""))
    return shell_env


def _confine_and_exec(config: dict[str, Any]) -> None:
    """In the PID namespace's first process: every step, then the command."""
    limits: dict[str, int] = config["limits"]
    if config.get("egress"):
        # The relay's modules, loaded while the host's standard library is still in view
        # (only the outbound path pays for them).
        import select  # noqa: F401
        import socket  # noqa: F401
    if "processes" in limits:
        limit_processes(limits["processes"])
    loopback_up()
    build_root(config)
    apply_limits(limits)
    restrict_filesystem(config)
    env: dict[str, str] = config["env"]
    if config.get("egress"):
        env = start_relay(env)
    os.chdir(config["workspace"])
    command: list[str] = config["argv"]
    os.execve(command[0], command, env)


def _wait(child: int) -> int:
    """The exit status of the namespace's first process, as a shell reports it."""
    _, status = os.waitpid(child, 0)
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def main(argv: list[str]) -> int:
    try:
        config = marshal.loads(bytes.fromhex(argv[-1]))
        enter_namespaces()
        child = os.fork()  # the first process of the new PID namespace
        if child == 0:
            try:
                _confine_and_exec(config)
            except (SetupError, OSError, ImportError, KeyError, TypeError, ValueError) as exc:
                sys.stderr.write(f"specwire-sandbox: {exc}\n")
            os._exit(SETUP_FAILED)
        return _wait(child)
    except (SetupError, OSError, KeyError, IndexError, TypeError, ValueError, EOFError) as exc:
        sys.stderr.write(f"specwire-sandbox: {exc}\n")
    return SETUP_FAILED


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
