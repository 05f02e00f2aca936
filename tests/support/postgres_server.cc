#include "tests/support/postgres_server.h"

#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <postgresql/libpq-fe.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace herald::testing {
namespace {

// The port only names the socket file (.s.PGSQL.5432) in the server's private folder.
constexpr char kPort[] = "5432";
constexpr absl::Duration kStartTimeout = absl::Seconds(60);

// The newest installed server's bin folder ("" when there is none).
std::string FindServerBin() {
  glob_t found{};
  std::string bin;
  if (::glob("/usr/lib/postgresql/*/bin/postgres", 0, nullptr, &found) == 0) {
    // Sorted: the last is the newest major version (two digits since PostgreSQL 10).
    const std::string path = found.gl_pathv[found.gl_pathc - 1];
    bin = path.substr(0, path.rfind('/'));
  }
  ::globfree(&found);
  return bin;
}

std::string Tail(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  return all.size() > 2000 ? all.substr(all.size() - 2000) : all;
}

}  // namespace

absl::StatusOr<pid_t> PostgresServer::Run(const std::string& program,
                                          const std::vector<std::string>& args,
                                          const std::string& log, bool wait) {
  // Everything the child needs is prepared before fork: after it, only system calls.
  uid_t uid = ::geteuid();
  gid_t gid = ::getegid();
  if (uid == 0) {
    const passwd* user = ::getpwnam("postgres");
    if (user == nullptr) {
      return absl::FailedPreconditionError(
          "PostgreSQL refuses to run as root and there is no 'postgres' user "
          "(tools/setup installs Debian's postgresql, which makes it)");
    }
    uid = user->pw_uid;
    gid = user->pw_gid;
  }
  const std::string path = absl::StrCat(bin_, "/", program);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();

  const pid_t pid = ::fork();
  if (pid < 0) return absl::ErrnoToStatus(errno, "fork");
  if (pid == 0) {
    if (::getuid() == 0 &&
        (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0)) {
      ::_exit(126);
    }
    // After the change of user, which clears it: the server ends with the test.
    ::prctl(PR_SET_PDEATHSIG, SIGQUIT);
    if (::getppid() != parent) ::_exit(125);
    const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (out >= 0) {
      ::dup2(out, STDOUT_FILENO);
      ::dup2(out, STDERR_FILENO);
    }
    ::execv(path.c_str(), argv.data());
    ::_exit(127);
  }
  if (!wait) return pid;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(absl::StrCat(path, " failed (status ", status, "): ", Tail(log)));
  }
  return pid;
}

absl::StatusOr<std::unique_ptr<PostgresServer>> PostgresServer::Create() {
  const std::string bin = FindServerBin();
  if (bin.empty()) {
    return absl::FailedPreconditionError(
        "no PostgreSQL server under /usr/lib/postgresql (tools/setup installs Debian's "
        "postgresql)");
  }
  char folder[] = "/tmp/herald-pg-XXXXXX";
  if (::mkdtemp(folder) == nullptr) return absl::ErrnoToStatus(errno, "mkdtemp");
  std::unique_ptr<PostgresServer> server(new PostgresServer(folder, bin));
  if (::geteuid() == 0) {
    const passwd* user = ::getpwnam("postgres");
    if (user != nullptr && ::chown(folder, user->pw_uid, user->pw_gid) != 0) {
      return absl::ErrnoToStatus(errno, absl::StrCat("chown ", folder));
    }
  }
  absl::StatusOr<pid_t> initdb =
      server->Run("initdb",
                  {"-D", server->folder_ + "/data", "-U", "herald", "--auth=trust", "-E", "UTF8",
                   "--no-locale", "--no-sync"},
                  server->folder_ + "/initdb.log", /*wait=*/true);
  if (!initdb.ok()) return initdb.status();
  if (absl::Status s = server->Start(); !s.ok()) return s;
  return server;
}

PostgresServer::~PostgresServer() {
  (void)Stop();
  std::error_code ignored;
  std::filesystem::remove_all(folder_, ignored);
}

std::string PostgresServer::ConnectionString(const std::string& database) const {
  return absl::StrCat("host=", folder_, " port=", kPort, " user=herald dbname=", database);
}

absl::Status PostgresServer::Start() {
  if (pid_ > 0) return absl::OkStatus();
  absl::StatusOr<pid_t> pid =
      Run("postgres",
          {"-D", folder_ + "/data", "-k", folder_, "-p", kPort, "-c", "listen_addresses=", "-c",
           "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"},
          folder_ + "/server.log", /*wait=*/false);
  if (!pid.ok()) return pid.status();
  pid_ = *pid;
  const std::string conninfo = ConnectionString("postgres");
  const absl::Time deadline = absl::Now() + kStartTimeout;
  while (PQping(conninfo.c_str()) != PQPING_OK) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return absl::InternalError(
          absl::StrCat("postgres exited at start: ", Tail(folder_ + "/server.log")));
    }
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat("postgres did not accept connections within ",
                                                      absl::FormatDuration(kStartTimeout), ": ",
                                                      Tail(folder_ + "/server.log")));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return absl::OkStatus();
}

absl::Status PostgresServer::Stop() {
  if (pid_ <= 0) return absl::OkStatus();
  ::kill(pid_, SIGINT);  // fast shutdown: sessions are cut, the data is kept
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  return absl::OkStatus();
}

absl::StatusOr<std::string> PostgresServer::NewDatabase() {
  const std::string name = absl::StrCat("test_", ++databases_);
  PGconn* connection = PQconnectdb(ConnectionString("postgres").c_str());
  absl::Status s;
  if (PQstatus(connection) != CONNECTION_OK) {
    s = absl::UnavailableError(PQerrorMessage(connection));
  } else {
    PGresult* result = PQexec(connection, absl::StrCat("CREATE DATABASE ", name).c_str());
    if (PQresultStatus(result) != PGRES_COMMAND_OK) {
      s = absl::InternalError(PQresultErrorMessage(result));
    }
    PQclear(result);
  }
  PQfinish(connection);
  if (!s.ok()) return s;
  return ConnectionString(name);
}

absl::StatusOr<PostgresServer*> SharedPostgresServer() {
  // Destroyed at exit, which stops the server; a crash is covered by PR_SET_PDEATHSIG.
  static absl::StatusOr<std::unique_ptr<PostgresServer>> server = PostgresServer::Create();
  if (!server.ok()) return server.status();
  return server->get();
}

absl::StatusOr<std::shared_ptr<base::PostgresDatabase>> ConnectNewDatabase(int pool_size) {
  absl::StatusOr<PostgresServer*> server = SharedPostgresServer();
  if (!server.ok()) return server.status();
  absl::StatusOr<std::string> conninfo = (*server)->NewDatabase();
  if (!conninfo.ok()) return conninfo.status();
  absl::StatusOr<std::unique_ptr<base::PostgresDatabase>> db = base::PostgresDatabase::Connect(
      {.conninfo = *conninfo, .pool_size = pool_size, .what = "test"});
  if (!db.ok()) return db.status();
  return std::shared_ptr<base::PostgresDatabase>(*std::move(db));
}

}  // namespace herald::testing
