"""ginkgo_focused_tests: one Bazel test target per Ginkgo spec (or group of
specs) of a go_test, so that `bazel test` reports them one by one. Each
target runs the go_test's binary with -ginkgo.focus; the go_test itself
still runs the whole suite."""

def ginkgo_focused_tests(test, focuses, **kwargs):
    """Declares an sh_test per entry of focuses (target name -> focus regexp).

    A focus must not contain a single quote."""
    for name, focus in focuses.items():
        if "'" in focus:
            fail("ginkgo_focused_tests: focus %r of %s contains a single quote" % (focus, name))
        native.sh_test(
            name = name,
            srcs = ["//tools/bazel:run-focused.sh"],
            args = [
                "$(rootpath %s)" % test,
                # Quoted: Bazel splits test args as a shell would, which made
                # a focus of several words the first word alone.
                "'-ginkgo.focus=%s'" % focus,
                # A renamed It must not leave a green target that ran nothing.
                "-ginkgo.fail-on-empty",
            ],
            data = [test],
            **kwargs
        )
