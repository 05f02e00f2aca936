"""Real Prosody and ejabberd servers on loopback, for end-to-end tests and the demo.

Each server gets a throwaway folder (config, data, logs, certificates), ports picked at
run time on 127.0.0.1, a certificate for `localhost` signed by a throwaway CA (so C2S
STARTTLS can be verified against `ca_file`), the users alice, bob and herald, a MUC
service and an external component whose secret is random. The component part of each
config is built from the operator snippets in tools/servers/, so the tests prove them.

    with Prosody() as server:            # or Ejabberd()
        server.c2s_port, server.component_port, server.component_secret, server.ca_file
        server.password("alice")
        server.restart(downtime=1.5)     # same ports, same data
    # everything stopped, folder deleted

Each server runs in its own process group (Prosody as root with run_as_root, ejabberd's
node as user ejabberd); stop() ends that group and nothing else, and whatever is still
running when the Python process exits is stopped then, so a test never leaves a server
behind. HERALD_E2E_SERVER_LOG=debug makes the servers log every stanza.
"""

import atexit
import contextlib
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SNIPPETS = os.path.join(ROOT, "tools", "servers")

DOMAIN = "localhost"
MUC_DOMAIN = "conference.localhost"
# A pubsub service (XEP-0060) whose nodes a user's first publish creates.
PUBSUB_DOMAIN = "pubsub.localhost"
# The HTTP File Upload service (XEP-0363): Prosody's mod_http_file_share, ejabberd's
# mod_http_upload. Its files are served on http://localhost:<upload_port>/ ("upload.localhost"
# does not resolve here).
UPLOAD_DOMAIN = "upload.localhost"
UPLOAD_LIMIT = 10 * 1024 * 1024
COMPONENT_DOMAIN = "agent.localhost"
# A second component every test server accepts: tests/e2e/hostile.py connects as it to play a
# hostile federated server (its rooms forge invitations in allowed users' names).
HOSTILE_DOMAIN = "muc.evil.example"
USERS = ("alice", "bob", "carol", "herald")

# The example values in tools/servers/*, replaced when a test server is configured.
_SNIPPET_DOMAIN = "agent.example.org"
_SNIPPET_PORT = "5347"
_SNIPPET_SECRET = "change-me-to-a-long-random-secret"


# Servers started by this process and not stopped yet: stopped at exit whatever happens
# (an interrupted test run must not leave a server behind). detach() takes one out.
_LIVE = set()


@atexit.register
def _stop_all():
    for server in list(_LIVE):
        with contextlib.suppress(Exception):
            server.stop()


class ServerError(RuntimeError):
    """A server did not start or stop as it should; the message holds its log's tail."""


# Every port free_port handed out in this run. The kernel may hand the same free port to two
# binds in a row; two services of one server given one port would leave one of them unbound,
# and a client of it talking to the other (a c2s client waiting on the upload listener).
_given_ports = set()


