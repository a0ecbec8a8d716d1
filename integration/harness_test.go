package integration

// The two ways to run the emulators, docker-compose.yml (with Docker) and integration/emulators.sh (without),
// must offer the tests the same servers on the same ports with the same credentials. This test reads both
// files (no server needed) and names every disagreement.

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

const (
	composePath = "../docker-compose.yml"
	scriptPath  = "emulators.sh"
)

// fileCountKey is the key of the memory handlers' file count at the root
// of a store: memory keeps it to itself (memory.IsBookkeeping tells its
// objects), so the tests that compare a bucket's raw keys name it here.
const fileCountKey = ".cloudmem/files"

// composeFile is the part of docker-compose.yml the harness checks.
type composeFile struct {
	Services map[string]composeService `yaml:"services"`
}

type composeService struct {
	Image       string            `yaml:"image"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Ports       []string          `yaml:"ports"`
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	data, err := os.ReadFile(composePath)
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf("%s: %v", composePath, err)
	}
	if len(c.Services) == 0 {
		t.Fatalf("%s: no services", composePath)
	}
	return c
}

var settingLine = regexp.MustCompile(`^([A-Z][A-Z0-9_]*)=(.*)$`)

// readSettings parses the block between "# BEGIN SETTINGS" and "# END SETTINGS" in emulators.sh: plain
// NAME=value lines, the value optionally in double quotes, no expansions. Anything else there is an error,
// so the block stays readable by machines.
func readSettings(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(scriptPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	settings := map[string]string{}
	in, ended := false, false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "# BEGIN SETTINGS"):
			in = true
			continue
		case strings.HasPrefix(line, "# END SETTINGS"):
			ended = in
			in = false
		}
		if !in || line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := settingLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("%s:%d: not a NAME=value line in the SETTINGS block: %q", scriptPath, n, line)
		}
		value := m[2]
		if len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
			value = value[1 : len(value)-1]
		}
		if strings.ContainsAny(value, "$`'\"\\") || (m[2] == value && strings.ContainsAny(value, " \t")) {
			t.Fatalf("%s:%d: SETTINGS values must be literal (no quotes inside, no expansions): %q", scriptPath, n, line)
		}
		if _, dup := settings[m[1]]; dup {
			t.Fatalf("%s:%d: %s set twice", scriptPath, n, m[1])
		}
		settings[m[1]] = value
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !ended {
		t.Fatalf("%s: no complete '# BEGIN SETTINGS' ... '# END SETTINGS' block", scriptPath)
	}
	return settings
}

// setting returns a required setting, failing the test at once if it is missing.
func setting(t *testing.T, s map[string]string, name string) string {
	t.Helper()
	v, ok := s[name]
	if !ok || v == "" {
		t.Fatalf("%s: SETTINGS has no %s", scriptPath, name)
	}
	return v
}

// portVarPrefix maps a service name to its PORT_ variable stem: fake-gcs -> PORT_FAKE_GCS.
func portVarPrefix(service string) string {
	return "PORT_" + strings.ToUpper(strings.ReplaceAll(service, "-", "_"))
}

// hostPorts parses compose short port syntax ("127.0.0.1:9000:9000", "9000:9000") into host and container ports.
func hostPorts(t *testing.T, service string, ports []string) (host, container []string) {
	t.Helper()
	for _, p := range ports {
		parts := strings.Split(strings.TrimSuffix(p, "/tcp"), ":")
		if len(parts) < 2 {
			t.Errorf("compose service %s: port %q publishes no fixed host port", service, p)
			continue
		}
		host = append(host, parts[len(parts)-2])
		container = append(container, parts[len(parts)-1])
		if len(parts) == 3 && parts[0] != "127.0.0.1" {
			t.Errorf("compose service %s: port %q is published on %s, want 127.0.0.1", service, p, parts[0])
		}
	}
	return host, container
}

// splitImage splits "repo/name:tag" into repo/name and tag.
func splitImage(image string) (name, tag string) {
	i := strings.LastIndex(image, ":")
	if i < 0 || strings.Contains(image[i:], "/") {
		return image, ""
	}
	return image[:i], image[i+1:]
}

