package main

import "fmt"

// inputRows measures the chat's input (issue 19): a keystroke with 50 KB in 500
// lines in the input, side by side with one line: at most 16 ms, and flat; and
// (issue 31) a 50 KB paste without bracketed paste, until it is all in the input.
func inputRows() ([]row, error) {
	ns, err := gobench("./tui", "^BenchmarkKeystrokeInput$", "1s")
	if err != nil {
		return nil, err
	}
	big, one := ns["BenchmarkKeystrokeInput/50KB"], ns["BenchmarkKeystrokeInput/1line"]
	rows := []row{{name: "5''. TUI keystroke, 50 KB / 500 lines in the input (ms)", value: fmt.Sprintf("%.3f ms vs %.3f ms with one line", big/1e6, one/1e6), measured: big / 1e6, target: 16}}
	if one > 0 {
		rows = append(rows, row{name: "5'''. TUI keystroke, 50 KB input vs one line", value: fmt.Sprintf("%.3f ms vs %.3f ms", big/1e6, one/1e6), ratio: big / one, target: 2})
	}
	// Issue 31 (4): it took 4–15 s, one key event per character.
	ps, err := gobench("./tui", "^BenchmarkPaste50KB$", "10x")
	if err != nil {
		return rows, err
	}
	paste := ps["BenchmarkPaste50KB"]
	rows = append(rows, row{name: "5''''. TUI 50 KB paste without bracketed paste, until all in the input (ms)", value: fmt.Sprintf("%.1f ms", paste/1e6), measured: paste / 1e6, target: 250})
	return rows, nil
}
