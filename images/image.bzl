"""go_image: a FROM-scratch OCI image holding one static Go binary."""

load("@io_bazel_rules_go//go:def.bzl", "go_binary")

def go_image(name, embed, repository, path, tag = None, extra_binaries = {}):
    """Builds <name>.tar, an OCI layout + docker archive of one binary.

    Args:
      name: the image target; the stripped binary is <name>_binary.
      embed: the go_library of the command's main package.
      repository: the repository the image is named for (without a tag).
      path: where the binary lives in the image; also the entrypoint.
      tag: the image's tag; by default the release's, from
        api/version/VERSION, which build-image embeds.
      extra_binaries: further static binaries the image ships, each a
        path in the image (/<base>) mapped to the go_library of its main
        package; built stripped as <name>_<base>_binary.
    """
    binary = name + "_binary"
    extra_flags = ""
    extra_srcs = []
    for extra_path, extra_embed in extra_binaries.items():
        extra = "%s_%s_binary" % (name, extra_path.split("/")[-1])
        go_binary(
            name = extra,
            embed = [extra_embed],
            gc_linkopts = ["-s", "-w"],
            visibility = ["//visibility:public"],
        )
        extra_srcs.append(":" + extra)
        extra_flags += " -file %s=$(location :%s)" % (extra_path, extra)

    # Stripped: symbols and DWARF are no use in a distroless container.
    # Static already: .bazelrc builds everything pure.
    go_binary(
        name = binary,
        embed = [embed],
        gc_linkopts = ["-s", "-w"],
        visibility = ["//visibility:public"],
    )
    cmd = "$(location //images/cmd/build-image) -binary $(location :%s) -path %s -repository %s -out $@%s" % (binary, path, repository, extra_flags)
    if tag:
        cmd += " -tag " + tag
    native.genrule(
        name = name,
        srcs = [":" + binary] + extra_srcs,
        outs = [name + ".tar"],
        tools = ["//images/cmd/build-image"],
        cmd = cmd,
        visibility = ["//visibility:public"],
    )
