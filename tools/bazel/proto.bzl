"""herald_proto_library: C++ messages and gRPC stubs from .proto files, offline.

Runs the system protoc and grpc_cpp_plugin (Debian's protobuf-compiler and
protobuf-compiler-grpc) instead of fetching rules_proto. Imports resolve against the
workspace root and /usr/include, where Debian keeps the well-known types.

    load("//tools/bazel:proto.bzl", "herald_proto_library")
    herald_proto_library(
        name = "admin_proto",
        srcs = ["admin.proto"],
        deps = [":common_proto"],   # other herald_proto_library targets
    )
"""

def _stem(src):
    return src[:-len(".proto")]

def herald_proto_library(name, srcs, deps = [], grpc = True, visibility = None, testonly = False):
    pkg = native.package_name()
    outs_h = []
    outs_cc = []
    for src in srcs:
        stem = _stem(src)
        outs_h.append(stem + ".pb.h")
        outs_cc.append(stem + ".pb.cc")
        if grpc:
            outs_h.append(stem + ".grpc.pb.h")
            outs_cc.append(stem + ".grpc.pb.cc")

    grpc_flags = ""
    if grpc:
        grpc_flags = ("--grpc_out=$(GENDIR) " +
                      "--plugin=protoc-gen-grpc=$$(command -v grpc_cpp_plugin) ")

    native.genrule(
        name = name + "_generate",
        srcs = srcs + [d + "_sources" for d in deps],
        outs = outs_h + outs_cc,
        cmd = ("protoc -I. -I/usr/include --cpp_out=$(GENDIR) " + grpc_flags +
               " ".join(["%s/%s" % (pkg, s) if pkg else s for s in srcs])),
        testonly = testonly,
    )

    native.filegroup(
        name = name + "_sources",
        srcs = srcs + [d + "_sources" for d in deps],
        visibility = visibility,
        testonly = testonly,
    )

    native.cc_library(
        name = name,
        srcs = outs_cc,
        hdrs = outs_h,
        deps = deps + ["//tools/bazel:grpc"],
        visibility = visibility,
        testonly = testonly,
    )
