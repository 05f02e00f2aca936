"""A private PostgreSQL server for end-to-end tests, as tests/support/postgres_server.h is for
the C++ ones.

`initdb` into a throwaway folder and `postgres` listening on a Unix socket in that folder only
(no TCP port), durability off (the data dies with the test). PostgreSQL refuses to run as root,
so as root the folder is given to Debian's `postgres` user and the server runs as it.

    with Postgres() as db:
        db.conninfo("herald")            # "host=/tmp/... port=5432 user=herald dbname=herald"
        db.sql("herald", "SELECT 1")     # psql's unaligned output
        db.restart(downtime=1.0)         # an outage: same folder, same socket
    # stopped, folder deleted

Whatever is still running when the Python process exits is stopped then.
"""

import atexit
import contextlib
import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time

import servers

PORT = "5432"  # only names the socket file in the private folder

_LIVE = set()


@atexit.register
def _stop_all():
    for server in list(_LIVE):
        with contextlib.suppress(Exception):
            server.stop()


def _bin():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
    if not found:
        raise servers.ServerError("no PostgreSQL server under /usr/lib/postgresql "
                                  "(tools/setup installs Debian's postgresql)")
    return os.path.dirname(found[-1])


class Postgres:
    def __init__(self, databases=("herald",)):
        self.bin = _bin()
        self.folder = tempfile.mkdtemp(prefix="herald-e2e-pg-")
        self.proc = None
        self._user = None
        if os.geteuid() == 0:
            self._user = pwd.getpwnam("postgres")
            os.chown(self.folder, self._user.pw_uid, self._user.pw_gid)
        self._as_server_user(["initdb", "-D", self.data, "-U", "herald", "--auth=trust",
                              "-E", "UTF8", "--no-locale", "--no-sync"], timeout=120)
        self.start()
        for name in databases:
            self.sql("postgres", f"CREATE DATABASE {name}")

    @property
    def data(self):
        return os.path.join(self.folder, "data")

    @property
    def log_path(self):
        return os.path.join(self.folder, "server.log")

    def conninfo(self, database):
        return f"host={self.folder} port={PORT} user=herald dbname={database}"

    def _server_user(self):
        """Popen arguments that run a program as the server's user (no preexec_fn: the tests
        run threads, and a function between fork and exec is not safe with them)."""
        if self._user is None:
            return {}
        return dict(user=self._user.pw_uid, group=self._user.pw_gid, extra_groups=[])

    def _as_server_user(self, args, timeout):
        done = subprocess.run([os.path.join(self.bin, args[0]), *args[1:]], capture_output=True,
                              text=True, timeout=timeout, **self._server_user())
        if done.returncode != 0:
            raise servers.ServerError(f"{args[0]} exited {done.returncode}:\n"
                                      f"{done.stdout}{done.stderr}")

    def start(self, timeout=60):
        log = open(self.log_path, "a")
        self.proc = subprocess.Popen(
            [os.path.join(self.bin, "postgres"), "-D", self.data, "-k", self.folder, "-p", PORT,
             "-c", "listen_addresses=", "-c", "fsync=off", "-c", "synchronous_commit=off",
             "-c", "full_page_writes=off"],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            **self._server_user())
        log.close()
        _LIVE.add(self)
        ready = servers.wait_until(
            lambda: self.proc.poll() is not None or subprocess.run(
                ["pg_isready", "-q", "-h", self.folder, "-p", PORT]).returncode == 0,
            timeout, interval=0.1)
        if not ready or self.proc.poll() is not None:
            raise servers.ServerError("postgres did not start:\n" + servers.tail(self.log_path))

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # fast shutdown: sessions cut, data kept
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        _LIVE.discard(self)

    def restart(self, downtime=0.0):
        self.stop()
        time.sleep(downtime)  # the outage itself: how long the database is away
        self.start()

    def sql(self, database, statement):
        """Runs one statement with psql; returns its unaligned, tuples-only output."""
        done = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                               self.conninfo(database), "-c", statement],
                              capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise servers.ServerError(f"psql: {statement}: {done.stderr}")
        return done.stdout.strip()

    def close(self):
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
