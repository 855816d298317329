package tui

import (
	"os"
	"testing"
	"time"
)

func TestIncompleteTail(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"abc", 0},
		{"ab\xe6", 1},
		{"ab\xe6\x97", 2},
		{"ab日", 0},
		{"ab\xf0\x9f\x98", 3},
		{"ab\xc3", 1},
		{"ab\xc3\xa9", 0},
		{"\x1b]11;rgb:1e1e/", 14},
		{"x\x1b]11;rgb:1e1e/1e1e/1e1e\x1b\\", 0},
		{"x\x1b]11;rgb:1e1e/1e1e/1e1e\a", 0},
		{"\x1b]", 0},  // Alt+]: a key
		{"\x1b]a", 0}, // Alt+] then a
		{"\x1b", 0},   // Esc
	} {
		if got := incompleteTail([]byte(c.in)); got != c.want {
			t.Errorf("incompleteTail(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

// A character whose bytes arrive in two reads far apart (longer than the decoder's 50 ms
// escape timeout) reaches the decoder whole.
func TestPendingReaderKeepsSplitCharacter(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	r := wrapInput(pr)
	go func() {
		pw.Write([]byte("a\xe6\x97"))
		time.Sleep(100 * time.Millisecond)
		pw.Write([]byte("\xa5b"))
	}()
	var got []byte
	buf := make([]byte, 4096)
	for len(got) < len("a日b") {
		n, err := r.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 && string(buf[:n]) == "a\xe6" {
			t.Fatal("a read ended inside a character")
		}
		got = append(got, buf[:n]...)
	}
	if string(got) != "a日b" {
		t.Fatalf("read %q", got)
	}
}
