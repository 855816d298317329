package awskms

import (
	"context"
	"crypto/x509"
	"errors"
	"io"

	"github.com/pact-cli/pact/signer/keyplugin"
)

// ServePlugin is the pact-awskms program: the key plugin (package
// keyplugin) for awskms: keys, answering on w the requests read from r
// until r ends.
func ServePlugin(r io.Reader, w io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), keyplugin.OpTimeout)
	c, err := New(ctx)
	cancel()
	if err != nil {
		var e *keyplugin.Error
		if !errors.As(pluginError(err), &e) {
			e = &keyplugin.Error{Kind: keyplugin.KindOther, Message: err.Error()}
		}
		return keyplugin.Serve(r, w, "awskms", nil, e)
	}
	return keyplugin.Serve(r, w, "awskms", backend{c}, nil)
}

type backend struct{ c *Client }

func pluginError(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return &keyplugin.Error{Kind: e.Kind, Message: e.Message, Op: e.Op}
	}
	return err
}

func response(k *KeyInfo, err error) (keyplugin.Response, error) {
	if err != nil {
		return keyplugin.Response{}, pluginError(err)
	}
	spki, err := x509.MarshalPKIXPublicKey(k.Public)
	if err != nil {
		return keyplugin.Response{}, err
	}
	return keyplugin.Response{ARN: k.ARN, SPKI: spki, Alg: k.Alg}, nil
}

func (b backend) PublicKey(ctx context.Context, key string) (keyplugin.Response, error) {
	return response(b.c.PublicKey(ctx, key))
}

func (b backend) Create(ctx context.Context, alg, alias, description string) (keyplugin.Response, error) {
	return response(b.c.Create(ctx, alg, description, alias))
}

func (b backend) Sign(ctx context.Context, key, alg string, digest []byte) ([]byte, error) {
	sig, err := b.c.Sign(ctx, key, alg, digest)
	if err != nil {
		return nil, pluginError(err)
	}
	return sig, nil
}

func (b backend) Encrypt(ctx context.Context, key string, pt []byte, encCtx map[string]string) ([]byte, error) {
	ct, err := b.c.Encrypt(ctx, key, pt, encCtx)
	if err != nil {
		return nil, pluginError(err)
	}
	return ct, nil
}

func (b backend) Decrypt(ctx context.Context, key string, ct []byte, encCtx map[string]string) ([]byte, error) {
	pt, err := b.c.Decrypt(ctx, key, ct, encCtx)
	if err != nil {
		return nil, pluginError(err)
	}
	return pt, nil
}
