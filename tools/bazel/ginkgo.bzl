"""Bazel test targets over a Ginkgo suite's go_test, whose binary they run.

ginkgo_focused_tests: one target per Ginkgo spec (or group of specs), so
that `bazel test` reports them one by one; each runs the binary with
-ginkgo.focus. ginkgo_shares: the whole suite in two targets that run side
by side. The go_test itself still runs the whole suite."""

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

def ginkgo_shares(name, test, first, **kwargs):
    """Declares name_1_test and name_2_test: test's suite in two shares.

    The first share runs the specs the label filter first selects, the
    second all others, so that the two run each spec once. Run side by side
    (one `bazel test` of both), each on a local cluster of its own
    (run-share.sh); the filter must not contain a single quote.
    """
    if "'" in first:
        fail("ginkgo_shares: filter %r of %s contains a single quote" % (first, name))
    for index, filter in [(1, first), (2, "!(%s)" % first)]:
        native.sh_test(
            name = "%s_%d_test" % (name, index),
            srcs = ["//tools/bazel:run-share.sh"],
            args = [
                "$(rootpath %s)" % test,
                str(index),
                # Quoted: Bazel splits test args as a shell would.
                "'%s'" % filter,
            ],
            data = [test],
            **kwargs
        )