def free_port():
    """A TCP port on 127.0.0.1 that nothing listened on a moment ago, and that this run has not
    handed out before."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _given_ports:
            _given_ports.add(port)
            return port


def port_accepts(port, host="127.0.0.1"):
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def wait_until(predicate, timeout, interval=0.05):
    """Polls predicate until it is true or timeout seconds have passed; returns its value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def tail(path, lines=40):
    try:
        with open(path, "r", errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as e:
        return f"(no log at {path}: {e})\n"


def _run(args, timeout, **kwargs):
    """Runs a short helper command; raises ServerError with its output when it fails."""
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kwargs)
    except subprocess.TimeoutExpired as e:
        raise ServerError(f"{' '.join(args)} did not finish in {timeout}s") from e
    if done.returncode != 0:
        raise ServerError(f"{' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return done.stdout


def make_certificates(folder):
    """Writes ca.pem, and localhost.crt/.key signed by it (SANs for the three domains).

    Returns (ca_file, cert_file, key_file). EC keys keep generation fast.
    """
    os.makedirs(folder, exist_ok=True)
    p = lambda name: os.path.join(folder, name)  # noqa: E731
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _run(["openssl", "req", "-x509", *ec, "-keyout", p("ca.key"), "-out", p("ca.pem"),
          "-days", "365", "-subj", "/CN=Herald e2e throwaway CA",
          "-addext", "basicConstraints=critical,CA:TRUE",
          "-addext", "keyUsage=critical,keyCertSign,cRLSign"], timeout=30)
    _run(["openssl", "req", *ec, "-keyout", p("localhost.key"), "-out", p("localhost.csr"),
          "-subj", f"/CN={DOMAIN}"], timeout=30)
    with open(p("localhost.ext"), "w") as f:
        f.write(f"subjectAltName=DNS:{DOMAIN},DNS:{MUC_DOMAIN},DNS:{COMPONENT_DOMAIN}\n"
                "basicConstraints=CA:FALSE\n"
                "keyUsage=critical,digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=serverAuth\n")
    _run(["openssl", "x509", "-req", "-in", p("localhost.csr"), "-CA", p("ca.pem"),
          "-CAkey", p("ca.key"), "-CAcreateserial", "-out", p("localhost.crt"), "-days", "365",
          "-extfile", p("localhost.ext")], timeout=30)
    return p("ca.pem"), p("localhost.crt"), p("localhost.key")


def _fill_snippet(name, port, secret):
    """The operator snippet tools/servers/NAME with its example values replaced."""
    with open(os.path.join(SNIPPETS, name)) as f:
        text = f.read()
    for old, new in ((_SNIPPET_DOMAIN, COMPONENT_DOMAIN), (_SNIPPET_SECRET, secret),
                     (_SNIPPET_PORT, str(port))):
        if old not in text:
            raise ServerError(f"tools/servers/{name} no longer contains {old!r}; "
                              "update tests/e2e/servers.py with it")
        text = text.replace(old, new)
    return text


class _Server:
    """What Prosody and Ejabberd share: folder, ports, users, process group, restart."""

    name = "server"
    start_timeout = 20.0
    stop_timeout = 15.0

    def __init__(self):
        self.dir = None
        self.proc = None
        self.c2s_port = None
        self.component_port = None
        self.hostile_port = None
        self.upload_port = None  # the upload service's HTTP listener
        self.component_secret = secrets.token_hex(16)
        self.hostile_secret = secrets.token_hex(16)
        self._passwords = {user: secrets.token_hex(8) for user in USERS}
        self.ca_file = self.cert_file = self.key_file = None
        self._output = None

    # Facts the tests need.
    domain = DOMAIN
    muc_domain = MUC_DOMAIN
    pubsub_domain = PUBSUB_DOMAIN
    upload_domain = UPLOAD_DOMAIN
    component_domain = COMPONENT_DOMAIN
    hostile_domain = HOSTILE_DOMAIN

    def password(self, user):
        return self._passwords[user]

    def jid(self, user):
        return f"{user}@{DOMAIN}"

    @property
    def log_file(self):
        raise NotImplementedError

    # Life cycle.
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        """First call: makes the folder, config, users. Later calls: same ports and data."""
        first = self.dir is None
        _LIVE.add(self)
        if first:
            self.dir = tempfile.mkdtemp(prefix=f"herald-e2e-{self.name}-")
            self.c2s_port = free_port()
            self.component_port = free_port()
            self.hostile_port = self._hostile_port()
            self.upload_port = free_port()
            self.ca_file, self.cert_file, self.key_file = make_certificates(
                os.path.join(self.dir, "certs"))
        try:
            if first:
                self._configure()
            self._launch()
            self._wait_started()
            if first:
                self._create_users()
        except BaseException:
            self.stop()
            raise

    def restart(self, downtime=0.0):
        """Stops the server, waits downtime seconds, starts it on the same ports and data."""
        self._terminate()
        time.sleep(downtime)  # an outage of a given length, not a synchronisation
        self.start()

    def stop(self):
        """Stops what this object started and deletes its folder. Safe to call twice."""
        _LIVE.discard(self)
        try:
            self._terminate()
        finally:
            if self.dir is not None:
                shutil.rmtree(self.dir, ignore_errors=True)
                self.dir = None

    def detach(self):
        """Leaves the server running after this process exits (tools/demo --keep).

        Returns the bash command that stops it and deletes its folder later.
        """
        _LIVE.discard(self)
        group = self.proc.pid
        return (f"kill -TERM -- -{group}; "
                f"for _ in $(seq 50); do kill -0 -- -{group} 2>/dev/null || break; sleep 0.2; "
                f"done; kill -KILL -- -{group} 2>/dev/null; rm -rf {self.dir}")

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def _hostile_port(self):
        """The port the hostile component connects to (the component port by default)."""
        return self.component_port

    def _wait_started(self):
        ports = (self.c2s_port, self.component_port, self.hostile_port)
        ok = wait_until(lambda: not self.running() or all(port_accepts(p) for p in ports),
                        self.start_timeout)
        if not ok or not self.running():
            why = (f"exited with status {self.proc.returncode}" if not self.running()
                   else f"did not accept connections on ports {ports} "
                   f"within {self.start_timeout:.0f}s")
            raise ServerError(self._describe_failure(f"{self.name} {why}"))

    def _describe_failure(self, what):
        return (f"{what}\n--- tail of {self.log_file} ---\n{tail(self.log_file)}"
                f"--- tail of its console output ---\n{tail(self._output)}")

    def _popen(self, args, **kwargs):
        self._output = os.path.join(self.dir, f"{self.name}.console")
        with open(self._output, "ab") as out:
            # Own session = own process group, which _terminate() ends as a whole.
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True,
                                         cwd=self.dir, **kwargs)

    def _terminate(self):
        if self.proc is None:
            return
        pgid = self.proc.pid  # start_new_session made it the group leader
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGTERM)
        # Wait for the whole group, not just the leader: ejabberdctl (the leader) dies at
        # once while the Erlang node is still closing its tables; killing the node then
        # would lose data that the restart test needs.
        deadline = time.monotonic() + self.stop_timeout
        while time.monotonic() < deadline and _group_alive(pgid):
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=0.05)
        if _group_alive(pgid):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        wait_until(lambda: not _group_alive(pgid), 5)
        self.proc = None

    def _configure(self):
        raise NotImplementedError

    def _launch(self):
        raise NotImplementedError

    def _create_users(self):
        raise NotImplementedError