// flagValue returns the argument after flag in a command, or "" if the flag is absent.
func flagValue(command []string, flag string) string {
	for i, a := range command {
		if a == flag && i+1 < len(command) {
			return command[i+1]
		}
	}
	return ""
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

// TestComposeMatchesEmulatorsScript checks docker-compose.yml against the SETTINGS block of emulators.sh.
func TestComposeMatchesEmulatorsScript(t *testing.T) {
	compose := readCompose(t)
	settings := readSettings(t)

	// Servers are the services that publish ports; the rest are one-shot init services.
	var composeServers, initServices []string
	for name, svc := range compose.Services {
		if len(svc.Ports) > 0 {
			composeServers = append(composeServers, name)
		} else {
			initServices = append(initServices, name)
		}
	}
	scriptServers := strings.Fields(setting(t, settings, "SERVERS"))
	if got, want := sorted(composeServers), sorted(scriptServers); !slices.Equal(got, want) {
		t.Errorf("servers: docker-compose.yml has %v, emulators.sh SERVERS has %v", got, want)
	}

	// Host ports: compose's published ports of each server against the script's PORT_<SERVER>[_*] variables.
	claimed := map[string]bool{}
	for _, name := range scriptServers {
		svc, ok := compose.Services[name]
		if !ok {
			continue // reported above
		}
		prefix := portVarPrefix(name)
		var want []string
		for v, port := range settings {
			if v == prefix || strings.HasPrefix(v, prefix+"_") {
				want = append(want, port)
				claimed[v] = true
			}
		}
		host, container := hostPorts(t, name, svc.Ports)
		if !slices.Equal(sorted(host), sorted(want)) {
			t.Errorf("%s host ports: docker-compose.yml publishes %v, emulators.sh has %v (%s*)", name, sorted(host), sorted(want), prefix)
		}
		if !slices.Equal(host, container) {
			t.Errorf("%s: docker-compose.yml maps host ports %v to different container ports %v", name, host, container)
		}
		// The server must be told to listen on each of those ports: every port appears in its command,
		// alone ("6379") or as an address (":9000").
		for _, port := range container {
			found := false
			for _, arg := range svc.Command {
				if arg == port || strings.HasSuffix(arg, ":"+port) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: docker-compose.yml publishes port %s but its command %q does not mention it", name, port, svc.Command)
			}
		}
	}
	for v := range settings {
		if strings.HasPrefix(v, "PORT_") && !claimed[v] {
			t.Errorf("emulators.sh: %s belongs to no server in SERVERS", v)
		}
	}

	// MinIO credentials: the server and every service that talks to it.
	user, password := setting(t, settings, "MINIO_ROOT_USER"), setting(t, settings, "MINIO_ROOT_PASSWORD")
	if minio, ok := compose.Services["minio"]; ok {
		if got := minio.Environment["MINIO_ROOT_USER"]; got != user {
			t.Errorf("minio MINIO_ROOT_USER: docker-compose.yml %q, emulators.sh %q", got, user)
		}
		if got := minio.Environment["MINIO_ROOT_PASSWORD"]; got != password {
			t.Errorf("minio MINIO_ROOT_PASSWORD: docker-compose.yml %q, emulators.sh %q", got, password)
		}
	}

	// The init services: each names the bucket, and whatever credentials it carries must match.
	bucket := setting(t, settings, "BUCKET")
	if len(initServices) == 0 {
		t.Errorf("docker-compose.yml: no init service creates the %s bucket", bucket)
	}
	checks := map[string]string{
		"BUCKET":                bucket,
		"MINIO_ROOT_USER":       user,
		"MINIO_ROOT_PASSWORD":   password,
		"S3_REGION":             setting(t, settings, "S3_REGION"),
		"AZURE_STORAGE_ACCOUNT": setting(t, settings, "AZURE_ACCOUNT"),
		"AZURE_STORAGE_KEY":     setting(t, settings, "AZURE_KEY"),
	}
	for _, name := range sorted(initServices) {
		env := compose.Services[name].Environment
		if _, ok := env["BUCKET"]; !ok {
			t.Errorf("init service %s: no BUCKET in its environment", name)
		}
		for _, v := range slices.Sorted(maps.Keys(checks)) {
			if got, ok := env[v]; ok && got != checks[v] {
				t.Errorf("init service %s %s: docker-compose.yml %q, emulators.sh %q", name, v, got, checks[v])
			}
		}
	}

	// Versions.
	images := []struct{ service, repo, setting string }{
		{"fake-gcs", "fsouza/fake-gcs-server", "FAKE_GCS_VERSION"},
		{"azurite", "mcr.microsoft.com/azure-storage/azurite", "AZURITE_VERSION"},
	}
	for _, im := range images {
		svc, ok := compose.Services[im.service]
		if !ok {
			continue
		}
		repo, tag := splitImage(svc.Image)
		if repo != im.repo {
			t.Errorf("%s image: docker-compose.yml uses %q, want %q", im.service, repo, im.repo)
		}
		if want := setting(t, settings, im.setting); tag != want {
			t.Errorf("%s version: docker-compose.yml image tag %q, emulators.sh %s %q", im.service, tag, im.setting, want)
		}
	}

	// Flags without which the tests fail against that server.
	if svc, ok := compose.Services["fake-gcs"]; ok {
		want := setting(t, settings, "HOST") + ":" + setting(t, settings, "PORT_FAKE_GCS")
		if got := flagValue(svc.Command, "-public-host"); got != want {
			t.Errorf("fake-gcs -public-host: docker-compose.yml %q, want %q (the address clients use)", got, want)
		}
		if got := flagValue(svc.Command, "-scheme"); got != "http" {
			t.Errorf("fake-gcs -scheme: docker-compose.yml %q, want %q", got, "http")
		}
	}
	if svc, ok := compose.Services["azurite"]; ok && !slices.Contains(svc.Command, "--skipApiVersionCheck") {
		t.Errorf("azurite: docker-compose.yml command lacks --skipApiVersionCheck (the Go SDK needs it)")
	}
}

// TestEmulatorsEnv runs `emulators.sh env` (which starts nothing) and checks the variables the tests read,
// built from the same SETTINGS.
func TestEmulatorsEnv(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash:", err)
	}
	s := readSettings(t)
	host := setting(t, s, "HOST")
	want := map[string]string{
		"CLOUDMEM_TEST_S3_ENDPOINT": "http://" + host + ":" + setting(t, s, "PORT_MINIO"),
		"AWS_ACCESS_KEY_ID":         setting(t, s, "MINIO_ROOT_USER"),
		"AWS_SECRET_ACCESS_KEY":     setting(t, s, "MINIO_ROOT_PASSWORD"),
		"AWS_REGION":                setting(t, s, "S3_REGION"),
		"STORAGE_EMULATOR_HOST":     host + ":" + setting(t, s, "PORT_FAKE_GCS"),
		"CLOUDMEM_TEST_AZURE_CONNECTION_STRING": fmt.Sprintf(
			"DefaultEndpointsProtocol=http;AccountName=%[1]s;AccountKey=%[2]s;BlobEndpoint=http://%[3]s:%[4]s/%[1]s;",
			setting(t, s, "AZURE_ACCOUNT"), setting(t, s, "AZURE_KEY"), host, setting(t, s, "PORT_AZURITE")),
		"CLOUDMEM_TEST_REDIS_ADDR": host + ":" + setting(t, s, "PORT_REDIS"),
		"CLOUDMEM_TEST_BUCKET":     setting(t, s, "BUCKET"),
	}

	cmd := exec.Command(bash, filepath.Join(".", scriptPath), "env")
	cmd.Env = append(os.Environ(), "CLOUDMEM_EMULATORS_DIR="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("emulators.sh env: %v", err)
	}
	got := map[string]string{}
	exportLine := regexp.MustCompile(`^export ([A-Z0-9_]+)='([^']*)'$`)
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		m := exportLine.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("emulators.sh env: unexpected line %q", line)
			continue
		}
		got[m[1]] = m[2]
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[name]; !ok {
			t.Errorf("emulators.sh env: %s missing", name)
		} else if g != want[name] {
			t.Errorf("emulators.sh env: %s=%q, want %q", name, g, want[name])
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("emulators.sh env: unexpected variable %s (add it to this test)", name)
		}
	}
}
