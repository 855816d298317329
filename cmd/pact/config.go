package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/store"
	"github.com/pact-cli/pact/store/backend"
)

// fileConfig is the optional config file, config.json in the config folder
// ($PACT_HOME/config/config.json, else $XDG_CONFIG_HOME/pact/config.json).
// Every key is optional; a key that is absent leaves the default. Unknown
// keys are an error, so a typo ("no-browser") does not go unnoticed.
//
// Precedence, for every setting: command-line flag, then environment
// variable, then this file, then the built-in default.
type fileConfig struct {
	Profile   *string `json:"profile"`    // --profile, PACT_PROFILE; default "default"
	Keyring   *string `json:"keyring"`    // PACT_KEYRING: "os" (default) or "file"
	Browser   *string `json:"browser"`    // PACT_BROWSER, BROWSER; default the system browser
	Debug     *bool   `json:"debug"`      // --debug, PACT_DEBUG; default false
	NoBrowser *bool   `json:"no_browser"` // --no-browser, PACT_NO_BROWSER; default false
	NoColor   *bool   `json:"no_color"`   // NO_COLOR; default false (colour on terminals)
	Database  *string `json:"database"`   // --database, PACT_DATABASE_URL; default the profile's SQLite file
}

// configPath is where the config file is read from.
func configPath(d store.Dirs) string { return filepath.Join(d.Config, "config.json") }

// loadConfig reads the config file at path. A missing file is an empty
// config; a file that is not a JSON object of known keys is an error naming
// the file.
func loadConfig(path string) (fileConfig, error) {
	var c fileConfig
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("reading the config file: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("config file %s: %v (known keys: %s)", path, err, configKeys())
	}
	return c, nil
}

// configKeys lists the keys of fileConfig, for error messages and docs.
func configKeys() string {
	return "browser, database, debug, keyring, no_browser, no_color, profile"
}

// settings are the resolved values of the settings a config file can hold.
type settings struct {
	keyring string // "" (os), "os" or "file"
	// keyringEnv is PACT_KEYRING, lower-cased ("" = not set).
	keyringEnv string
	// database is the PostgreSQL database that holds the profile's state
	// ("" = the profile's SQLite file).
	database string
}

// keyringValue checks a keyring setting ("os" or "file", any case); what
// names it in the usage error.
func keyringValue(v, what string) (string, error) {
	switch l := strings.ToLower(strings.TrimSpace(v)); l {
	case "os", "file":
		return l, nil
	}
	return "", usageError{fmt.Errorf(`%s: use "os" or "file"`, what)}
}

// resolve applies the precedence flag > environment > config file >
// default to the global settings. It runs before every command (root's
// PersistentPreRunE) and may run more than once (shell completion).
func (a *app) resolve(cmd *cobra.Command) error {
	cfg, err := loadConfig(configPath(a.dirs()))
	if err != nil {
		return usageError{err}
	}
	flags := cmd.Flags()
	changed := func(name string) bool {
		f := flags.Lookup(name)
		return f != nil && f.Changed
	}
	if !changed("profile") {
		a.profile = firstString(os.Getenv("PACT_PROFILE"), cfg.Profile, "default")
	}
	if !changed("debug") {
		a.debug, err = firstBool("PACT_DEBUG", cfg.Debug)
		if err != nil {
			return err
		}
	}
	if !changed("no-browser") {
		a.noBrows, err = firstBool("PACT_NO_BROWSER", cfg.NoBrowser)
		if err != nil {
			return err
		}
	}
	// PACT_KEYRING and the config file's "keyring" are checked whatever
	// the profile records: a typo is a usage error, not a conflict.
	// Case does not matter ("File" is "file").
	if env := os.Getenv("PACT_KEYRING"); env != "" {
		if a.set.keyringEnv, err = keyringValue(env, fmt.Sprintf("PACT_KEYRING=%q", env)); err != nil {
			return err
		}
	}
	var cfgKeyring string
	if cfg.Keyring != nil && *cfg.Keyring != "" {
		if cfgKeyring, err = keyringValue(*cfg.Keyring, fmt.Sprintf("the config file's \"keyring\" %q", *cfg.Keyring)); err != nil {
			return err
		}
	}
	a.set.keyring = firstString(a.set.keyringEnv, &cfgKeyring, "")
	// The database: --database, PACT_DATABASE_URL, the config file's
	// "database"; a value that is no postgres:// URL is a usage error
	// naming where it came from (without its password).
	where := "--database"
	a.set.database = a.databaseFlag
	if !changed("database") {
		a.set.database, where = os.Getenv("PACT_DATABASE_URL"), "PACT_DATABASE_URL"
		if a.set.database == "" && cfg.Database != nil {
			a.set.database, where = *cfg.Database, "the config file's \"database\""
		}
	}
	if err := backend.Check(a.set.database); err != nil {
		return usageError{fmt.Errorf("%s: %w", where, err)}
	}
	// The browser and colour are read from the environment by the opener
	// and the TUI; the config file fills them in only when it says nothing.
	if cfg.Browser != nil && *cfg.Browser != "" && os.Getenv("PACT_BROWSER") == "" && os.Getenv("BROWSER") == "" {
		os.Setenv("PACT_BROWSER", *cfg.Browser)
	}
	if cfg.NoColor != nil && *cfg.NoColor {
		if _, set := os.LookupEnv("NO_COLOR"); !set {
			os.Setenv("NO_COLOR", "1")
			a.io.SetColor(false)
		}
	}
	return a.resolveJQ(flags)
}

func firstString(env string, cfg *string, def string) string {
	if env != "" {
		return env
	}
	if cfg != nil && *cfg != "" {
		return *cfg
	}
	return def
}

// firstBool reads a boolean environment variable ("1", "true", "0",
// "false"; empty = unset), then the config value, then false.
func firstBool(env string, cfg *bool) (bool, error) {
	if v := os.Getenv(env); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, usageError{fmt.Errorf("%s=%q: use 1 or 0", env, v)}
		}
		return b, nil
	}
	return cfg != nil && *cfg, nil
}

// completeProfiles offers the profiles that exist (folders under the
// config folder's profiles/), for --profile.
func (a *app) completeProfiles(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	entries, _ := os.ReadDir(filepath.Join(a.dirs().Config, "profiles"))
	var out []string
	for _, e := range entries {
		if e.IsDir() && store.CheckProfileName(e.Name()) == nil {
			out = append(out, e.Name())
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
