"""Re-exports Bazel's native Java rules under the names rules_java provides."""

def java_binary(**attrs):
    native.java_binary(**attrs)

def java_library(**attrs):
    native.java_library(**attrs)

def java_import(**attrs):
    native.java_import(**attrs)

def java_test(**attrs):
    native.java_test(**attrs)

def java_plugin(**attrs):
    native.java_plugin(**attrs)

def java_runtime(**attrs):
    native.java_runtime(**attrs)

def java_toolchain(**attrs):
    native.java_toolchain(**attrs)
