package discovery

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"strconv"
	"testing"

	"github.com/gowebpki/jcs"
)

// The examples of RFC 8785, written out here: §3.2.2 (values), §3.2.3
// (property sorting by UTF-16 code units) and Appendix B (numbers).

func TestRFC8785_3_2_2_SerializationOfPrimitiveData(t *testing.T) {
	in := `{
  "numbers": [333333333.33333329, 1E30, 4.50,
              2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`
	want := `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`
	got, err := jcs.Transform([]byte(in))
	if err != nil || string(got) != want {
		t.Fatalf("got %s, %v\nwant %s", got, err, want)
	}
}

func TestRFC8785_3_2_3_SortingOfObjectProperties(t *testing.T) {
	in := `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`
	want := "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\"," +
		"\"\u20ac\":\"Euro Sign\",\"\U0001F600\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}"
	got, err := jcs.Transform([]byte(in))
	if err != nil || string(got) != want {
		t.Fatalf("got %q, %v\nwant %q", got, err, want)
	}
}

func TestRFC8785_3_2_4_UTF8Generation(t *testing.T) {
	// "Euro Sign" as a literal and as an escape canonicalise alike, as UTF-8.
	got, err := jcs.Transform([]byte(`{"a":"\u20ac","b":"€"}`))
	want := "{\"a\":\"\u20ac\",\"b\":\"\u20ac\"}"
	if err != nil || string(got) != want || hex.EncodeToString(got[6:9]) != "e282ac" {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
}

func TestRFC8785_AppendixB_NumberSerialization(t *testing.T) {
	for _, v := range []struct{ ieee, want string }{
		{"0000000000000000", "0"},
		{"8000000000000000", "0"}, // minus zero
		{"0000000000000001", "5e-324"},
		{"8000000000000001", "-5e-324"},
		{"7fefffffffffffff", "1.7976931348623157e+308"},
		{"ffefffffffffffff", "-1.7976931348623157e+308"},
		{"4340000000000000", "9007199254740992"},
		{"c340000000000000", "-9007199254740992"},
		{"4430000000000000", "295147905179352830000"},
		{"44b52d02c7e14af5", "9.999999999999997e+22"},
		{"44b52d02c7e14af6", "1e+23"},
		{"44b52d02c7e14af7", "1.0000000000000001e+23"},
		{"444b1ae4d6e2ef4e", "999999999999999700000"},
		{"444b1ae4d6e2ef4f", "999999999999999900000"},
		{"444b1ae4d6e2ef50", "1e+21"},
		{"3eb0c6f7a0b5ed8c", "9.999999999999997e-7"},
		{"3eb0c6f7a0b5ed8d", "0.000001"},
		{"41b3de4355555553", "333333333.3333332"},
		{"41b3de4355555554", "333333333.33333325"},
		{"41b3de4355555555", "333333333.3333333"},
		{"41b3de4355555556", "333333333.3333334"},
		{"41b3de4355555557", "333333333.33333343"},
		{"becbf647612f3696", "-0.0000033333333333333333"},
		{"43143ff3c1cb0959", "1424953923781206.2"},
	} {
		b, _ := hex.DecodeString(v.ieee)
		f := math.Float64frombits(binary.BigEndian.Uint64(b))
		in := "[" + strconv.FormatFloat(f, 'g', -1, 64) + "]"
		got, err := jcs.Transform([]byte(in))
		if err != nil || string(got) != "["+v.want+"]" {
			t.Errorf("%s (%s): got %s, %v; want [%s]", v.ieee, in, got, err, v.want)
		}
	}
}

func TestRFC8785_AppendixB_NaNAndInfinityAreRefused(t *testing.T) {
	for _, in := range []string{"[NaN]", "[Infinity]", "[1e400]"} {
		if got, err := jcs.Transform([]byte(in)); err == nil {
			t.Errorf("%s canonicalised to %s; want an error", in, got)
		}
	}
}

func TestA2A_8_4_1_SigningInputDropsSignaturesAndIgnoresLayout(t *testing.T) {
	a, err := SigningInput([]byte(`{"name":"X","b":[1.0, 2],"signatures":[{"protected":"e30","signature":"AA"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := SigningInput([]byte("{ \"b\" : [1, 2e0],\n \"name\" : \"X\" }"))
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != `{"b":[1,2],"name":"X"}` || string(a) != string(b) {
		t.Fatalf("signing inputs %s and %s; want both {\"b\":[1,2],\"name\":\"X\"}", a, b)
	}
	c, _ := SigningInput([]byte(`{"name":"Y","b":[1,2]}`))
	if string(c) == string(a) {
		t.Fatal("a changed card has the same signing input")
	}
}
