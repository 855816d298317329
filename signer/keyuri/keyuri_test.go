package keyuri

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseAcceptsEachKindAndRoundTrips(t *testing.T) {
	for in, want := range map[string]URI{
		"":                                Default,
		"keyring:":                        Default,
		"pkcs11:token=pact;object=pa-key": {Kind: PKCS11, Token: "pact", Object: "pa-key"},
		"pkcs11:token=My%20Token;object=k;id=%01%A2?module-path=/usr/lib/softhsm/libsofthsm2.so": {
			Kind: PKCS11, Token: "My Token", Object: "k", ID: []byte{0x01, 0xa2}, ModulePath: "/usr/lib/softhsm/libsofthsm2.so"},
		"pkcs11:serial=0123abcd;id=%05;type=private": {Kind: PKCS11, Serial: "0123abcd", ID: []byte{5}},
		"awskms:": {Kind: AWSKMS},
		"awskms:1234abcd-12ab-34cd-56ef-1234567890ab":                  {Kind: AWSKMS, KeyID: "1234abcd-12ab-34cd-56ef-1234567890ab"},
		"awskms:mrk-1234abcd12ab34cd56ef1234567890ab":                  {Kind: AWSKMS, KeyID: "mrk-1234abcd12ab34cd56ef1234567890ab"},
		"awskms:alias/pact-signing":                                    {Kind: AWSKMS, KeyID: "alias/pact-signing"},
		"awskms:arn:aws:kms:eu-west-2:111122223333:key/1234abcd-12ab":  {Kind: AWSKMS, KeyID: "arn:aws:kms:eu-west-2:111122223333:key/1234abcd-12ab"},
		"awskms:arn:aws-us-gov:kms:us-gov-west-1:111122223333:alias/x": {Kind: AWSKMS, KeyID: "arn:aws-us-gov:kms:us-gov-west-1:111122223333:alias/x"},
	} {
		got, err := Parse(in)
		if err != nil {
			t.Errorf("Parse(%q): %v", in, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Parse(%q) = %+v, want %+v", in, got, want)
		}
		again, err := Parse(got.String())
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("Parse(%q.String() = %q) = %+v, %v", in, got.String(), again, err)
		}
	}
}

// Each bad URI is refused with one sentence saying what is wrong; a PIN
// is never accepted in a URI (it would be written to the profile).
func TestParseRefusesWithOneSentence(t *testing.T) {
	for in, says := range map[string]string{
		"pa-key":                                      "not a key URI",
		"file:/tmp/key":                               "unknown key URI scheme",
		"keyring:x":                                   "takes nothing",
		"pkcs11:object=k":                             "exactly one of token",
		"pkcs11:token=a;serial=b;object=k":            "exactly one of token",
		"pkcs11:token=a":                              "object=LABEL",
		"pkcs11:token=a;object=k;manufacturer=x":      "does not understand the attribute",
		"pkcs11:token=a;object=k;object=j":            "appears twice",
		"pkcs11:token=a;object=%zz":                   "percent-encoded",
		"pkcs11:token=a;object=k;type=cert":           "type=private",
		"pkcs11:token=a;object=k?pin-value=1234":      "never goes in a key URI",
		"pkcs11:token=a;object=k?pin-source=file:/p":  "never goes in a key URI",
		"pkcs11:token=a;object=k?module-path=lib.so":  "absolute path",
		"pkcs11:token=a;object=k?module-name=softhsm": "does not understand the query attribute",
		"awskms:not a key":                            "does not name a KMS key",
		"awskms:alias/aws/ebs":                        "AWS managed keys",
		"awskms:arn:aws:s3:::bucket":                  "does not name a KMS key",
	} {
		_, err := Parse(in)
		if err == nil {
			t.Errorf("Parse(%q) accepted", in)
			continue
		}
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), says) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) = %v, want ErrInvalid saying %q on one line", in, err, says)
		}
		if strings.Contains(err.Error(), "1234") {
			t.Errorf("Parse(%q) repeats the PIN: %v", in, err)
		}
	}
}

func TestDescribeSaysWhereTheKeyLives(t *testing.T) {
	u, _ := Parse("pkcs11:token=pact;object=pa-key;id=%01")
	if got := u.Describe(); got != `token "pact", object "pa-key", id 01` {
		t.Errorf("Describe = %q", got)
	}
	u, _ = Parse("awskms:alias/x")
	if got := u.Describe(); got != "AWS KMS key alias/x" || !u.Held() {
		t.Errorf("Describe = %q held %v", got, u.Held())
	}
	if Default.Held() || Default.Describe() != "" {
		t.Error("the keyring key is held elsewhere")
	}
}
