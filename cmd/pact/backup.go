package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/store"
	"github.com/pact-cli/pact/store/postgres"
)

// backupJSON is the `pact backup --json` and `pact restore --json` shape
// (docs/json.md).
type backupJSON struct {
	Profile string `json:"profile"`
	File    string `json:"file"`
	Bytes   int64  `json:"bytes,omitempty"`
	store.Contents
	Aside string `json:"aside,omitempty"`
	// NotIncluded says where what the file does not hold is: the secrets
	// (keyring) and the profile's settings.
	NotIncluded []string `json:"notIncluded"`
}

// restoreJSON is the `pact restore --json` shape: backupJSON and what the
// file held that was not restored (docs/json.md).
type restoreJSON struct {
	backupJSON
	LeftOut []string `json:"leftOut"`
	// NotRechecked is how many receipts came back without the verdict the
	// file gave them ("restored, not re-checked"), and Recheck the command
	// that checks them against the Brands' published keys (absent when 0).
	NotRechecked int    `json:"notRechecked"`
	Recheck      string `json:"recheck,omitempty"`
}

func newBackupCmd(a *app) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "backup FILE",
		Short: "Write this profile's history to one file (safe while pact runs)",
		Long: `Write a consistent copy of this profile's database (conversations, turns,
the receipt archive, grants' metadata, the card cache and pins) to FILE,
one SQLite file, while other pact processes may go on using it. FILE is
written beside its final name and renamed into place (mode 0600); an
existing FILE is refused unless --force.

Secrets are not in it: signing keys, the pairwise-sub secret and delegation
tokens stay in the keyring, and the profile's settings in its config folder.
Keep those with the keyring's own backup (for the file keyring, a copy of
its file kept as privately as the keys). ` + "`pact restore FILE`" + ` puts the history back.`,
		Args: exactArgs(1, "backup takes the file to write"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := store.CheckProfileName(a.profile); err != nil {
				return usageError{err}
			}
			d, file := a.dirs(), args[0]
			if err := a.sqliteOnly("backup"); err != nil {
				return err
			}
			if _, err := os.Stat(d.ProfileDataDir(a.profile)); errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("profile %q has no history to back up (no %s)", a.profile, d.ProfileDataDir(a.profile))
			}
			if err := d.CheckBackupPath(a.profile, file); err != nil {
				return usageError{err}
			}
			db := store.ProfileDB(d, a.profile)
			n, err := db.Backup(cmd.Context(), file, force)
			if errors.Is(err, store.ErrExists) || errors.Is(err, store.ErrNotRegular) {
				return usageError{err}
			}
			if err != nil {
				return err
			}
			out := backupJSON{Profile: a.profile, File: absPath(file), Contents: n, NotIncluded: a.notInBackup()}
			if fi, err := os.Stat(file); err == nil {
				out.Bytes = fi.Size()
			}
			if a.json {
				return a.printJSON(out)
			}
			st := a.io.ErrStyles()
			a.io.Eprintf("%s backed up profile %q to %s: %s\n", st.Success.Render("✓"), a.profile, safe(out.File), contentsWords(n))
			for _, s := range out.NotIncluded {
				a.io.Eprintf("%s not in it: %s\n", st.Warning.Render("!"), safe(s))
			}
			a.io.Eprintf("  restore it with: %s\n", profile.CommandWords(a.profile, "restore", out.File))
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "replace FILE when it exists")
	return cmd
}

func newRestoreCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "restore FILE",
		Short: "Put back this profile's history from a file `pact backup` wrote",
		Long: `Check FILE (an SQLite database that passes its integrity check, with a
schema version this pact can read, whose tables are pact's own), build a new
database from its rows, keep the profile's current database aside as
pact.db.before-restore-TIME (with its -wal), and put the new one in its
place, migrated to this pact's schema. Conversations, receipts, grants'
metadata and pins come back as they were in FILE (the card cache is fetched
again); secrets come from the keyring as before. Only pact's own tables are
read: triggers, views and other tables in FILE stay behind, and so do grants
whose endpoints are not under their Provider's registration (as at login)
and malformed pins, and a receipt whose jwks_uri is not is kept as rejected
whatever FILE says; the restore names each. Whatever FILE says of the other
receipts, they come back "restored, not re-checked", not verified, until
` + "`pact receipts verify`" + ` checks them against the Brands' published keys
(--offline does not: the keys kept beside them came with FILE). It is refused while another pact
process (an open chat, say) has the profile's database open. Nothing changes
when FILE is refused.`,
		Args: exactArgs(1, "restore takes the backup file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := store.CheckProfileName(a.profile); err != nil {
				return usageError{err}
			}
			file := args[0]
			if err := a.sqliteOnly("restore"); err != nil {
				return err
			}
			if _, err := os.Stat(file); err != nil {
				return usageError{fmt.Errorf("no backup at %s: %w", file, err)}
			}
			// A grant's endpoints are checked against the Provider
			// registrations of the profile's settings (none yet: when used).
			var cfg *profile.Config
			if p, err := a.prof(); err == nil {
				cfg, _ = p.Load()
			}
			res, err := store.Restore(cmd.Context(), a.dirs(), a.profile, file, conversation.RestoreChecks(cfg))
			if err != nil {
				return err
			}
			out := restoreJSON{backupJSON: backupJSON{Profile: a.profile, File: absPath(file), Contents: res.Contents, Aside: res.Aside, NotIncluded: a.notInBackup()},
				LeftOut: append([]string{}, res.LeftOut...), NotRechecked: res.NotRechecked}
			if res.NotRechecked > 0 {
				out.Recheck = profile.CommandWords(a.profile, "receipts", "verify")
			}
			if a.json {
				return a.printJSON(out)
			}
			st := a.io.ErrStyles()
			a.io.Eprintf("%s restored profile %q from %s: %s\n", st.Success.Render("✓"), a.profile, safe(out.File), contentsWords(res.Contents))
			if res.Aside != "" {
				a.io.Eprintf("  the database it replaced is kept as %s\n", safe(res.Aside))
			}
			for _, l := range res.LeftOut {
				a.io.Eprintf("%s left out: %s\n", st.Warning.Render("!"), safe(l))
			}
			if n := res.NotRechecked; n > 0 {
				// A backup's verdicts are not pact's (issue 31): one
				// command gives the User's own receipts theirs back.
				it, are := "them", "are"
				if n == 1 {
					it, are = "it", "is"
				}
				a.io.Eprintf("%s %s %s marked \"restored, not re-checked\" until pact checks %s again: pact does not take a backup's word that a receipt verified. Check %s against the Brands' published keys with:\n  %s\n",
					st.Warning.Render("!"), plural(n, "receipt", "receipts"), are, it, it, out.Recheck)
			}
			return nil
		},
	}
}

// notInBackup says where what a backup does not hold lives.
func (a *app) notInBackup() []string {
	where := "the keyring"
	if sec, err := a.secrets(); err == nil {
		where = sec.Where()
	}
	return []string{
		"secrets (signing keys, the pairwise-sub secret, delegation tokens): they stay in " + where + "; keep them with that keyring's own backup",
		"the profile's settings (identity, registered Providers): " + a.dirs().ProfileConfigDir(a.profile),
	}
}

func contentsWords(n store.Contents) string {
	return fmt.Sprintf("%s (%s), %s, %s, %s",
		plural(n.Conversations, "conversation", "conversations"), plural(n.Turns, "turn", "turns"),
		plural(n.Receipts, "receipt", "receipts"), plural(n.Grants, "grant", "grants"), plural(n.Pins, "pin", "pins"))
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// sqliteOnly refuses `pact backup` and `pact restore` for a profile whose
// state is in PostgreSQL: its database is backed up with pg_dump and
// pg_restore (README), which pact does not run.
func (a *app) sqliteOnly(what string) error {
	if a.set.database == "" {
		return nil
	}
	return usageError{fmt.Errorf("profile %q keeps its state in the PostgreSQL database %s, not in a file pact can %s: use pg_dump and pg_restore (see the README's \"Backups\"); the keyring and the profile's settings are not in the database",
		a.profile, postgres.Redact(a.set.database), what)}
}
