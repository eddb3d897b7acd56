package main

import (
	"debug/elf"
	"debug/macho"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeBinary is the header of an executable for platform, as the release
// reads it (ELF for linux, Mach-O for darwin), and nothing else: the
// release command's tests need the plugin's platforms, not a cross build.
func fakeBinary(t *testing.T, platform string) []byte {
	t.Helper()
	var b []byte
	switch platform {
	case "linux/amd64", "linux/arm64":
		machine := elf.EM_X86_64
		if platform == "linux/arm64" {
			machine = elf.EM_AARCH64
		}
		h := elf.Header64{Type: uint16(elf.ET_EXEC), Machine: uint16(machine), Version: uint32(elf.EV_CURRENT), Ehsize: 64, Shentsize: 64}
		copy(h.Ident[:], elf.ELFMAG)
		h.Ident[elf.EI_CLASS], h.Ident[elf.EI_DATA], h.Ident[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
		b, _ = binary.Append(nil, binary.LittleEndian, h)
	case "darwin/amd64", "darwin/arm64":
		cpu := macho.CpuAmd64
		if platform == "darwin/arm64" {
			cpu = macho.CpuArm64
		}
		b, _ = binary.Append(nil, binary.LittleEndian, macho.FileHeader{Magic: macho.Magic64, Cpu: cpu, Type: macho.TypeExec})
		b = append(b, 0, 0, 0, 0) // a 64-bit header's reserved word
	default:
		t.Fatalf("no fake binary for %s", platform)
	}
	return append(b, []byte(platform)...)
}

// fakePlugins writes a fake plugin binary for each platform into dir.
func fakePlugins(t *testing.T, dir string, platforms ...string) []string {
	t.Helper()
	var paths []string
	for _, platform := range platforms {
		path := filepath.Join(dir, "kubectl-jobset_"+strings.ReplaceAll(platform, "/", "_"))
		if err := os.WriteFile(path, fakeBinary(t, platform), 0o755); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	return paths
}

// TestPluginBinaries: the release takes one plugin binary for each of
// linux and darwin, amd64 and arm64, by the platform its header names,
// and refuses a set that misses one, holds one twice or holds what is no
// such binary, naming each.
func TestPluginBinaries(t *testing.T) {
	dir := t.TempDir()
	all := fakePlugins(t, dir, pluginPlatforms...)
	got, err := pluginBinaries(all)
	if err != nil {
		t.Fatal(err)
	}
	for i, platform := range pluginPlatforms {
		if got[platform] != all[i] {
			t.Errorf("%s: %q, want %q", platform, got[platform], all[i])
		}
	}

	notABinary := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notABinary, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	twice := fakePlugins(t, t.TempDir(), "linux/arm64")[0]
	_, err = pluginBinaries([]string{all[0], all[1], all[3], twice, notABinary})
	for _, want := range []string{
		"no -plugin binary for linux/amd64",
		"are both built for linux/arm64",
		"notes.txt is neither an ELF nor a Mach-O binary",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one saying %q", err, want)
		}
	}
}
