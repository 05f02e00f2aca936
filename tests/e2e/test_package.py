"""End to end: the Debian package tools/package builds, unpacked and installed.

The package is made from the binaries under test (`tools/package --from BAZEL_BIN OUT`). It must
hold what it says; its binaries, unpacked into a throwaway root, must run and accept the
configuration it ships; installed on the machine (as root, when no herald package is installed
already) it must make its system user and state folder, carry a unit systemd accepts with an
exposure score of 2.0 or less, let the service's user read its configuration, and leave nothing
behind once purged.

    tests/e2e/run bazel-bin/component/herald test_package
"""

import grp
import os
import pwd
import re
import shutil
import stat
import subprocess
import tempfile
import unittest

from agent import agent_program
from test_control import heraldctl_program

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# What the shipped herald.toml names as ${VARIABLE}.
SECRETS = {"HERALD_SECRET": "e2e-secret", "ANTHROPIC_API_KEY": "e2e-not-a-key",
           "OPENAI_API_KEY": "e2e-not-a-key"}
FILES = ["etc/herald/herald.env", "etc/herald/herald.toml", "lib/systemd/system/herald.service",
         "usr/bin/herald", "usr/bin/heraldctl", "usr/share/doc/herald/README.md",
         "usr/share/doc/herald/configuration.md", "usr/share/doc/herald/operators.md",
         "usr/share/doc/herald/security.md"]


def run(*command, env=None, check=True):
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(command)} exited with {result.returncode}:\n"
                             f"{result.stdout}\n{result.stderr}")
    return result


def version():
    with open(os.path.join(ROOT, "component", "base", "version.h")) as f:
        return re.search(r'kVersion\[\] = "([^"]+)"', f.read()).group(1)


class PackageTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        if os.environ.get("HERALD_E2E_AGENT") == "echo":
            raise unittest.SkipTest("the echo stand-in is not packaged")
        herald = agent_program()[0]
        heraldctl_program()  # the package holds heraldctl too
        bazel_bin = os.path.dirname(os.path.dirname(os.path.abspath(herald)))
        cls.out = tempfile.mkdtemp(prefix="herald-e2e-package-")
        made = run(os.path.join(ROOT, "tools", "package"), "--from", bazel_bin, cls.out)
        cls.deb = made.stdout.strip().splitlines()[-1]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.out, ignore_errors=True)

    def environment(self, **extra):
        env = {k: v for k, v in os.environ.items() if k not in SECRETS}
        env.update(extra)
        return env

    def test_the_package_holds_what_it_says(self):
        self.assertEqual(os.path.basename(self.deb),
                         f"herald_{version()}_{run('dpkg', '--print-architecture').stdout.strip()}.deb")
        field = lambda name: run("dpkg-deb", "--field", self.deb, name).stdout.strip()
        self.assertEqual(field("Package"), "herald")
        self.assertEqual(field("Version"), version())
        depends = field("Depends")
        for library in ("libc6", "libgrpc++", "libabsl", "libsqlite3", "adduser"):
            self.assertIn(library, depends)
        contents = run("dpkg-deb", "--contents", self.deb).stdout
        listed = {line.split()[-1].lstrip("./"): line.split()[0]
                  for line in contents.splitlines() if not line.endswith("/")}
        self.assertEqual(sorted(listed), FILES)
        self.assertEqual(listed["etc/herald/herald.env"], "-rw-r-----", "secrets: not world-readable")
        self.assertEqual(listed["usr/bin/herald"], "-rwxr-xr-x")
        control = tempfile.mkdtemp(dir=self.out)
        run("dpkg-deb", "--control", self.deb, control)
        with open(os.path.join(control, "conffiles")) as f:
            self.assertEqual(f.read().split(), ["/etc/herald/herald.toml", "/etc/herald/herald.env"])

    def test_its_binaries_run_and_accept_the_configuration_it_ships(self):
        root = tempfile.mkdtemp(dir=self.out)
        run("dpkg-deb", "--extract", self.deb, root)
        herald = os.path.join(root, "usr", "bin", "herald")
        config = os.path.join(root, "etc", "herald", "herald.toml")
        self.assertEqual(run(herald, "--version").stdout.strip(), f"herald {version()}")
        self.assertIn(version(), run(os.path.join(root, "usr", "bin", "heraldctl"),
                                     "--version").stdout)
        checked = run(herald, "--check-config", config, env=self.environment(**SECRETS))
        self.assertIn("configuration is valid", checked.stdout + checked.stderr)
        # The service's user has no uid to give runs nor namespaces to make: the shipped config
        # asks the sandbox only for what it has.
        with open(config) as f:
            self.assertRegex(f.read(), r'(?m)^require = \["seccomp", "landlock"\]')
        # Without its secrets the check fails and names what is missing.
        missing = run(herald, "--check-config", config, env=self.environment(), check=False)
        self.assertEqual(missing.returncode, 2)
        self.assertIn("HERALD_SECRET", missing.stderr)

    def test_installed_it_is_a_service_with_a_user_of_its_own(self):
        if os.geteuid() != 0:
            self.skipTest("installing a package needs root (CI runs as root)")
        if run("dpkg-query", "-W", "herald", check=False).returncode == 0:
            self.skipTest("a herald package is installed on this machine: left alone")
        self.addCleanup(self.purge_and_check)
        run("dpkg", "--install", self.deb)

        user = pwd.getpwnam("herald")
        self.assertEqual(user.pw_dir, "/var/lib/herald")
        self.assertEqual(user.pw_shell, "/usr/sbin/nologin")
        state = os.stat("/var/lib/herald")
        self.assertEqual((state.st_uid, stat.S_IMODE(state.st_mode)), (user.pw_uid, 0o700))
        env_file = os.stat("/etc/herald/herald.env")
        self.assertEqual((env_file.st_uid, env_file.st_gid, stat.S_IMODE(env_file.st_mode)),
                         (0, grp.getgrnam("herald").gr_gid, 0o640))

        unit = "/lib/systemd/system/herald.service"
        verified = run("systemd-analyze", "verify", unit, check=False)
        self.assertEqual(verified.returncode, 0, verified.stdout + verified.stderr)
        self.assertEqual(verified.stdout + verified.stderr, "", "systemd has remarks on the unit")
        security = run("systemd-analyze", "security", "--offline=true", unit, check=False)
        exposure = re.search(r"Overall exposure level for herald\.service: (\d+\.\d+)",
                             security.stdout)
        self.assertIsNotNone(exposure, security.stdout + security.stderr)
        self.assertLessEqual(float(exposure.group(1)), 2.0, security.stdout)
        print(f"\n[package] systemd-analyze security: exposure {exposure.group(1)} of 10")

        # What ExecStartPre runs, as the service's user, with the environment file's secrets.
        checked = run("runuser", "-u", "herald", "--", "/usr/bin/herald", "--check-config",
                      "/etc/herald/herald.toml", env=self.environment(**SECRETS))
        self.assertIn("configuration is valid", checked.stdout + checked.stderr)

    def purge_and_check(self):
        run("dpkg", "--purge", "herald")
        with self.assertRaises(KeyError):
            pwd.getpwnam("herald")
        for gone in ("/etc/herald", "/var/lib/herald", "/usr/bin/herald",
                     "/lib/systemd/system/herald.service"):
            self.assertFalse(os.path.exists(gone), f"{gone} is left after a purge")


if __name__ == "__main__":
    unittest.main()
