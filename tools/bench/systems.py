"""The systems Herald's benchmarks compare, and how to build, start and stop each.

Used by tools/bench/side_by_side, component_alone and ping_prosody (docs/BENCHMARKS.md):

    bins = build(output_base=None)                  # herald and loadgen, bazel -c opt
    with BenchProsody(load_users=8) as prosody:     # private Prosody on loopback, tuned
        with start_component("herald", bins, prosody.component_port, HERALD_DOMAIN,
                             prosody.secret_for(HERALD_DOMAIN)) as component:
            prosody.wait_for_component(HERALD_DOMAIN)
            result = run_loadgen(bins, [...], component_pid=component.pid)

Each system is one process whose CPU time and peak RSS the load generator reads from /proc:

    herald          Herald itself (component mode, /ping answers "pong")
    slixmpp         tools/bench/peers/slixmpp_echo.py (python3-slixmpp), echoes the body
    xmpp-component  tools/bench/peers/xmpp_component_echo.js (@xmpp/component), echoes it
    server          loadgen --mode=echo as a client account: no component at all

Everything listens on 127.0.0.1 only, and every process started here is stopped on exit.
"""

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PEERS = os.path.join(ROOT, "tools", "bench", "peers")
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))

from servers import Prosody, free_port, tail, wait_until  # noqa: E402

HERALD_DOMAIN = "agent.localhost"          # the e2e Prosody's component (tools/servers snippet)
SLIXMPP_DOMAIN = "slixmpp.localhost"
XMPP_COMPONENT_DOMAIN = "xmppjs.localhost"
ECHO_ACCOUNT_PREFIX = "echo"               # the server-limit echo client is echo1@localhost

SYSTEMS = ("herald", "slixmpp", "xmpp-component", "server")
LABELS = {
    "herald": "Herald /ping",
    "slixmpp": "slixmpp echo",
    "xmpp-component": "@xmpp/component echo",
    "server": "server limit (echo client)",
}


def exit_cleanly_on_sigterm():
    """Turns SIGTERM (e.g. from `timeout`) into SystemExit, so every `with` block stops the
    servers and components it started instead of leaving them behind."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def prioritize(pid, nice):
    """Runs process `pid` (alone in its session) at `nice`, ahead of other work on a shared
    machine: its autogroup's nice (with sched_autogroup, nice only ranks tasks within one
    session's group) and its own (threads and children it makes later inherit it). Needs root
    for a negative value; nice 0 leaves everything as it is."""
    if not nice:
        return
    with contextlib.suppress(OSError):
        with open(f"/proc/{pid}/autogroup", "w") as f:
            f.write(str(nice))
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, pid, nice)


class Binaries:
    def __init__(self, bin_dir):
        self.herald = os.path.join(bin_dir, "component", "herald")
        self.loadgen = os.path.join(bin_dir, "tools", "loadgen", "loadgen")


def build(output_base=None, bin_dir=None):
    """Builds herald and loadgen with -c opt; returns their paths.

    bin_dir: use the binaries already built there (bazel-bin of -c opt) instead.
    """
    if bin_dir:
        bins = Binaries(bin_dir)
        for path in (bins.herald, bins.loadgen):
            if not os.access(path, os.X_OK):
                sys.exit(f"{path} is not there: build -c opt //component:herald //tools/loadgen")
        return bins
    startup = [f"--output_base={output_base}"] if output_base else []
    done = subprocess.run(["bazel", *startup, "build", "-c", "opt", "//component:herald",
                           "//tools/loadgen"], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bazel build failed:\n{done.stderr[-3000:]}")
    out = subprocess.run(["bazel", *startup, "info", "-c", "opt", "bazel-bin"], cwd=ROOT,
                         check=True, capture_output=True, text=True)
    return Binaries(out.stdout.strip())


def check_peers(systems):
    """Exits with what to do when a peer's library is not installed."""
    if "xmpp-component" in systems:
        if shutil.which("node") is None or not os.path.isdir(
                os.path.join(PEERS, "node_modules", "@xmpp", "component")):
            sys.exit("@xmpp/component is not installed: run tools/setup")
    if "slixmpp" in systems:
        if subprocess.run(["/usr/bin/python3", "-c", "import slixmpp"],
                          capture_output=True).returncode != 0:
            sys.exit("python3-slixmpp is not installed: run tools/setup")


