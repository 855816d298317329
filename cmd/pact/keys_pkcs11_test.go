//go:build pkcs11

package main

import (
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	p11 "github.com/miekg/pkcs11"

	"github.com/pact-cli/pact/signer"
)

// hsmTool is the pact-hsm command of the PKCS#11 story, run as its own
// process (TestMain) so that SoftHSM2 reads the script's SOFTHSM2_CONF:
//
//	pact-hsm delete LABEL            destroys the key pair labelled LABEL on the token
//	pact-hsm replace-private LABEL   replaces the private key labelled LABEL by another
//	                                 key's (same label and id), leaving the public object:
//	                                 the token shows the published key, signs with another
//
// The token is the one softhsm made: PACT_PKCS11_MODULE, SOFTHSM2_CONF,
// HSM_PIN and HSM_TOKEN from the script's environment.
func hsmTool() {
	if err := hsmRun(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "pact-hsm:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func hsmRun(args []string) error {
	if len(args) != 2 {
		return errors.New("usage: pact-hsm delete|replace-private LABEL")
	}
	ctx := p11.New(os.Getenv("PACT_PKCS11_MODULE"))
	if err := ctx.Initialize(); err != nil {
		return err
	}
	defer ctx.Destroy()
	defer ctx.Finalize()
	slots, err := ctx.GetSlotList(true)
	if err != nil || len(slots) == 0 {
		return fmt.Errorf("no token: %v", err)
	}
	sess, err := ctx.OpenSession(slots[0], p11.CKF_SERIAL_SESSION|p11.CKF_RW_SESSION)
	if err != nil {
		return err
	}
	defer ctx.CloseSession(sess)
	pin := os.Getenv("HSM_PIN")
	if err := ctx.Login(sess, p11.CKU_USER, pin); err != nil {
		return err
	}
	find := func(class uint) []p11.ObjectHandle {
		tmpl := []*p11.Attribute{p11.NewAttribute(p11.CKA_LABEL, args[1])}
		if class != 0 {
			tmpl = append(tmpl, p11.NewAttribute(p11.CKA_CLASS, class))
		}
		ctx.FindObjectsInit(sess, tmpl)
		objs, _, _ := ctx.FindObjects(sess, 100)
		ctx.FindObjectsFinal(sess)
		return objs
	}
	switch args[0] {
	case "delete":
		objs := find(0)
		if len(objs) == 0 {
			return fmt.Errorf("no object labelled %s", args[1])
		}
		for _, o := range objs {
			if err := ctx.DestroyObject(sess, o); err != nil {
				return err
			}
		}
		return nil
	case "replace-private":
		priv := find(p11.CKO_PRIVATE_KEY)
		if len(priv) != 1 {
			return fmt.Errorf("%d private keys labelled %s", len(priv), args[1])
		}
		attrs, err := ctx.GetAttributeValue(sess, priv[0], []*p11.Attribute{p11.NewAttribute(p11.CKA_ID, nil)})
		if err != nil {
			return err
		}
		if err := ctx.DestroyObject(sess, priv[0]); err != nil {
			return err
		}
		other, _ := signer.Generate(signer.ES256, 0)
		der, _ := x509.MarshalPKCS8PrivateKey(other)
		dir, err := os.MkdirTemp("", "pact-hsm")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		f := filepath.Join(dir, "other-key.pem")
		if err := os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
			return err
		}
		out, err := exec.Command("softhsm2-util", "--import", f, "--token", os.Getenv("HSM_TOKEN"), "--label", args[1],
			"--id", hex.EncodeToString(attrs[0].Value), "--pin", pin, "--no-public-key", "--force").CombinedOutput()
		if err != nil {
			return fmt.Errorf("softhsm2-util --import: %v: %s", err, out)
		}
		return nil
	}
	return errors.New("usage: pact-hsm delete|replace-private LABEL")
}
