package main

import (
	"debug/elf"
	"debug/macho"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// pluginName is the kubectl plugin's binary: kubectl runs `kubectl jobset`
// as kubectl-jobset from the PATH.
const pluginName = "kubectl-jobset"

// pluginPlatforms are the platforms the plugin is released for, each once.
var pluginPlatforms = []string{"darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64"}

// pluginFile is where a platform's plugin binary goes in the release:
// plugin/kubectl-jobset-<os>-<arch>.
func pluginFile(platform string) string {
	return filepath.Join("plugin", pluginName+"-"+strings.ReplaceAll(platform, "/", "-"))
}

// binaryPlatform reads the os/arch a Go binary was built for from its
// header (ELF for linux, Mach-O for darwin), so that a binary cannot be
// released under another platform's name.
func binaryPlatform(path string) (string, error) {
	if f, err := elf.Open(path); err == nil {
		defer f.Close()
		switch f.Machine {
		case elf.EM_X86_64:
			return "linux/amd64", nil
		case elf.EM_AARCH64:
			return "linux/arm64", nil
		}
		return "", fmt.Errorf("%s: an ELF binary for %s, neither amd64 nor arm64", path, f.Machine)
	}
	if f, err := macho.Open(path); err == nil {
		defer f.Close()
		switch f.Cpu {
		case macho.CpuAmd64:
			return "darwin/amd64", nil
		case macho.CpuArm64:
			return "darwin/arm64", nil
		}
		return "", fmt.Errorf("%s: a Mach-O binary for %s, neither amd64 nor arm64", path, f.Cpu)
	}
	return "", fmt.Errorf("%s is neither an ELF nor a Mach-O binary", path)
}

// pluginBinaries maps each platform of pluginPlatforms to the one binary
// of paths built for it.
func pluginBinaries(paths []string) (map[string]string, error) {
	byPlatform := map[string]string{}
	var errs []error
	for _, p := range paths {
		platform, err := binaryPlatform(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if other, ok := byPlatform[platform]; ok {
			errs = append(errs, fmt.Errorf("%s and %s are both built for %s", other, p, platform))
			continue
		}
		byPlatform[platform] = p
	}
	for _, platform := range pluginPlatforms {
		if _, ok := byPlatform[platform]; !ok {
			errs = append(errs, fmt.Errorf("no -plugin binary for %s (the release has one for each of %s)", platform, strings.Join(pluginPlatforms, ", ")))
		}
	}
	for platform := range byPlatform {
		if !slices.Contains(pluginPlatforms, platform) {
			errs = append(errs, fmt.Errorf("a -plugin binary for %s, which the release does not ship", platform))
		}
	}
	return byPlatform, errors.Join(errs...)
}

// writePlugins copies each platform's plugin binary into out, executable.
func writePlugins(out string, byPlatform map[string]string) error {
	for platform, src := range byPlatform {
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		dst := filepath.Join(out, pluginFile(platform))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o755); err != nil {
			return err
		}
	}
	return nil
}