class BenchProsody(Prosody):
    """The e2e Prosody tuned for throughput, with the peers' components and load accounts.

    Nagle is off (small replies would otherwise wait for delayed ACKs: 20-60 ms each), reads
    are up to 64 KiB, Lua's garbage collector is generational, and client connections have
    no TLS (SCRAM-SHA-1 still authenticates).
    Accounts load1..N send the load; echo1 is the server-limit echo client.
    """

    def __init__(self, load_users, password="load-password"):
        super().__init__()
        self.load_users = load_users
        self.load_password = password
        self.secrets = {domain: secrets.token_hex(16)
                        for domain in (SLIXMPP_DOMAIN, XMPP_COMPONENT_DOMAIN)}

    def secret_for(self, domain):
        return self.component_secret if domain == HERALD_DOMAIN else self.secrets[domain]

    def _configure(self):
        super()._configure()
        with open(self.config_file) as f:
            config = f.read()
        config = config.replace("c2s_require_encryption = true",
                                "c2s_require_encryption = false\n"
                                "network_settings = { nagle = false; read_size = 65536 }")
        config = config.replace('"tls", ', "")
        # No message archive (XEP-0313, which the e2e tests need): with Prosody's file storage
        # every message is appended to the archive of its sender and its recipient, which grows
        # for the whole run, and round trips fell from thousands a second to under a hundred
        # within one 30 s measurement, Prosody's cost and not the systems'.
        assert '"mam", ' in config
        config = config.replace('"mam", ', "")
        # Lua 5.4's generational collector: Prosody spends about half the CPU per round trip
        # of its default incremental one here (docs/BENCHMARKS.md), so the ceiling that every
        # system shares is higher and they are easier to tell apart.
        config = config.replace("run_as_root = true",
                                'run_as_root = true\ngc = { mode = "generational" }')
        for domain, secret in self.secrets.items():
            config += f'\nComponent "{domain}"\n    component_secret = "{secret}"\n'
        with open(self.config_file, "w") as f:
            f.write(config)

    def _create_users(self):
        super()._create_users()
        accounts = [f"load{i}" for i in range(1, self.load_users + 1)]
        accounts.append(f"{ECHO_ACCOUNT_PREFIX}1")
        for account in accounts:
            subprocess.run(["prosodyctl", "--config", self.config_file, "register", account,
                            self.domain, self.load_password],
                           check=True, capture_output=True, timeout=30, cwd=self.dir)

    def authenticated_components(self, domain):
        """How many times `domain` has completed its component handshake so far."""
        try:
            with open(self.log_file, errors="replace") as f:
                # "Nov 22 03:32:56 agent.localhost:component  info  External component ..."
                return sum(1 for line in f
                           if f" {domain}:component" in line
                           and "successfully authenticated" in line)
        except OSError:
            return 0


class Component:
    """One running system under test: its process, and where its replies come from."""

    def __init__(self, system, proc, target, folder):
        self.system = system
        self.proc = proc
        self.target = target  # the JID the load goes to
        self.folder = folder

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        return self.proc.poll() is None

    def stderr_tail(self):
        return tail(os.path.join(self.folder, "stderr"))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        shutil.rmtree(self.folder, ignore_errors=True)


def herald_config(port, domain, secret_env="HERALD_SECRET"):
    return f"""[server]
mode = "component"
host = "127.0.0.1"
port = {port}
component_domain = "{domain}"
component_secret = "${{{secret_env}}}"
[agent]
allowed_jids = ["*"]
rate_limit_per_minute = 0
[log]
level = "warning"
"""


