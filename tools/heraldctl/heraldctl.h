// tools/heraldctl/heraldctl.h
//
// The whole of heraldctl but the process around it: arguments and environment in, text on
// two streams and an exit status out, with a file descriptor to read secrets from (stdin, for
// `skills credentials`). main() adds only the signal handling; tests run it in process
// against a fake server.
//
//   int status = RunHeraldctl({"--json", "status"}, ReadEnvironment(), STDIN_FILENO, std::cout,
//                             std::cerr, &interrupt);
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "tools/heraldctl/global_flags.h"
#include "tools/heraldctl/interrupt.h"

namespace herald::heraldctl {

// `args` is argv without the program name. `input` stays the caller's. `interrupt` may be
// null.
int RunHeraldctl(const std::vector<std::string>& args, const Environment& environment, int input,
                 std::ostream& out, std::ostream& err, Interrupt* interrupt);

}  // namespace herald::heraldctl
