"""go_image: a FROM-scratch OCI image of static Go binaries, one per platform."""

load("@io_bazel_rules_go//go:def.bzl", "go_binary")
load(":modinfo.bzl", "MODINFO")

# The architectures a shipped image is built for, besides the host's: each
# is a go_binary with goos/goarch, which rules_go builds in a configuration
# of its own (pure Go, cross-compiled by the same SDK). The host's binary
# (<name>_binary) is the linux/amd64 one: built in the configuration every
# test shares, it costs no second compile of its dependencies.
# build-image reads each binary's architecture from its ELF header, so a
# build on another host fails naming the two binaries of one architecture.
CROSS_ARCHES = ["arm64"]

def _modinfo(embed, arch):
    """The Go build information of embed's command built for linux/arch."""
    package = embed.lstrip("/").split(":")[0]
    if package not in MODINFO or arch not in MODINFO[package]:
        fail("images/modinfo.bzl has no build information of %s for %s: add ./%s to images/cmd/modinfo's packages in tools/codegen/generate.sh and run tools/update-generated.sh" % (package, arch, package))
    return MODINFO[package][arch]

def _binaries(name, embed, cross_arches):
    """Declares name (host) and name_<arch> for each cross arch: stripped.

    Each carries the Go build information of its modules (`go version -m`),
    which rules_go does not write: scanners and the release's SBOMs read it.
    """

    # Stripped: symbols and DWARF are no use in a distroless container.
    # Static already: .bazelrc builds everything pure.
    go_binary(
        name = name,
        embed = [embed],
        gc_linkopts = ["-s", "-w"],
        x_defs = {"runtime.modinfo": _modinfo(embed, "amd64")},
        visibility = ["//visibility:public"],
    )
    labels = [":" + name]
    for arch in cross_arches:
        go_binary(
            name = "%s_%s" % (name, arch),
            embed = [embed],
            gc_linkopts = ["-s", "-w"],
            goarch = arch,
            goos = "linux",
            pure = "on",
            x_defs = {"runtime.modinfo": _modinfo(embed, arch)},
            visibility = ["//visibility:public"],
        )
        labels.append(":%s_%s" % (name, arch))
    return labels

def go_image(name, embed, repository, path, tag = None, extra_binaries = {}, cross_arches = CROSS_ARCHES):
    """Builds <name>.tar, an OCI layout + docker archive of an image index.

    Args:
      name: the image target; the stripped binary is <name>_binary, and
        <name>_binary_<arch> for each of cross_arches.
      embed: the go_library of the command's main package.
      repository: the repository the image is named for (without a tag).
      path: where the binary lives in the image; also the entrypoint.
      tag: the image's tag; by default the release's, from
        api/version/VERSION, which build-image embeds.
      extra_binaries: further static binaries the image ships, each a
        path in the image (/<base>) mapped to the go_library of its main
        package; built stripped as <name>_<base>_binary[_<arch>].
      cross_arches: the architectures besides linux/amd64 (the host's)
        the image is built for; [] for an image of the host's only.
    """
    binaries = _binaries(name + "_binary", embed, cross_arches)
    cmd = "$(location //images/cmd/build-image) -path %s -repository %s -out $@" % (path, repository)
    cmd += "".join([" -binary $(location %s)" % b for b in binaries])
    srcs = list(binaries)
    for extra_path, extra_embed in extra_binaries.items():
        extras = _binaries("%s_%s_binary" % (name, extra_path.split("/")[-1]), extra_embed, cross_arches)
        srcs += extras
        cmd += "".join([" -file %s=$(location %s)" % (extra_path, e) for e in extras])
    if tag:
        cmd += " -tag " + tag
    native.genrule(
        name = name,
        srcs = srcs,
        outs = [name + ".tar"],
        tools = ["//images/cmd/build-image"],
        cmd = cmd,
        visibility = ["//visibility:public"],
    )
