package tui

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// Run with: go test ./tui -run '^$' -bench . -benchmem

func benchModel(b testing.TB, n int) Model {
	f := newFake()
	f.history = manyTurns(n)
	m := New(f, testOptions())
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	_ = m.View().Content
	return m
}

// BenchmarkKeystroke is one typed rune: Update + View, with n turns in the scrollback.
func BenchmarkKeystroke(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			m := benchModel(b, n)
			k := tea.KeyPressMsg{Code: 'a', Text: "a"}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if i%64 == 63 {
					b.StopTimer()
					m.c.in.reset()
					b.StartTimer()
				}
				m.Update(k)
				_ = m.View().Content
			}
		})
	}
}

// BenchmarkResize is one window resize (alternating widths): Update + View.
func BenchmarkResize(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			m := benchModel(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				m.Update(tea.WindowSizeMsg{Width: 100 + i%2*17, Height: 40 - i%2*7})
				_ = m.View().Content
			}
		})
	}
}

// heapAfterLoad returns the bytes of heap in use that a chat with n turns holds after
// opening, drawing, paging from the first turn and caching every turn's rendering.
func heapAfterLoad(n int) (uint64, Model) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m := benchModel(nil, n)
	m.Update(press("ctrl+home"))
	for range 200 {
		m.Update(press("pgdown"))
		_ = m.View().Content
	}
	for i := range m.c.sb.entries { // worst case: every turn's rendering cached
		m.c.sb.lines(i, m.c.width)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if after.HeapInuse < before.HeapInuse {
		return 0, m
	}
	return after.HeapInuse - before.HeapInuse, m
}

// TestHeap10000Turns: resident memory with 10,000 turns stays under 60 MB.
func TestHeap10000Turns(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates a large conversation")
	}
	used, m := heapAfterLoad(10000)
	t.Logf("heap in use with 10,000 turns: %.1f MB", float64(used)/(1<<20))
	if used > 60<<20 {
		t.Fatalf("heap in use %d bytes > 60 MB", used)
	}
	if len(m.c.sb.entries) != 10000 {
		t.Fatalf("model holds %d turns", len(m.c.sb.entries))
	}
}

// BenchmarkHeap10000 reports the heap held by a chat of 10,000 turns (heap-MB).
func BenchmarkHeap10000(b *testing.B) {
	var used uint64
	for range b.N {
		used, _ = heapAfterLoad(10000)
	}
	b.ReportMetric(float64(used)/(1<<20), "heap-MB")
}

// BenchmarkKeystrokeInput is one typed rune (Update + View) with what the input holds:
// one line, or a paste of 50 KB in 500 lines (issue 19: the cost must not grow with it).
// The rune is typed in the middle of the text, then deleted, so the input keeps its size.
func BenchmarkKeystrokeInput(b *testing.B) {
	line := strings.Repeat("the quick brown fox jumps over the lazy dog ", 2) + "0123456789"
	for _, c := range []struct {
		name  string
		lines int
	}{{"1line", 1}, {"50KB", 500}} {
		b.Run(c.name, func(b *testing.B) {
			m := benchModel(b, 100)
			text := strings.TrimSuffix(strings.Repeat(line+"\n", c.lines), "\n")
			m.Update(tea.PasteMsg{Content: text})
			for range c.lines / 2 {
				m.Update(tea.KeyPressMsg{Code: tea.KeyUp})
			}
			_ = m.View().Content
			k := tea.KeyPressMsg{Code: 'a', Text: "a"}
			bs := tea.KeyPressMsg{Code: tea.KeyBackspace}
			b.ReportMetric(float64(len(m.c.in.value())), "input-bytes")
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if i%2 == 0 {
					m.Update(k)
				} else {
					m.Update(bs)
				}
				_ = m.View().Content
			}
		})
	}
}

// pasteWatch is the chat with a signal: done is closed once the input holds want lines and
// its last line is lastLen bytes long.
type pasteWatch struct {
	Model
	want, lastLen int
	done          chan struct{}
}

func (w pasteWatch) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	w.Model.Update(msg)
	if ls := w.c.in.lines; len(ls) == w.want && len(ls[len(ls)-1]) == w.lastLen {
		select {
		case <-w.done:
		default:
			close(w.done)
		}
	}
	return w, nil
}

// BenchmarkPaste50KB is a 50 KB paste in 500 lines without bracketed paste (issue 31: it
// took 4–15 s to appear, one key event per character), written to the terminal in 4 KB
// pieces: the time from the first byte until the whole text is in the input, through the
// real reader, decoder and chat (bubbletea's Program, output discarded).
func BenchmarkPaste50KB(b *testing.B) {
	line := strings.Repeat("the quick brown fox jumps over the lazy dog ", 2) + "0123456789"
	text := strings.TrimSuffix(strings.Repeat(line+"\r", 500), "\r")
	b.ReportMetric(float64(len(text)), "paste-bytes")
	for range b.N {
		b.StopTimer()
		pr, pw, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		w := pasteWatch{Model: New(newFake(), testOptions()), want: 500, lastLen: len(line), done: make(chan struct{})}
		p := tea.NewProgram(w, tea.WithInput(wrapInput(pr)), tea.WithOutput(io.Discard), tea.WithoutSignalHandler())
		ran := make(chan struct{})
		go func() { defer close(ran); p.Run() }()
		b.StartTimer()
		for i := 0; i < len(text); i += 4096 {
			pw.Write([]byte(text[i:min(i+4096, len(text))]))
		}
		select {
		case <-w.done:
		case <-time.After(time.Minute):
			b.Fatal("the paste was not in the input within a minute")
		}
		b.StopTimer()
		p.Kill()
		<-ran
		pr.Close()
		pw.Close()
	}
}