def _group_alive(pgid):
    """Whether any process of group pgid still runs (zombies waiting to be reaped don't)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                # pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


class Prosody(_Server):
    """Prosody 0.12 in the foreground as root (run_as_root), loopback only, no s2s."""

    name = "prosody"

    @property
    def config_file(self):
        return os.path.join(self.dir, "prosody.cfg.lua")

    @property
    def log_file(self):
        return os.path.join(self.dir, "prosody.log")

    def _configure(self):
        d = self.dir
        os.makedirs(os.path.join(d, "data"), mode=0o750)
        component = _fill_snippet("prosody-component.cfg.lua", self.component_port,
                                  self.component_secret)
        # Global options must come before any VirtualHost/Component section, so the
        # snippet (global lines + its Component section) goes right after ours; the
        # remaining hosts follow it.
        config = f"""-- Generated by tests/e2e/servers.py for one test run; deleted afterwards.
run_as_root = true
pidfile = "{d}/prosody.pid"
data_path = "{d}/data"
log = {{ {{ levels = {{ min = "{os.environ.get('HERALD_E2E_SERVER_LOG', 'info')}" }},
          to = "file", filename = "{d}/prosody.log" }} }}
interfaces = {{ "127.0.0.1" }}
local_interfaces = {{ "127.0.0.1" }}
c2s_ports = {{ {self.c2s_port} }}
c2s_direct_tls_ports = {{ }}
legacy_ssl_ports = {{ }}
modules_enabled = {{ "roster", "saslauth", "tls", "disco", "ping", "version", "mam", "smacks",
                    "carbons" }}
