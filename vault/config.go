package vault

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"github.com/prose-store/prose/canon"
)

// FormatVersion is the vault format this build writes and understands.
// A prose.yaml with a larger format is refused, never misread. Format 2
// adds node writes through a registered view (the wiki's pages): a vault
// is raised to it by its first such write, so an older prose refuses it.
const FormatVersion = 2

// ConfigFile is the vault settings file at the vault root.
const ConfigFile = "prose.yaml"

// Config is the content of prose.yaml.
type Config struct {
	Format   int      `yaml:"format"`
	Hash     string   `yaml:"hash"`
	Branch   string   `yaml:"branch"`
	Identity Identity `yaml:"identity,omitempty"`
	// Model is the default model for the wiki pipeline (provider:name).
	Model string `yaml:"model,omitempty"`
	// Models maps a contract's ### Runtime model hint (sonnet) to the
	// PROVIDER:NAME a model render uses (docs/runtime.md §Model renders).
	Models map[string]string `yaml:"models,omitempty"`
	// Jobs is how many sources an ingest (pages an enrich) works at once with a provider
	// (--jobs overrides it); 0 means the default.
	Jobs int `yaml:"jobs,omitempty"`
	// Prices are what a model's tokens cost, by model spec
	// (provider:name), so an ingest can say what it cost.
	Prices map[string]Price `yaml:"prices,omitempty"`
}

// Price is a model's price per million tokens, in the user's currency.
type Price struct {
	Input       float64 `yaml:"input"`
	CachedInput float64 `yaml:"cached_input,omitempty"`
	Output      float64 `yaml:"output"`
}

// Identity is the author and committer of commits prose writes.
type Identity struct {
	Name  string `yaml:"name,omitempty"`
	Email string `yaml:"email,omitempty"`
}

// Algorithm returns the configured hash algorithm.
func (c *Config) Algorithm() canon.Algorithm {
	a, err := canon.ParseAlgorithm(c.Hash)
	if err != nil {
		return canon.BLAKE3
	}
	return a
}

func defaultConfig() *Config {
	return &Config{Format: FormatVersion, Hash: string(canon.BLAKE3), Branch: "main"}
}

func (c *Config) encode() []byte {
	var b bytes.Buffer
	b.WriteString("# prose vault settings; see docs/vault-format.md\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	_ = enc.Encode(c)
	return b.Bytes()
}

func loadConfig(root string) (*Config, error) {
	path := filepath.Join(root, ConfigFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return parseConfig(path, data)
}

func parseConfig(path string, data []byte) (*Config, error) {
	c := &Config{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil {
		return nil, fmt.Errorf("%s is not valid vault settings: %v (fix the file or restore it with git checkout -- %s)", path, err, ConfigFile)
	}
	if c.Format == 0 {
		return nil, fmt.Errorf("%s has no format version; add \"format: %d\"", path, FormatVersion)
	}
	if c.Format > FormatVersion {
		return nil, fmt.Errorf("%s has format %d but this prose understands format %d at most; upgrade prose", path, c.Format, FormatVersion)
	}
	if c.Hash == "" {
		c.Hash = string(canon.BLAKE3)
	}
	if _, err := canon.ParseAlgorithm(c.Hash); err != nil {
		return nil, fmt.Errorf("%s: hash %q: %v", path, c.Hash, err)
	}
	if c.Branch == "" {
		c.Branch = "main"
	}
	return c, nil
}
