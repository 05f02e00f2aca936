// tests/support/postgres_server.h
//
// A private PostgreSQL server for tests: `initdb` into a new folder under /tmp and `postgres`
// listening on a Unix socket in that folder only (no TCP port at all), with durability off
// (fsync, synchronous_commit) because a test's data dies with it. As root, which PostgreSQL
// refuses to run as, the server runs as Debian's `postgres` user. The server is a child of the
// test, stopped (fast shutdown) and its folder removed when the PostgresServer ends; if the
// test dies first the kernel stops it (PR_SET_PDEATHSIG).
//
// Missing binaries are an error, never a skip: tools/setup installs Debian's `postgresql`.
//
//   absl::StatusOr<PostgresServer*> server = SharedPostgresServer();  // one per test binary
//   absl::StatusOr<std::string> conninfo = (*server)->NewDatabase();  // empty, for one test
//   ... base::PostgresDatabase::Connect({.conninfo = *conninfo}) ...
//   ASSERT_TRUE((*server)->Stop().ok());  ASSERT_TRUE((*server)->Start().ok());  // an outage
//   absl::StatusOr<std::shared_ptr<base::PostgresDatabase>> db = ConnectNewDatabase();  // both
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "component/base/postgres_database.h"

namespace herald::testing {

class PostgresServer {
 public:
  // Makes the cluster and starts the server; waits until it accepts connections.
  static absl::StatusOr<std::unique_ptr<PostgresServer>> Create();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;
  ~PostgresServer();

  // Creates an empty database and returns its libpq connection string.
  absl::StatusOr<std::string> NewDatabase();
  // A connection string for `database` on this server.
  std::string ConnectionString(const std::string& database) const;

  // Stops the server (fast shutdown: sessions are cut) and starts it again on the same data;
  // Start waits until it accepts connections.
  absl::Status Stop();
  absl::Status Start();

  // The server's main process (its backends are its children); -1 while stopped.
  pid_t pid() const { return pid_; }

 private:
  PostgresServer(std::string folder, std::string bin) : folder_(std::move(folder)), bin_(bin) {}

  // Runs `program` with `args` as the server's user, its output appended to `log`; returns the
  // child (`wait` false) or waits for it and checks that it succeeded.
  absl::StatusOr<pid_t> Run(const std::string& program, const std::vector<std::string>& args,
                            const std::string& log, bool wait);

  std::string folder_;  // data/, the socket, server.log
  std::string bin_;     // /usr/lib/postgresql/<version>/bin
  pid_t pid_ = -1;
  int databases_ = 0;
};

// One server for the whole test binary, made at first use and stopped at exit; the error of
// its start, if it failed, is returned to every caller (fail the test with it).
absl::StatusOr<PostgresServer*> SharedPostgresServer();

// A new empty database on the shared server, connected with a pool of `pool_size`.
absl::StatusOr<std::shared_ptr<base::PostgresDatabase>> ConnectNewDatabase(int pool_size = 2);

}  // namespace herald::testing