@contextlib.contextmanager
def start_component(system, bins, port, domain, secret, pin_cpu=None, c2s_port=None,
                    password=None, nice=0):
    """Starts `system` against a component port (or, for "server", a C2S port); stops it after.

    pin_cpu: run it on that CPU only (taskset), e.g. to measure "one core".
    nice: see prioritize(); the process runs in a session of its own.
    """
    folder = tempfile.mkdtemp(prefix=f"herald-bench-{system}-")
    env = dict(os.environ)
    if system == "herald":
        config = os.path.join(folder, "herald.toml")
        with open(config, "w") as f:
            f.write(herald_config(port, domain))
        env["HERALD_SECRET"] = secret
        args, target = [bins.herald, "--config", config], domain
    elif system == "slixmpp":
        env["PEER_SECRET"] = secret
        args = ["/usr/bin/python3", os.path.join(PEERS, "slixmpp_echo.py"), "127.0.0.1",
                str(port), domain]
        target = domain
    elif system == "xmpp-component":
        env["PEER_SECRET"] = secret
        args = ["node", os.path.join(PEERS, "xmpp_component_echo.js"), "127.0.0.1", str(port),
                domain]
        target = domain
    elif system == "server":
        args = [bins.loadgen, "--mode=echo", f"--port={c2s_port}",
                f"--user_prefix={ECHO_ACCOUNT_PREFIX}", "--users=1", f"--password={password}"]
        target = f"{ECHO_ACCOUNT_PREFIX}1@localhost"
    else:
        raise ValueError(f"unknown system {system!r}; one of {', '.join(SYSTEMS)}")
    if pin_cpu is not None:
        args = ["taskset", "-c", str(pin_cpu), *args]
    with open(os.path.join(folder, "stderr"), "wb") as err:
        proc = subprocess.Popen(args, cwd=folder, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE if system == "server" else
                                subprocess.DEVNULL, stderr=err, start_new_session=True)
    prioritize(proc.pid, nice)
    component = Component(system, proc, target, folder)
    try:
        if system == "server":
            line = proc.stdout.readline().decode(errors="replace")  # "loadgen: echo online..."
            if "online" not in line:
                raise RuntimeError(f"the echo client did not come online:\n"
                                   f"{component.stderr_tail()}")
        yield component
    finally:
        component.stop()


def wait_online(prosody, component, before, timeout=20):
    """Waits until Prosody has accepted the component's handshake (not for "server")."""
    if component.system == "server":
        return
    ok = wait_until(lambda: not component.alive()
                    or prosody.authenticated_components(component.target) > before, timeout)
    if not ok or not component.alive():
        raise RuntimeError(f"{component.system} did not connect to Prosody:\n"
                           f"{component.stderr_tail()}")


def start_loadgen(bins, args, nice=0, pin_cpu=None, env=None):
    """Starts loadgen (in a session of its own, at `nice`); its stdout and stderr are pipes."""
    command = [bins.loadgen, *args]
    if pin_cpu is not None:
        command = ["taskset", "-c", str(pin_cpu), *command]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env=env)
    prioritize(proc.pid, nice)
    return proc


def run_loadgen(bins, args, nice=0):
    """Runs loadgen with --json; returns its report, or raises with its stderr."""
    proc = start_loadgen(bins, [*args, "--json"], nice)
    try:
        out, err = proc.communicate()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if proc.returncode != 0:
        raise RuntimeError(f"loadgen {' '.join(args)} exited {proc.returncode}:\n{err[-2000:]}")
    return json.loads(out)


def machine_load():
    """The 1-minute load average and the CPU count, to print beside every figure."""
    return os.getloadavg()[0], os.cpu_count()


def package_version(package):
    """The installed Debian version of `package` (e.g. Prosody's), or "" if unknown."""
    done = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True,
                          text=True)
    return done.stdout.strip() if done.returncode == 0 else ""


def free_tcp_port():
    return free_port()


def settle(seconds=0.3):
    """A short pause so a component that just authenticated has finished its own setup."""
    time.sleep(seconds)