-- No federation: nothing leaves this machine.
modules_disabled = {{ "s2s", "s2s_auth_certs", "dialback", "offline" }}
-- HTTP for the upload service only, plain, on loopback.
http_ports = {{ {self.upload_port} }}
http_interfaces = {{ "127.0.0.1" }}
https_ports = {{ }}
https_interfaces = {{ }}
authentication = "internal_hashed"
storage = "internal"
c2s_require_encryption = true
allow_unencrypted_plain_auth = false
ssl = {{ certificate = "{self.cert_file}", key = "{self.key_file}" }}

-- ---- from tools/servers/prosody-component.cfg.lua ----
{component}
-- ---- end of snippet ----

VirtualHost "{DOMAIN}"

-- Anyone may create rooms (Prosody's default): only local users and Herald's component
-- reach this loopback server, and Herald must be able to create the rooms it is configured
-- for ("local" would refuse it: its JID is not on {DOMAIN}).
Component "{MUC_DOMAIN}" "muc"
    -- Rooms keep an archive (XEP-0313), as most public services do: Herald reads a room's
    -- last messages when it joins, and rooms stamp their messages with stanza-ids.
    modules_enabled = {{ "muc_mam" }}
    muc_log_by_default = true

-- A pubsub service: a node is created by its first publish (its publisher owns it). Prosody
-- lets only the service's admins create nodes; alice is the test's publisher.
Component "{PUBSUB_DOMAIN}" "pubsub"
    admins = {{ "alice@localhost" }}
    autocreate_on_publish = true

-- HTTP File Upload (XEP-0363), as Conversations, Dino and Monal use it to send files.
Component "{UPLOAD_DOMAIN}" "http_file_share"
    http_host = "localhost"
    http_external_url = "http://localhost:{self.upload_port}/"
    http_file_share_size_limit = {UPLOAD_LIMIT}

-- Stands in for a hostile server in the tests (tests/e2e/hostile.py); not part of a setup.
Component "{HOSTILE_DOMAIN}"
    component_secret = "{self.hostile_secret}"
"""
        with open(self.config_file, "w") as f:
            f.write(config)

    def _launch(self):
        self._popen(["prosody", "-F", "--config", self.config_file])

    def _create_users(self):
        for user in USERS:
            # prosodyctl writes the account straight into data_path (hashed, SCRAM-ready).
            _run(["prosodyctl", "--config", self.config_file, "register", user, DOMAIN,
                  self._passwords[user]], timeout=30, cwd=self.dir)


class Ejabberd(_Server):
    """ejabberd 23.01 through Debian's ejabberdctl, as user ejabberd, loopback only.

    Erlang distribution uses a fixed port (ERL_DIST_PORT) on 127.0.0.1, so no epmd is
    started at all; if one appears anyway it is the one this server started and is killed.
    """

    name = "ejabberd"
    start_timeout = 40.0

    def __init__(self, scale_out=False, extra_users=()):
        """scale_out: add tools/servers/ejabberd-scale-out.yml, for several Heralds on the
        component domain (with one, the stanzas of half the senders would have no slot).
        extra_users: accounts to make beside alice, bob, carol and herald (a load of people)."""
        super().__init__()
        self.scale_out = scale_out
        self._passwords.update({user: secrets.token_hex(8) for user in extra_users})
        self.node = f"herald-e2e-{os.getpid()}-{secrets.token_hex(3)}@localhost"
        self.dist_port = None
        self._epmd_before = set()

    @property
    def config_file(self):
        return os.path.join(self.dir, "ejabberd.yml")

    @property
    def log_file(self):
        return os.path.join(self.dir, "logs", "ejabberd.log")

    def _hostile_port(self):
        return free_port()

    def _as_ejabberd(self):
        """Popen arguments that run ejabberdctl as user ejabberd.

        ejabberdctl run by root would switch with `su -c`, which puts the node in a new
        session out of reach of our process group; run by ejabberd it stays in ours.
        """
        user = pwd.getpwnam("ejabberd")
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": self.dir, "LANG": "C.UTF-8",
               "USER": "ejabberd", "LOGNAME": "ejabberd"}
        return dict(user=user.pw_uid, group=user.pw_gid, extra_groups=[], env=env)

    def _ctl(self, *args):
        d = self.dir
        return ["ejabberdctl", "--config-dir", os.path.join(d, "etc"),
                "--ctl-config", os.path.join(d, "etc", "ejabberdctl.cfg"),
                "--config", self.config_file, "--node", self.node,
                "--spool", os.path.join(d, "spool"), "--logs", os.path.join(d, "logs"), *args]

    def _configure(self):
        d = self.dir
        self.dist_port = free_port()
        user = pwd.getpwnam("ejabberd")
        os.chmod(d, 0o755)  # the node runs as ejabberd and must reach its files
        for sub in ("etc", "spool", "logs", "certs", "upload"):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
            os.chown(os.path.join(d, sub), user.pw_uid, user.pw_gid)
        pem = os.path.join(d, "certs", "localhost.pem")
        with open(pem, "w") as out:
            for part in (self.cert_file, self.key_file):
                with open(part) as f:
                    out.write(f.read())
        os.chown(pem, user.pw_uid, user.pw_gid)
        os.chmod(pem, 0o600)
        with open(os.path.join(d, "etc", "inetrc"), "w") as f:
            f.write('{lookup,["file","native"]}.\n{host,{127,0,0,1}, ["localhost"]}.\n')
        cookie = secrets.token_hex(16)
        # Our own ctl config instead of /etc/ejabberd/ejabberdctl.cfg, which pins the
        # system config. ERL_DIST_PORT: no epmd; the interface keeps it on loopback.
        with open(os.path.join(d, "etc", "ejabberdctl.cfg"), "w") as f:
            f.write(f"ERL_DIST_PORT={self.dist_port}\n"
                    f'ERL_OPTIONS="-setcookie {cookie} '
                    '-kernel inet_dist_use_interface {127,0,0,1} '
                    '-env ERL_CRASH_DUMP_BYTES 0"\n'
                    "EJABBERD_BYPASS_WARNINGS=true\n")
        component = _fill_snippet("ejabberd-component.yml", self.component_port,
                                  self.component_secret)
        # The snippet is a `listen:` list; its items join our C2S listener. The hostile
        # component of the tests (tests/e2e/hostile.py) gets a listener of its own: ejabberd
        # routes every host of a listener to each component connected to it.
        items = component.split("\nlisten:\n", 1)[1]
        items += f"""  -
    port: {self.upload_port}
    ip: "127.0.0.1"
    module: ejabberd_http
    request_handlers:
      /upload: mod_http_upload
  -
    port: {self.hostile_port}
    ip: "127.0.0.1"
    module: ejabberd_service
    hosts:
      {HOSTILE_DOMAIN}:
        password: "{self.hostile_secret}"
"""
        level = os.environ.get("HERALD_E2E_SERVER_LOG", "info")
        # Several Heralds on one domain (tests/e2e/test_scale_out.py): one person's stanzas
        # to one instance. The snippet is top-level YAML, taken whole (comments and all).
        balancing = ""
        if self.scale_out:
            with open(os.path.join(SNIPPETS, "ejabberd-scale-out.yml")) as f:
                balancing = f.read()
            if _SNIPPET_DOMAIN not in balancing:
                raise ServerError("tools/servers/ejabberd-scale-out.yml no longer contains "
                                  f"{_SNIPPET_DOMAIN!r}; update tests/e2e/servers.py with it")
            balancing = ("# ---- from tools/servers/ejabberd-scale-out.yml ----\n"
                         + balancing.replace(_SNIPPET_DOMAIN, COMPONENT_DOMAIN)
                         + "# ---- end of snippet ----\n")
        config = f"""# Generated by tests/e2e/servers.py for one test run; deleted afterwards.
hosts:
  - {DOMAIN}
loglevel: {level}
log_rotate_count: 0
certfiles:
  - "{pem}"
ca_file: "{self.ca_file}"
acme:
  auto: false
auth_method: internal
listen:
  -
    port: {self.c2s_port}
    ip: "127.0.0.1"
    module: ejabberd_c2s
    starttls_required: true
# ---- from tools/servers/ejabberd-component.yml ----
{items}# ---- end of snippet ----
acl:
  local:
    user_regexp: ""
  # Herald's component, which creates the rooms it is configured for.
  herald_component:
    server: {COMPONENT_DOMAIN}
access_rules:
  local:
    allow: local
  c2s:
    allow: all
  muc_create:
    - allow: local
    - allow: herald_component
  # The upload service gives slots to local users and to Herald, which asks for one to learn
  # where the service's files are served from (docs/media.md).
  upload:
    - allow: local
    - allow: herald_component
# No federation: nothing leaves this machine.
s2s_access: none
{balancing}modules:
  mod_disco: {{}}
  # Archive everything, as Prosody's mod_mam does by default (ejabberd's default is never).
  mod_mam:
    default: always
  mod_muc:
    host: {MUC_DOMAIN}
    access_create: muc_create
    # Rooms keep an archive (XEP-0313), as on most public services: Herald reads a room's
    # last messages when it joins, and rooms stamp their messages with stanza-ids.
    default_room_options:
      mam: true
  mod_ping: {{}}
  # A pubsub service: a node is created by its first publish (its publisher owns it).
  mod_pubsub:
    host: {PUBSUB_DOMAIN}
    access_createnode: local
    plugins: ["flat"]
  mod_stream_mgmt: {{}}
  mod_carboncopy: {{}}
  mod_roster: {{}}
  mod_version: {{}}
  # HTTP File Upload (XEP-0363), as Conversations, Dino and Monal use it to send files.
  mod_http_upload:
    host: {UPLOAD_DOMAIN}
    access: upload
    put_url: "http://localhost:{self.upload_port}/upload"
    docroot: "{d}/upload"
    max_size: {UPLOAD_LIMIT}
"""
        with open(self.config_file, "w") as f:
            f.write(config)

    def _launch(self):
        self._epmd_before = _epmd_pids()
        self._popen(self._ctl("foreground"), **self._as_ejabberd())

    def _create_users(self):
        # Each ejabberdctl call boots an Erlang VM (about a second): run them side by side, a
        # few at a time.
        failures = []
        users = list(self._passwords)
        for start in range(0, len(users), 8):
            failures += self._register(users[start:start + 8])
        if failures:
            raise ServerError(self._describe_failure("\n".join(failures)))

    def _register(self, users):
        calls = [(user, subprocess.Popen(self._ctl("register", user, DOMAIN,
                                                   self._passwords[user]),
                                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, text=True, cwd=self.dir,
                                         **self._as_ejabberd()))
                 for user in users]
        failures = []
        for user, call in calls:
            try:
                out, _ = call.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                call.kill()
                out, _ = call.communicate()
                failures.append(f"register {user}: timed out\n{out}")
                continue
            if call.returncode != 0:
                failures.append(f"register {user}: exit {call.returncode}\n{out}")
        return failures

    def _terminate(self):
        try:
            super()._terminate()
        finally:
            # Should the node ever escape the group, its unique name still finds it.
            for pid in _pids_with(self.node):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            for pid in _epmd_pids() - self._epmd_before:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)


def _pids_with(text):
    """PIDs of processes whose command line contains text."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if text.encode() in f.read():
                    found.append(int(entry))
        except OSError:
            pass
    return found


def _epmd_pids():
    """PIDs of epmd processes running as user ejabberd."""
    done = subprocess.run(["pgrep", "-u", "ejabberd", "-x", "epmd"], capture_output=True,
                          text=True)
    return {int(p) for p in done.stdout.split()}


SERVERS = {"prosody": Prosody, "ejabberd": Ejabberd}
