package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// CachedCard is a kept Agent Card response (cards are public documents).
type CachedCard struct {
	URL          string // the card URL asked for
	FinalURL     string // after redirects
	Body         []byte
	Expires      time.Time // fresh until then
	ETag         string    // validators for revalidation (RFC 9110 §8.8)
	LastModified string
	FetchedAt    time.Time
	// Signature is the card signature check done when it was fetched
	// (JSON, kept by the discovery package).
	Signature []byte
}

// Card returns the kept card for url.
func (db *userDB) Card(ctx context.Context, url string) (CachedCard, bool, error) {
	c, err := db.conn(ctx)
	if err != nil {
		return CachedCard{}, false, err
	}
	var cc CachedCard
	var exp, fetched int64
	var sig string
	err = c.QueryRowContext(ctx, `SELECT url, final_url, body, expires_ns, etag, last_modified, fetched_ns, signature FROM cards WHERE user_id = ? AND url = ?`, db.user, url).
		Scan(&cc.URL, &cc.FinalURL, &cc.Body, &exp, &cc.ETag, &cc.LastModified, &fetched, &sig)
	if errors.Is(err, sql.ErrNoRows) {
		return CachedCard{}, false, nil
	}
	if err != nil {
		return CachedCard{}, false, err
	}
	cc.Expires, cc.FetchedAt = time.Unix(0, exp), time.Unix(0, fetched)
	if sig != "" {
		cc.Signature = []byte(sig)
	}
	return cc, true, nil
}

// PutCard keeps cc, replacing the card kept for cc.URL.
func (db *userDB) PutCard(ctx context.Context, cc CachedCard) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO cards (user_id, url, final_url, body, expires_ns, etag, last_modified, fetched_ns, signature) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (user_id, url) DO UPDATE SET final_url = excluded.final_url, body = excluded.body, expires_ns = excluded.expires_ns,
				etag = excluded.etag, last_modified = excluded.last_modified, fetched_ns = excluded.fetched_ns, signature = excluded.signature`,
			db.user, cc.URL, cc.FinalURL, cc.Body, cc.Expires.UnixNano(), cc.ETag, cc.LastModified, cc.FetchedAt.UnixNano(), string(cc.Signature))
		return err
	})
}

// ForgetCard drops the kept card for url (absent is no error).
func (db *userDB) ForgetCard(ctx context.Context, url string) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM cards WHERE user_id = ? AND url = ?`, db.user, url)
		return err
	})
}
