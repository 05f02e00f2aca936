// The exit statuses scripts rely on, for every gRPC status code.
#include "tools/heraldctl/exit_code.h"

#include "gtest/gtest.h"

namespace herald::heraldctl {
namespace {

TEST(ExitCodeTest, MapsEveryGrpcCodeToItsDocumentedStatus) {
  struct Case {
    grpc::StatusCode code;
    int exit_status;
  };
  for (const Case& c : std::initializer_list<Case>{
           {grpc::StatusCode::OK, 0},
           {grpc::StatusCode::UNAVAILABLE, 3},
           {grpc::StatusCode::DEADLINE_EXCEEDED, 3},
           {grpc::StatusCode::UNAUTHENTICATED, 4},
           {grpc::StatusCode::PERMISSION_DENIED, 4},
           {grpc::StatusCode::NOT_FOUND, 5},
           {grpc::StatusCode::INVALID_ARGUMENT, 6},
           {grpc::StatusCode::FAILED_PRECONDITION, 6},
           {grpc::StatusCode::RESOURCE_EXHAUSTED, 6},
           {grpc::StatusCode::OUT_OF_RANGE, 6},
           {grpc::StatusCode::ALREADY_EXISTS, 6},
           {grpc::StatusCode::INTERNAL, 7},
           {grpc::StatusCode::UNKNOWN, 7},
           {grpc::StatusCode::UNIMPLEMENTED, 7},
           {grpc::StatusCode::DATA_LOSS, 7},
           {grpc::StatusCode::ABORTED, 7},
           {grpc::StatusCode::CANCELLED, 7},
       }) {
    EXPECT_EQ(static_cast<int>(ExitCodeForGrpcStatus(c.code)), c.exit_status)
        << GrpcStatusCodeName(c.code);
  }
}

TEST(ExitCodeTest, NamesCodesAsGrpcSpellsThem) {
  EXPECT_EQ(GrpcStatusCodeName(grpc::StatusCode::PERMISSION_DENIED), "PERMISSION_DENIED");
  EXPECT_EQ(GrpcStatusCodeName(grpc::StatusCode::UNAVAILABLE), "UNAVAILABLE");
  EXPECT_EQ(GrpcStatusCodeName(static_cast<grpc::StatusCode>(42)), "CODE_42");
}

}  // namespace
}  // namespace herald::heraldctl
